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
from resumecheck.phrases import READ_BY_NO_STEP, lost_uncompared, merge_items, paths_said

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
                         "Target(not_state=...))" + READ_BY_NO_STEP)
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
            "samples[...] (4 entries), which no declared component's state holds: exit 1") in err
    # (trial 381: the one failure without a command that reproduces it)
    assert err.rstrip().endswith(f"; reproduce: resumecheck run {SPEC}TUPLES --steps 8 "
                                 "--resume-at 4 --drop none --noise-seeds 0 --isolation "
                                 "inprocess --threads 1 --strict"), err
    assert main(["run", "fixtures.trust.deque_maxlen:CORRECT", *fast, "--strict"]) == 0


@pytest.mark.parametrize("name", ["TOKEN_CACHE", "SHORT_TOKEN_CACHE"])
def test_a_cache_filled_again_in_another_order_is_not_said_lost(name, capsys):
    """A trial: a token cache the resume filled again, alike as a dict but
    inserted in another order, was said lost by the checkpoint, and
    ``--strict`` failed the correct program."""
    from resumecheck.cli import main

    report = verify(SPEC + name, **FAST)
    assert report.equivalent and lost_uncompared(report.undeclared) == []
    if name == "TOKEN_CACHE":  # (the short one's load left it empty, a later step set it
        # again: --strict fails that, as it does a counter that a later evaluation resets)
        assert main(["run", SPEC + name, "--drop", "none", "--noise-seeds", "0",
                     "--no-determinism-check", "--strict"]) == 0
        assert "--strict" not in capsys.readouterr().err


class _BestSetAgain:
    """A best held-out loss every evaluation (each fourth step) improves, kept
    outside the declared components and left out of the checkpoint."""

    def __init__(self, settings: dict) -> None:
        import torch

        torch.manual_seed(0)
        self.x = torch.randn(16, 3)
        self.y = self.x @ torch.tensor([[1.0], [-2.0], [0.5]])
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.05)
        self.step, self.best = 0, float("inf")

    def components(self) -> dict:
        from resumecheck import Attr

        return {"params": self.model, "optimizer": self.opt, "global_step": Attr(self, "step")}

    def train_step(self):
        import torch
        import torch.nn.functional as F

        from resumecheck import StepOutput

        loss = F.mse_loss(self.model(self.x[:8]), self.y[:8])
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.step += 1
        if self.step % 4 == 0:
            with torch.no_grad():
                held_out = F.mse_loss(self.model(self.x[8:]), self.y[8:]).item()
            self.best = min(self.best, held_out)
        return StepOutput(loss=loss.item(), samples=torch.arange(8))

    def save(self, path: str) -> None:
        import torch

        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                    "step": self.step}, path)

    def load(self, path: str) -> None:
        import torch

        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        self.opt.load_state_dict(state["opt"])
        self.step = state["step"]


def test_state_the_load_loses_and_a_later_step_sets_again_is_said_lost(capsys):
    """Trial 180: a callback's best loss its state_dict() left out, beaten by
    the next evaluation: the line read "your own resume ends with it as the
    uninterrupted run did", the headline EQUIVALENT, the row `full resume: ok`."""
    from resumecheck import Target
    from resumecheck.cli import _strict_fails
    from resumecheck.phrases import set_again_uncompared
    from resumecheck.pytest_plugin import _summary_row

    report = verify(Target(factory=_BestSetAgain, steps=10, resume_at=(5,)), **FAST)
    assert report.equivalent
    [line] = report.undeclared
    assert line.endswith(
        "; your own resume held it otherwise right after your load() at step 5 and after step "
        "6, and ends with it as the uninterrupted run did, a later step setting it again: "
        "your checkpoint loses it, which no step here showed, unless it is not state (a log, "
        "a timer: name it in Target(not_state=...)), or the program always sets it anew "
        "before a step reads it (a generator seeded again at each epoch's start)"), line
    assert set_again_uncompared(report.undeclared) == ["best"]
    assert report.render().splitlines()[1] == (
        "full resume: EQUIVALENT in what is compared; not compared, and your own resume held "
        "otherwise after its load, a later step setting it again: `best` (see below)")
    row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": report.to_json()})
    assert "| not compared, lost by your load, set again later: best" in row, row

    class Args:
        strict = True

    assert _strict_fails(Args(), report)
    assert "--strict: your own resume held best otherwise after its load" in capsys.readouterr().err


def test_a_lost_field_of_a_declared_component_is_told_to_return_it_from_its_state():
    """Trial 668: an early stopper's field its state_dict() left out was told,
    in the test's warning, to be declared as a component."""
    from resumecheck.errors import LostStateWarning

    said = str(LostStateWarning("t.py:T", ["early_stop.bad_evals"], "resumecheck run t.py:T"))
    assert "which no declared component's state holds" in said
    # (trial 744: a log warned of on a correct twin, its steps alike)
    assert ("): every step after the restart matched all the same: what differs in it "
            "changed no step here: no step reads it (as none reads a log), or the steps read "
            "it where its other value leads alike") in said, said
    # (trial 860: a counter read modulo 5 at every step, lost at a multiple of 5, was
    # said to be read by no step)
    assert "a later step, another resume point, or an evaluation may show it" in said, said
    assert ("where it is a field of a declared component (its `not compared` line says), "
            "return it from that component's state_dict() and set it in its "
            "load_state_dict(); else declare it as a component") in said, said
