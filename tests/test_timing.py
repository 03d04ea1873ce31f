"""Per-phase step timing."""

import json
import time

import pytest
import torch

from resumecheck import PHASES, PhaseTimer, StepOutput, Target, phase
from resumecheck.cli import main
from resumecheck.phases import FORWARD
from resumecheck.timing import measure


def test_phase_is_a_no_op_without_a_timer():
    ran = []
    with phase(FORWARD):  # no timer: the body runs, nothing is kept for later
        ran.append(True)
        time.sleep(0.001)
    assert ran == [True]
    timer = PhaseTimer(cuda=False, warmup=0)
    with timer:
        with timer.step(1):
            pass
    assert timer.summary()["phases"][FORWARD]["calls"] == 0


def test_timer_records_phases_per_step_and_leaves_warmup_out():
    timer = PhaseTimer(cuda=False, warmup=1)
    with timer:
        for step in range(1, 4):
            with timer.step(step):
                with phase("forward"):
                    time.sleep(0.002)
                with phase("backward"):
                    time.sleep(0.001)
    summary = timer.summary()
    assert summary["steps"] == 2 and summary["warmup"] == 1
    forward = summary["phases"]["forward"]
    assert forward["calls"] == 2 and forward["total_s"] >= 0.004
    assert forward["median_s"] <= forward["p95_s"] + 1e-12
    assert summary["phases"]["barrier"] == {"calls": 0, "total_s": 0.0, "median_s": 0.0,
                                            "p95_s": 0.0, "share": 0.0}
    assert set(summary["phases"]) == set(PHASES)
    assert 0 < forward["share"] < 1


def test_unknown_phase_is_an_error():
    timer = PhaseTimer(cuda=False)
    with pytest.raises(ValueError, match="phases are: data_wait"):
        with timer.phase("fwd"):
            pass


@pytest.mark.e2e
def test_builtin_program_phases_add_up_to_the_step_time():
    # Work outside every phase leaves the same gap in every measurement; a
    # preemption on a loaded machine lands in one of them. So the structure and
    # the rule "phases never cover more than the step" hold in each, and the
    # 10% bound on the gap is asserted on the best of up to three.
    gaps = []
    for _ in range(3):
        rank = measure(steps=20, warmup=2, checkpoint_every=5).ranks[0]
        phases = rank["phases"]
        assert list(phases) == list(PHASES)  # all eight, zeros included
        assert phases["grad_sync"]["calls"] == 0 and phases["barrier"]["calls"] == 0
        assert phases["checkpoint"]["calls"] == 4
        assert phases["forward"]["calls"] == phases["backward"]["calls"] == 40  # 2 micro-steps
        covered = sum(p["total_s"] for p in phases.values())  # none nested here
        assert covered == pytest.approx(rank["phases_total_s"])
        assert 0 < covered <= rank["step_total_s"]
        gaps.append(1 - covered / rank["step_total_s"])
        if gaps[-1] <= 0.10:
            break
    assert min(gaps) <= 0.10, gaps


@pytest.mark.e2e
def test_cli_timing_lists_all_eight_phases(capsys):
    assert main(["timing", "--steps", "5", "--warmup", "1"]) == 0
    out = capsys.readouterr().out
    for name in PHASES:
        assert f"\n{name} " in out
    assert main(["timing", "--steps", "5", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == "resumecheck.timing/1" and data["phases"] == list(PHASES)


class _MarksOnlyItsForward:
    """A one-layer program whose step marks its forward phase only."""

    def __init__(self, config):
        import torch

        self.model = torch.nn.Linear(2, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def components(self):
        return {"params": self.model, "optimizer": self.opt}

    def train_step(self):
        import torch

        with phase("forward"):
            loss = self.model(torch.ones(4, 2)).pow(2).mean()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return loss.detach()


def test_a_phase_never_entered_says_why_instead_of_zeros():
    """A trial: unmarked phases printed as '0 calls 0.000 ms', like a measured zero."""
    from resumecheck import Target
    from resumecheck.timing import measure as measure_target

    text = measure_target(Target(factory=_MarksOnlyItsForward, steps=4), steps=4, warmup=1,
                          checkpoint_every=100).render()
    rows = {line.split()[0]: line for line in text.splitlines()[4:] if line.strip()}
    assert "0.000 ms" not in rows["backward"]
    assert "never entered: mark it in your step with resumecheck.phase(...)" in rows["backward"]
    assert "one process has no gradient sync" in rows["grad_sync"]
    assert "one process waits at no barrier" in rows["barrier"]
    assert "no checkpoint fell in the measured steps" in rows["checkpoint"]
    assert rows["forward"].split()[1] == "4"
    # (a trial was told to mark a host-to-device copy its CPU-only program never makes)
    if not torch.cuda.is_available():
        assert "none: no GPU here, so no host-to-device copy" in rows["host_to_device"]
        assert "mark it" not in rows["host_to_device"]


def test_the_checkpoint_phase_times_the_programs_own_save_where_it_has_one(tmp_path):
    """A trial: a save() that sleeps changed nothing in the checkpoint row, which
    timed the engine's own capture, read as the cost of the user's checkpointing."""
    import os

    import torch

    from resumecheck import Target
    from resumecheck.timing import measure as measure_target

    saved: list[str] = []

    class Saves(_MarksOnlyItsForward):
        def save(self, path):
            os.makedirs(path)  # (a new path each time: a directory it makes)
            torch.save(self.model.state_dict(), os.path.join(path, "model.pt"))
            saved.append(path)

        def load(self, path):
            self.model.load_state_dict(torch.load(os.path.join(path, "model.pt")))

    report = measure_target(Target(factory=Saves, steps=6), steps=6, warmup=0,
                            checkpoint_every=2)
    assert report.checkpoint == "program" and len(saved) == 3
    assert report.ranks[0]["phases"]["checkpoint"]["calls"] == 3
    assert "checkpoint every 2 (your save())" in report.render()
    assert report.to_json()["checkpoint"] == "program"
    assert not any(os.path.exists(p) for p in saved)  # (the scratch directory went)
    builtin = measure(steps=5, warmup=0, checkpoint_every=5)  # (no save(): the engine's)
    assert builtin.checkpoint == "engine"
    assert "(the engine's capture of the declared components)" in builtin.render()


def test_a_step_that_raises_is_the_programs_error_with_its_line_not_a_bug_of_the_check(capsys):
    """A trial: a scheduler stepped past its total steps (timing runs warm-up
    steps beyond --steps) was reported as "a bug in resumecheck or in the
    program under test" with no line; `run` names the program's line."""
    from resumecheck.errors import StepError

    class Stops:
        def __init__(self, settings):
            self.model = torch.nn.Linear(2, 1)
            self.done = 0

        def components(self):
            return {"params": self.model}

        def train_step(self):
            self.done += 1
            if self.done > 3:
                raise ValueError("Tried to step 4 times")
            return StepOutput(loss=self.model(torch.ones(1, 2)).sum())

    with pytest.raises(StepError) as caught:
        measure(Target(factory=Stops), steps=2, warmup=2)
    assert caught.value.step == 4
    assert "train_step() raised ValueError: Tried to step 4 times (at " in str(caught.value)
    assert "test_timing.py:" in str(caught.value)


def test_on_many_ranks_a_phase_no_rank_entered_says_why_instead_of_zeros():
    """A trial: `timing --nproc 2` printed zero rows for phases its step never
    marked, where the one-process table says why. (Two ranks made of one
    measured here: what is under test is the table.)"""
    import copy

    from resumecheck import Target
    from resumecheck.timing import measure as measure_target

    report = measure_target(Target(factory=_MarksOnlyItsForward, steps=4), steps=4, warmup=1,
                            checkpoint_every=100)
    second = copy.deepcopy(report.ranks[0])
    second["rank"] = 1
    report.ranks.append(second)
    text = report.render()
    rows = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    assert "never entered: mark it in your step with resumecheck.phase(...) on any rank)" \
        in rows["backward"]
    assert "no checkpoint fell in the measured steps on any rank" in rows["checkpoint"]
    # (a trial's DDP run was told "one process has no gradient sync on any rank")
    assert "one process" not in rows["grad_sync"] and "never entered" in rows["grad_sync"]
    assert "0.000 ms" not in rows["backward"]
    assert rows["forward"].split()[1] == "4"  # entered: its figures


def test_a_save_not_timed_on_many_ranks_is_said_in_the_header():
    """A trial's DDP program had a save() of its own; `timing --nproc 2`
    timed the engine's capture and said nothing of why its save() was not used."""
    import copy

    from resumecheck import Target
    from resumecheck.timing import measure as measure_target

    report = measure_target(Target(factory=_MarksOnlyItsForward, steps=4), steps=4, warmup=1,
                            checkpoint_every=2)
    assert "your save() is not timed" not in report.render()  # (it has none)
    report.ranks.append({**copy.deepcopy(report.ranks[0]), "rank": 1})
    report.save_untimed = True
    assert ("checkpoint every 2 (the engine's capture of the declared components; your save() "
            "is not timed on many ranks)") in report.render()
