"""A cache the checkpoint leaves out is said lost whatever its entries hold
(trial 178: a lazily filled cache of tuples of tensors read as nothing lost,
the same cache of bare tensors as "your checkpoint loses it"), its entries in
one line (fourteen keys made fourteen lines) (fixtures/trust/lost_caches.py)."""

from __future__ import annotations

import warnings

import pytest

from resumecheck import verify
from resumecheck.assertions import require_equivalent
from resumecheck.errors import LostStateWarning
from resumecheck.phrases import lost_uncompared, merge_items, paths_said

SPEC = "fixtures.trust.lost_caches:"
FAST = {"noise_seeds": 0, "drop": "none", "check_determinism": False}


@pytest.mark.parametrize("name", ["TUPLES", "TENSORS"])
def test_a_lost_cache_is_said_lost_whatever_its_entries_hold(name):
    report = verify(SPEC + name, **FAST)
    assert report.equivalent  # (every step matches: no key comes back after the resume point)
    lost = lost_uncompared(report.undeclared)
    matrices = [p for p in lost if p.startswith("matrices[")]
    assert matrices == ["matrices[(3, 0)], [(4, 1)], [(3, 2)], [(4, 3)]"], lost
    assert ("samples" if name == "TENSORS" else "samples[(3, 0)], [(4, 1)], [(3, 2)], [(4, 3)]") \
        in lost
    [line] = [u for u in report.undeclared if u.startswith("matrices[")]
    assert "(each of these 4 entries: tuple: 2 tensors, 21 to 32 values, that the run " in line
    assert line.endswith("your own resume (save/load) ends without it (nothing there made it "
                         "again): your checkpoint loses it, unless it is not state (a log, a "
                         "timer, a cache the program fills again when it needs it: name it in "
                         "Target(not_state=...))")
    headline = report.render().splitlines()[1]
    assert "`matrices[...]` (4 entries)" in headline, headline
    assert ("`samples`" if name == "TENSORS" else "`samples[...]` (4 entries)") in headline
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        require_equivalent(report)
    [warned] = [w.message for w in caught if isinstance(w.message, LostStateWarning)]
    assert "matrices[...] (4 entries)" in str(warned)


def test_entries_of_a_dict_said_alike_but_for_their_sizes_are_one_line():
    said = "(tuple: {} tensors, {} values, that the run changed ...); your own resume ends ..."
    entries = [f"c[(3, 0)] {said.format(2, 21)}", f"c[(4, 1)] {said.format(2, 32)}",
               f"c[(5, 2)] {said.format(3, 40)}", "d['a'] (int: 0 at the build, 4 at the end)",
               "log[0] (float: ...)"]
    assert merge_items(entries) == [
        "c[(3, 0)], [(4, 1)], [(5, 2)] (each of these 3 entries: tuple: 2 to 3 tensors, 21 to 40 "
        "values, that the run changed ...); your own resume ends ...",
        "d['a'] (int: 0 at the build, 4 at the end)", "log[0] (float: ...)"]
    # (a key of its own, or words that differ beyond the sizes, stay lines of their own)
    apart = [f"c[(3, 0)] {said.format(2, 21)}", "c[(4, 1)] (tuple: 2 tensors, 9 values, "
             "held by a declared component ...)"]
    assert merge_items(apart) == apart
    assert paths_said(["ema", "c[(3, 0)], [(4, 1)]", "c[(5, 2)]", "log[0..14]"]) == \
        "`ema`, `c[...]` (3 entries), `log[0..14]`"
    assert paths_said(["c[(3, 0)]"], quote="") == "c[(3, 0)]"


def test_strict_exits_1_where_the_own_resume_ends_otherwise_in_undeclared_state(capsys):
    """Trials 180, 183, 186: a checkpoint that loses undeclared state exited 0,
    and a pipeline reads the exit code: ``--strict`` fails it, saying why; a
    resume that ends alike passes ``--strict`` too."""
    from resumecheck.cli import main

    fast = ["--drop", "none", "--noise-seeds", "0", "--no-determinism-check"]
    assert main(["run", SPEC + "TUPLES", *fast]) == 0
    capsys.readouterr()
    assert main(["run", SPEC + "TUPLES", *fast, "--strict"]) == 1
    err = capsys.readouterr().err
    assert ("--strict: your own resume ends otherwise with matrices[...] (4 entries), "
            "samples[...] (4 entries), which no component declares: exit 1") in err
    assert main(["run", "fixtures.trust.deque_maxlen:CORRECT", *fast, "--strict"]) == 0
