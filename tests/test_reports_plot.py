"""The divergence figure, opened and looked at through matplotlib's objects."""

from __future__ import annotations

import sys

import pytest

import fixtures.bugs.class03_scaler_recreated as c03
from resumecheck.cli import main
from resumecheck.engine import verify
from resumecheck.errors import InvalidArgument, MissingExtra
from resumecheck.plot import (
    BAND_LABEL, DIFFERS, NOT_COMPARED, NOT_RUN, SAME, STRIP_ROWS, divergence_figure, save_plot,
    strip_matrix,
)
from tests.fuzz_runs import C15, default_fuzz

pytestmark = pytest.mark.e2e

ROW = {label: i for i, (label, _) in enumerate(STRIP_ROWS)}


@pytest.fixture(scope="module")
def report():
    # class 3: the GradScaler is re-created after load; resume at 2 is before the
    # first epoch boundary, so dropping sampler_epoch is a blind spot there.
    return verify(c03.BUGGY, resume_at=[2], drop=["sampler_epoch", "rng"], noise_seeds=2)


@pytest.fixture(scope="module")
def figure(report):
    return divergence_figure(report)


def _axes(fig, gid):
    found = [ax for ax in fig.axes if ax.get_gid() == gid]
    assert len(found) == 1, [ax.get_gid() for ax in fig.axes]
    return found[0]


def _line(ax, label):
    lines = [line for line in ax.get_lines() if line.get_label() == label]
    assert len(lines) == 1, [line.get_label() for line in ax.get_lines()]
    return lines[0]


def test_the_seeded_bug_is_what_the_figure_shows(report):
    full = report.full_resume
    assert full.verdict == "diverged" and full.first_divergent_quantity == "loss scale"
    # the program's own full resume, the engine's (identical), then the ablations
    assert [(r.dropped, r.blind_spot) for r in report.runs] == [
        ([], False), ([], False), (["sampler_epoch"], True), (["rng"], False)]
    assert report.label_of(report.runs[1]) == "full resume (engine)"


def test_loss_panel_has_reference_runs_band_restart_and_first_divergence(report, figure):
    from matplotlib.collections import PolyCollection  # not at collection: every worker pays it

    ax = _axes(figure, "loss")
    n = report.steps
    ref = _line(ax, "reference")
    assert list(ref.get_xdata()) == list(range(1, n + 1))
    # under a run that equals it, the reference shows as a black edge on both sides
    widest_run = max(line.get_linewidth() for line in ax.get_lines()
                     if line.get_label().endswith(")") and line is not ref)
    assert ref.get_linewidth() >= 2.5 * widest_run and ref.get_zorder() < 4
    assert list(ref.get_ydata()) == pytest.approx(report.reference_loss)

    full = report.full_resume
    run_line = _line(ax, "full resume (own save/load) (diverged)")
    traj = full.trajectory
    assert list(run_line.get_xdata()) == traj.steps and list(run_line.get_ydata()) == traj.loss
    for run in report.runs[1:]:
        _line(ax, f"{report.label_of(run)} ({run.verdict})")

    # the restart: a dashed line between step k and k+1
    restarts = [line for line in ax.get_lines() if line.get_gid() == "resume:2"]
    assert len(restarts) == 1 and list(restarts[0].get_xdata()) == [2.5, 2.5]

    # the band is the one the plausible/gross call uses: reference ± noise.band after k
    bands = [c for c in ax.collections if c.get_label() == BAND_LABEL]
    assert len(bands) == 1 and isinstance(bands[0], PolyCollection)
    band, (first, last) = report.noise["band"], report.noise["steps"]
    assert band > 0 and (first, last) == (report.resume_at[0] + 1, n)
    xy = bands[0].get_paths()[0].vertices
    assert min(xy[:, 0]) == first and max(xy[:, 0]) == last
    window = report.reference_loss[first - 1:last]
    # (a loss never below 0 gets a band that stops at 0: a trial saw it reach -0.5)
    assert min(xy[:, 1]) == pytest.approx(max(min(window) - band, 0.0))
    assert max(xy[:, 1]) == pytest.approx(max(window) + band)
    for run in report.runs:  # the figure agrees with the verdict
        if run.plausible is not None:
            inside = all(abs(a - report.reference_loss[s - 1]) <= band
                         for s, a in zip(run.trajectory.steps, run.trajectory.loss) if s >= first)
            assert inside == run.plausible

    # every diverged run has its first divergent step marked on its own curve, but for
    # a run whose steps all matched (its end state alone differs: no loss to mark)
    marks = {line.get_gid(): line for line in ax.get_lines()
             if (line.get_gid() or "").startswith("first divergence:")}
    diverged = [r for r in report.runs if r.verdict == "diverged"
                and not r.first_divergent_quantity.startswith("state of")]
    assert set(marks) == {f"first divergence:{report.label_of(r)}" for r in diverged}
    mark = marks[f"first divergence:{report.label_of(full)}"]
    step = full.first_divergent_step
    assert list(mark.get_xdata()) == [step]
    assert list(mark.get_ydata()) == [traj.loss[step - traj.first_step]]
    assert mark.get_marker() == "X"


def test_one_strip_per_run_coloured_where_it_differs(report, figure):
    from matplotlib.patches import Rectangle

    n = report.steps
    for run in report.runs:
        sax = _axes(figure, f"strip:{report.label_of(run)}")
        assert [t.get_text() for t in sax.get_yticklabels()] == [label for label, _ in STRIP_ROWS]
        image = sax.images[0].get_array()
        assert image.shape == (len(STRIP_ROWS), n)
        assert (image == strip_matrix(run, n)).all()

    full = report.full_resume
    strip = _axes(figure, f"strip:{report.label_of(full)}").images[0].get_array()
    k, first = report.resume_at[0], full.first_divergent_step
    # the first divergent quantity (the loss scale) is red at the first divergent step,
    # nothing differs before it, and the run's own first half is identical
    assert strip[ROW["loss scale"], first - 1] == DIFFERS
    assert (strip[:, : first - 1] == SAME).all()
    assert first == k + 1
    boxes = [p for p in _axes(figure, f"strip:{report.label_of(full)}").patches
             if isinstance(p, Rectangle) and p.get_gid() == "first divergence"]
    assert len(boxes) == 1 and boxes[0].get_xy() == (first - 0.5, ROW["loss scale"] - 0.5)

    blind = next(r for r in report.runs if r.dropped == ["sampler_epoch"])
    strip = _axes(figure, f"strip:{report.label_of(blind)}").images[0].get_array()
    assert (strip[:, :k] == NOT_RUN).all()  # an ablation restarts from the engine's capture
    assert (strip[:, k:] == SAME).all()  # a blind spot: nothing differs

    rng = next(r for r in report.runs if r.dropped == ["rng"])
    strip = _axes(figure, f"strip:{report.label_of(rng)}").images[0].get_array()
    assert strip[ROW["loss"], rng.first_divergent_step - 1] == DIFFERS


def test_blind_spots_and_failed_rows_are_listed(report, figure):
    notes = [t.get_text() for t in figure.texts if t.get_gid() == "notes"]
    assert len(notes) == 1 and "blind spots" in notes[0] and "sampler_epoch" in notes[0]
    # a failed (or, later, inconclusive) run has no trajectory: listed, not drawn
    from dataclasses import replace

    failed = replace(report.runs[3], verdict="failed", failure="load() raised KeyError: 'x'",
                     trajectory=None)
    other = replace(report, runs=[*report.runs[:3], failed])
    fig = divergence_figure(other)
    text = [t.get_text() for t in fig.texts if t.get_gid() == "notes"][0]
    assert "failed: drop rng: load() raised KeyError: 'x'" in text
    assert not [ax for ax in fig.axes if ax.get_gid() == "strip:drop rng"]


def test_fuzz_figure_shows_the_minimal_failing_schedule(tmp_path):
    result = default_fuzz(C15)  # the search tests/test_fuzz.py reads (once per process)
    assert result.found and len(result.failure.resume_at) == 2
    fig = divergence_figure(result)
    ax = _axes(fig, "loss")
    assert list(_line(ax, "reference").get_ydata()) == pytest.approx(result.reference_loss)
    run = result.failure
    assert {line.get_gid() for line in ax.get_lines() if line.get_gid()} >= {
        f"resume:{k}" for k in run.resume_at}
    assert _axes(fig, f"strip:{run.label}").images[0].get_array()[
        ROW["data"], run.first_divergent_step - 1] == DIFFERS
    assert not [c for c in ax.collections if c.get_label() == BAND_LABEL]  # no seeds
    path = save_plot(result, tmp_path / "fuzz.svg")
    assert path.read_text().lstrip().startswith("<?xml")


def test_cli_run_plot_writes_a_png(tmp_path, capsys):
    out = tmp_path / "out.png"
    code = main(["run", "fixtures/bugs/class01_scheduler_not_saved.py:BUGGY", "--drop", "none",
                 "--noise-seeds", "0", "--plot", str(out)])
    err = capsys.readouterr().err
    assert code == 1
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"divergence plot written to {out}" in err


def test_plot_refuses_other_formats(report, tmp_path, capsys):
    assert main(["run", "--plot", str(tmp_path / "out.pdf")]) == 2  # before any run
    assert "must end in .png or .svg" in capsys.readouterr().err
    with pytest.raises(InvalidArgument, match="plot="):
        save_plot(report, tmp_path / "x.jpg")
    assert not list(tmp_path.iterdir())


@pytest.fixture
def no_matplotlib(monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


def test_missing_matplotlib_names_the_extra(no_matplotlib, report, tmp_path, capsys):
    with pytest.raises(MissingExtra, match=r"pip install 'resumecheck\[plot\]'"):
        divergence_figure(report)
    assert main(["run", "--plot", str(tmp_path / "out.png")]) == 2
    err = capsys.readouterr().err
    assert "--plot needs matplotlib" in err and "resumecheck[plot]" in err
    assert not (tmp_path / "out.png").exists()


def test_what_was_not_compared_is_not_drawn_identical_and_an_end_state_gets_no_cross():
    """Trial 422: a program without a loss scaler had its loss-scale strip drawn
    all green ("identical"), and a run whose steps all matched, its end state
    alone differing, a first-divergence cross on its loss."""
    from fixtures.hostile import programs

    report = verify(programs.PLAIN, drop=["global_step"], noise_seeds=0,
                    check_determinism=False)
    [run] = [r for r in report.runs if r.dropped == ["global_step"]]
    assert run.verdict == "diverged" and run.first_divergent_quantity.startswith("state of")
    figure = divergence_figure(report)
    k = report.resume_at[0]
    for shown in (run, report.full_resume):
        strip = _axes(figure, f"strip:{report.label_of(shown)}").images[0].get_array()
        assert (strip[ROW["loss scale"], k:] == NOT_COMPARED).all()
        assert (strip[ROW["loss"], k:] == SAME).all() and (strip[ROW["params"], k:] == SAME).all()
    marks = [line.get_gid() for line in _axes(figure, "loss").get_lines()]
    assert f"first divergence:{report.label_of(run)}" not in marks
    assert run.to_json()["trajectory"]["compared"] == ["data", "lr", "loss", "grad", "skipped",
                                                        "param"]


def test_a_scalers_row_that_compared_skipped_steps_alone_is_labelled_so():
    """Trial 851: a loss scale of the program's own, apart for six steps, was
    drawn green in the row "loss scale" ("identical"), where only whether each
    step was skipped had been compared; its scale was never traced."""
    from resumecheck.plot import strip_labels
    from resumecheck.report import RunResult
    from resumecheck.trajectory import Trajectory

    def labels(compared: list[str]) -> list[str]:
        run = RunResult(dropped=[], resume_at=[10], verdict="diverged")
        run.trajectory = Trajectory(first_step=11, loss=[1.0] * 10, differs={"skipped": [18]},
                                    compared=compared)
        return strip_labels(run)

    plain = ["data", "lr", "loss", "grad", "skipped", "param"]
    assert labels(plain)[1] == "skipped steps"
    run = RunResult(dropped=[], resume_at=[10], verdict="identical")  # (no skip differs: white)
    run.trajectory = Trajectory(first_step=11, loss=[1.0] * 10, compared=plain)
    assert strip_labels(run)[1] == "loss scale"
    assert labels(["data", "scale", *plain[1:]])[1] == "loss scale"
    assert strip_labels(RunResult(dropped=[], resume_at=[10], verdict="failed"))[1] == \
        "loss scale"
