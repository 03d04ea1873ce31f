"""A data position whose load_state_dict() makes anew the generator that the
declared random state holds (trial 862: an IterableDataset built again at the
cursor, with a new shuffle generator). The engine's restore sets random state
last, into the generator held at the build, which the run no longer uses: the
WARNING said "a declared component does not load back its own state" of the
random state, whose load does."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.phrases import NO_LONGER_USED
from resumecheck.report import LOSSY_ONE, STALE_ONE


def _check(name: str):
    from fixtures.trust import generator_made_anew
    return verify(getattr(generator_made_anew, name), drop="none", noise_seeds=0,
                  check_determinism=False)


def test_the_warning_names_the_generator_made_anew_and_which_load_made_it():
    report = _check("SKIPS_DRAWS")
    assert report.outcome == "NOT EQUIVALENT"
    warning = report.incomplete_state_notice() or ""
    assert warning.startswith(STALE_ONE) and LOSSY_ONE not in warning, warning
    assert ("in the engine's restore, `data_cursor`'s load_state_dict() made generator "
            f"'shuffle' anew, and the engine, which restores random state last, set the saved "
            f"state into the one `rng` held at the build, {NO_LONGER_USED}") in warning, warning
    engine = report.engine_resume
    assert ("; the engine restored every declared component, and `rng` went into generators "
            f"{NO_LONGER_USED}, which another component's load made anew (see the WARNING)"
            ) in engine.explanation, engine.explanation
    assert "did not come back" not in engine.explanation
    # the program's own load() left the generator it made anew where it was made: a
    # rerun that puts it right there resumes
    rng = next(f for f in report.full_resume.diagnosis if f.component == "rng")
    assert rng.status == "confirmed" and rng.detail.startswith(
        "generator 'shuffle' differs"), rng.detail
    assert NO_LONGER_USED not in rng.detail


def test_the_plugins_row_says_so_too():
    from resumecheck.pytest_plugin import _engine_why

    report = _check("SKIPS_DRAWS").to_json()
    engine = next(r for r in report["runs"] if r["checkpoint"] == "engine" and not r["dropped"])
    own = next(r for r in report["runs"] if r["checkpoint"] == "program")
    assert _engine_why(engine, own) == "a generator made anew by another component's load"


def test_its_twin_whose_load_draws_the_batches_again_resumes():
    report = _check("REPLAYS")
    assert report.outcome == "EQUIVALENT" and report.engine_resume.verdict == "identical"
