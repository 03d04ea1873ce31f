"""The public hypothesis strategies and the resume state machine."""

import os

import pytest
import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.stateful import run_state_machine_as_test

from resumecheck import forkserver
from resumecheck.strategies import (
    component_subsets,
    interruption_schedules,
    resume_state_machine,
    special_points,
)

from tests import programs


@given(interruption_schedules(steps=16, max_interruptions=3, steps_per_epoch=5))
def test_schedules_are_sorted_distinct_points_in_range(schedule):
    assert 1 <= len(schedule) <= 3
    assert schedule == sorted(set(schedule))
    assert all(1 <= k <= 15 for k in schedule)


def test_schedules_aim_at_boundaries_and_extremes():
    assert special_points(16, 5) == [1, 4, 5, 6, 9, 10, 11, 14, 15]
    assert special_points(8) == [1, 7]
    seen = set()

    @settings(max_examples=200)
    @given(interruption_schedules(steps=40, max_interruptions=1, steps_per_epoch=10))
    def collect(schedule):
        seen.update(schedule)

    collect()
    assert {1, 10, 20, 30, 39} <= seen


@given(component_subsets(["rng", "params", "optimizer"], min_size=1, max_size=2))
def test_component_subsets(subset):
    assert isinstance(subset, frozenset)
    assert 1 <= len(subset) <= 2 and subset <= {"rng", "params", "optimizer"}


@pytest.mark.parametrize(
    "make",
    [
        lambda: interruption_schedules(steps=1),
        lambda: interruption_schedules(steps=10, max_interruptions=0),
        lambda: interruption_schedules(steps=4, max_interruptions=4),
        lambda: interruption_schedules(steps=10, steps_per_epoch=0),
        lambda: interruption_schedules(steps="10"),
        lambda: component_subsets([]),
        lambda: component_subsets(["rng"], min_size=2),
    ],
)
def test_invalid_arguments_raise(make):
    with pytest.raises(InvalidArgument):
        make()


def test_keyword_only_bounds():
    with pytest.raises(TypeError):
        interruption_schedules(16)  # type: ignore[misc]


def test_torch_stream_is_under_hypothesis_control():
    interruption_schedules(steps=8)  # (a strategy made: torch's stream is registered)
    draws = []

    @settings(max_examples=3, derandomize=True, database=None)
    @given(st.just(None))
    def draw(_):
        draws.append(torch.rand(1).item())

    torch.manual_seed(1)
    draw()
    first = list(draws)
    draws.clear()
    torch.manual_seed(2)
    draw()
    assert draws == first  # hypothesis seeded torch alike for the same examples


# Run in a process of its own (forked from a warm server: torch imported, the
# strategies not): whether two runs of one hypothesis test draw alike from
# torch although the test moved torch's stream in between.
_PROBE = """
import torch
from hypothesis import given, settings, strategies as st

import resumecheck.strategies


def managed():
    runs = []

    @settings(max_examples=2, derandomize=True, database=None)
    @given(st.just(None))
    def draw(_):
        runs[-1].append(torch.rand(1).item())

    for seed in (1, 2):
        torch.manual_seed(seed)
        runs.append([])
        draw()
    return "managed" if runs[0] == runs[1] else "not-managed"


print("imported:", managed())
resumecheck.strategies.interruption_schedules(steps=8)
print("made:", managed())
"""


@pytest.mark.skipif(not forkserver.available(), reason="warm servers need fork")
def test_importing_the_strategies_leaves_torchs_stream_alone_until_one_is_made(tmp_path):
    # (registering walks every object the process holds: a test module's
    # collection or the fuzz command's imports should not pay for it, nor
    # change how hypothesis treats torch in tests that use no strategy of ours)
    (tmp_path / "probe_registration.py").write_text(_PROBE)
    child = forkserver.spawn("probe_registration", [], dict(os.environ), cwd=str(tmp_path),
                             output_dir=str(tmp_path))
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 0, out
    assert out.split() == ["imported:", "not-managed", "made:", "managed"], out


def test_state_machine_passes_on_a_correct_program():
    machine = resume_state_machine(programs.LINEAR)
    run_state_machine_as_test(machine, settings=settings(max_examples=8, deadline=None,
                                                         database=None))


def test_state_machine_finds_a_forgotten_rng_and_says_how_to_reproduce():
    machine = resume_state_machine(programs.NOISY_FORGETS_RNG)
    # finding is what is asserted: any failing schedule says both, unshrunk
    quick = settings(max_examples=50, deadline=None, database=None,
                     phases=[Phase.explicit, Phase.generate])
    with pytest.raises(AssertionError) as info:
        run_state_machine_as_test(machine, settings=quick)
    message = str(info.value)
    assert "differs from the uninterrupted run" in message
    assert "resumecheck run tests.programs:NOISY_FORGETS_RNG --steps 8 --resume-at" in message
    # the quantities it lists: five at most, and how many more (a trial read five as all)
    listed = message.split(" differs from the uninterrupted run in ")[1].split(" after restarts")[0]
    assert len(listed.split(", ")) <= 5 and (listed.count(", ") < 4 or " more" in listed), listed
    # (trial 298: in the report's words, "lr, param:0.bias" read as another vocabulary)
    assert "param:" not in listed and "grad:" not in listed and "loss" in listed, listed
    assert "(the report of the command below names what each restore left otherwise); " \
        "reproduce: " in message


def test_a_list_cut_short_says_how_many_more():
    """A trial read a state machine's failure, cut at five quantities, as all
    that differed (eight gradients did)."""
    from resumecheck.phrases import first_few

    keys = ["loss", *(f"grad:p{i}" for i in range(8))]
    assert first_few(keys) == "loss, grad:p0, grad:p1, grad:p2, grad:p3 and 4 more"
    assert first_few(keys[:5]) == "loss, grad:p0, grad:p1, grad:p2, grad:p3"


def test_the_state_machine_lists_no_lines_as_the_explanation_of_a_failure():
    """A trial: hypothesis's explain phase listed lines "always and only run by
    failing test cases", the restore code a failing schedule reaches, as if they
    were the bug. The machine's own message says what differs and how to reproduce."""
    phases = resume_state_machine(programs.LINEAR).TestCase.settings.phases
    assert Phase.explain not in phases and Phase.shrink in phases


TestLinearResumes = resume_state_machine(programs.LINEAR).TestCase
TestLinearResumes.settings = settings(max_examples=5, deadline=None, database=None)


def test_the_state_machine_never_restarts_twice_at_one_step():
    """A trial: a schedule shrunk to restarts at 1,1 printed `--resume-at 1,1`,
    which `resumecheck run` refuses (its resume points are distinct). The
    machine restarts after a step, before the last, and not twice at one step,
    so every reproduce command it prints runs."""
    machine = resume_state_machine(programs.LINEAR)()
    try:
        assert not machine.may_restart()  # (not started)
        machine.start()
        assert not machine.may_restart()  # before any step
        machine.train_a_step()
        assert machine.may_restart()
        machine.checkpoint_and_restart()
        assert machine.restarts == [1] and not machine.may_restart()
        machine.train_a_step()
        assert machine.may_restart()
    finally:
        machine.teardown()


def test_the_fuzz_pages_hypothesis_example_runs_as_written():
    """A trial: the README's example (now docs/FUZZ.md's) failed on a correct
    program with hypothesis's 200 ms deadline (a check takes longer), and used
    `resumecheck` unimported."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "docs" / "FUZZ.md").read_text()
    start = readme.index("```python\nimport resumecheck\nfrom hypothesis import Phase, given, "
                         "settings")
    code = readme[start + len("```python\n"):readme.index("```", start + 10)]
    code = code.replace('"check.py:TARGET"', '"tests.programs:LINEAR"').replace(
        "steps=16", "steps=8").replace("max_examples=20", "max_examples=3")
    namespace: dict = {}
    exec(compile(code, "docs/FUZZ.md", "exec"), namespace)
    test = namespace["test_resume_anywhere"]
    assert test.hypothesis.inner_test is not None
    used = getattr(test, "_hypothesis_internal_use_settings")
    assert used.deadline is None
    assert "explain" not in {p.name for p in used.phases}  # (a trial: it listed our own lines)
    test()  # (a correct program: every schedule drawn resumes)
