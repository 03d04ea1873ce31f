"""The pytest plugin, exercised through real pytest sessions (pytester).

One session runs in a fresh interpreter (``runpytest_subprocess``), exactly as
in a user's project, with two xdist workers (fresh interpreters too), one of
which crashes; the others run in this interpreter (``runpytest_inprocess``,
no ``import torch`` to pay), where the plugin's hooks, options and markers
behave the same.
"""

import json

import pytest

from resumecheck.schema import validate
from resumecheck.pytest_plugin import session_markdown

pytestmark = pytest.mark.e2e

# A fresh project's own training program: full-batch regression whose learning
# rate decays with a step counter. BUGGY's checkpoint forgets that counter.
PROGRAM = '''
import torch
import resumecheck
from resumecheck import Attr, RNGState, Target

X = torch.linspace(-1, 1, 24).reshape(8, 3)
Y = X @ torch.tensor([[0.5], [-1.0], [2.0]])


class Program:
    def __init__(self, settings):
        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.step = 0

    def components(self):
        return {"params": self.model, "optimizer": self.opt,
                "global_step": Attr(self, "step"), "rng": RNGState()}

    def train_step(self):
        for g in self.opt.param_groups:
            g["lr"] = 0.1 / (1 + self.step)   # reads the global step
        loss = torch.nn.functional.mse_loss(self.model(X), Y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        self.step += 1
        return loss.detach()

    def save(self, path):
        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict(),
                    "step": self.step}, path)

    def load(self, path):
        ckpt = torch.load(path, weights_only=True)
        self.model.load_state_dict(ckpt["model"])
        self.opt.load_state_dict(ckpt["opt"])
        self.step = ckpt["step"]


class Buggy(Program):
    def save(self, path):
        torch.save({"model": self.model.state_dict(), "opt": self.opt.state_dict()}, path)

    def load(self, path):
        ckpt = torch.load(path, weights_only=True)
        self.model.load_state_dict(ckpt["model"])
        self.opt.load_state_dict(ckpt["opt"])


CORRECT = Target(factory=Program, steps=6, resume_at=(3,), spec="program:CORRECT")
BUGGY = Target(factory=Buggy, steps=6, resume_at=(3,), spec="program:BUGGY")
'''

TESTS = '''
import pytest


def test_correct(resumecheck):
    resumecheck.assert_resume_equivalent("program:CORRECT")


def test_buggy(resumecheck):
    resumecheck.assert_resume_equivalent("program:BUGGY")
'''


@pytest.fixture
def project(torch_dynamo_imported, pytester, monkeypatch):
    pytester.makepyfile(program=PROGRAM, test_resume=TESTS)
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))  # xdist workers import program
    pytester.syspathinsert()
    return pytester


def test_passing_and_failing_checks_with_summary_and_report(project):
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "--resumecheck-noise-seeds=0",
                                         "--resumecheck-report=checks.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*resume is not equivalent: program:BUGGY*",
        "*full resume (own save/load): diverged*",
        "*diagnosis: global_step: 0, expected 3 (confirmed)*",
        "*reproduce: resumecheck run program:BUGGY --steps 6 --resume-at 3 --drop none*",
        "*= resumecheck =*",
        "test_resume.py::test_buggy  program:BUGGY  full resume: DIVERGED (confirmed: global_step)",
        "test_resume.py::test_correct  program:CORRECT  full resume: ok",
        # (trial 147: what a passing check could not see was in no row)
        "resumecheck: not checked: your script's own resume code (which checkpoint it picks; *"
        " (test_resume.py::test_correct, the check that passed; a check that failed lists none: "
        "it may hold of it too)",
    ])
    report = json.loads((project.path / "checks.json").read_text())
    assert report["schema"] == "resumecheck.session/1"
    validate(report)
    assert sorted(c["report"]["equivalent"] for c in report["checks"]) == [False, True]


def test_a_failed_test_that_recorded_no_check_is_named_below_the_rows_and_in_the_report(project):
    """Trial 147: a fuzz test written as the README shows (a direct fuzz() call)
    caught a bug while every row of the summary and the report file said ok."""
    project.makepyfile(test_direct=DIRECT)
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "--resumecheck-noise-seeds=0",
                                         "--resumecheck-report=checks.json",
                                         "-k", "correct or direct")
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines([
        "test_direct.py::test_direct_rng_exercised  program:CORRECT  full resume: ok* | rng: "
        "blind spot*",
        "test_resume.py::test_correct  program:CORRECT  full resume: ok",
        "resumecheck: 2 failed test(s) whose failure no check recorded through the resumecheck "
        "fixture shows (a direct fuzz(), verify() or assert_resume_equivalent() call, a "
        "hypothesis test of resumecheck.strategies or its resume_state_machine, or a failure of "
        "their own after their checks): the rows do not show them (the report file lists them: "
        "unrecorded_failures): "
        "test_direct.py::test_fuzzed_directly, test_direct.py::test_checked_then_fuzzed",
    ])
    report = json.loads((project.path / "checks.json").read_text())
    validate(report)
    assert report["unrecorded_failures"] == [
        "test_direct.py::test_fuzzed_directly", "test_direct.py::test_checked_then_fuzzed"]
    # (trial 152: a blind spot's failure, on an equivalent report, was named there)
    assert [c.get("failed") for c in report["checks"]
            if c["nodeid"].endswith("rng_exercised")] == ["ComponentsNotExercised"]
    # (trial 148: the job summary said every full resume was equivalent)
    summary = session_markdown(report["checks"], report["unrecorded_failures"])
    # (trial 471: and the equivalent check whose own test failed is counted too)
    assert summary.startswith("### resumecheck: 3 check(s), 1 equivalent whose test failed, "
                              "2 failed test(s) no check shows\n")
    assert summary.rstrip().endswith("`test_direct.py::test_checked_then_fuzzed`")
    # (trial 147: what the passing checks could not see, said once for both)
    assert "What the checks could not see:\n\n- " in summary
    assert "\n- not checked: your script's own resume code (which checkpoint it picks;" in summary
    assert summary.count("(every check)") == summary.count("\n- ") >= 1


DIRECT = """
from resumecheck.fuzz import fuzz


def test_fuzzed_directly():
    assert fuzz("program:BUGGY", max_examples=3).failure is None


def test_checked_then_fuzzed(resumecheck):  # (a check that passes, then a direct call)
    resumecheck.assert_resume_equivalent("program:CORRECT")
    assert fuzz("program:BUGGY", max_examples=3).failure is None


def test_direct_rng_exercised(resumecheck):  # (an equivalent report, a blind spot: shown)
    resumecheck.assert_components_exercised("program:CORRECT", ["rng"], noise_seeds=0)
"""


def test_same_under_xdist_two_workers_and_a_crash_keeps_the_checks_it_finished(project):
    """A fresh interpreter's session with two xdist workers: each worker's checks
    reach the summary and the report, and a worker that crashes loses none of
    the checks it had finished."""
    # loadfile: each file is one worker's, its tests in order (the check first)
    project.makepyfile(test_crash='''
import os


def test_check_then(resumecheck):
    resumecheck.assert_resume_equivalent("program:CORRECT")


def test_worker_crashes():
    os._exit(1)
''')
    # the controller, which runs no check, words its rows without importing torch
    project.makeconftest("""
import sys


def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        open("controller_torch.txt", "w").write(str("torch" in sys.modules))
""")
    # (without the plugins of this environment's other test tools: hypothesis's
    # imports all of hypothesis as each of the three interpreters starts, a
    # second apiece, and the project uses neither)
    result = project.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:anyio",
        "-n", "2", "--dist", "loadfile", "--max-worker-restart=0",
        "--resumecheck-noise-seeds=0", "--resumecheck-report=checks.json")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*crashed while running*test_worker_crashes*"])
    result.stdout.fnmatch_lines([
        "*diagnosis: global_step: 0, expected 3 (confirmed)*",
        "*= resumecheck =*",
        "test_crash.py::test_check_then  program:CORRECT  full resume: ok",
        "test_resume.py::test_buggy  program:BUGGY  full resume: DIVERGED (confirmed: global_step)",
        "test_resume.py::test_correct  program:CORRECT  full resume: ok",
    ])
    assert (project.path / "controller_torch.txt").read_text() == "False"
    session = json.loads((project.path / "checks.json").read_text())
    validate(session)  # made in another process: the suite-wide check never saw it
    assert sorted(c["nodeid"] for c in session["checks"]) == [  # from both workers
        "test_crash.py::test_check_then", "test_resume.py::test_buggy",
        "test_resume.py::test_correct"]


def test_a_pass_with_a_latent_gap_says_so_in_its_row_and_a_warning(project):
    """A trial: a resume whose checkpoint loses the data generator, unused
    after this resume point, passed with "full resume: ok" and nothing else,
    where the command line reports the latent gap."""
    project.makepyfile(test_latent='''
def test_latent(resumecheck):
    resumecheck.assert_resume_equivalent("tests.programs:EPOCH_READ_AT_BOUNDARY")
''')
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "--resumecheck-noise-seeds=0",
                                         "test_latent.py")
    result.assert_outcomes(passed=1, warnings=1)
    result.stdout.fnmatch_lines([
        "*LatentGapWarning: tests.programs:EPOCH_READ_AT_BOUNDARY: the resume is equivalent at "
        "5, but it leaves sampler_epoch (next read at step 9) otherwise than the uninterrupted "
        "run*",
        "*test_latent.py::test_latent  tests.programs:EPOCH_READ_AT_BOUNDARY  full resume: ok "
        "(latent gap: sampler_epoch)*",
    ])


def test_marker_blind_spot_and_strict_markers(project):
    project.makepyfile(test_marker='''
import pytest


@pytest.mark.resumecheck(drop=["rng"], resume_at=[2], noise_seeds=0)
def test_rng_exercised(resumecheck):
    resumecheck.assert_components_exercised("program:CORRECT")


@pytest.mark.resumecheck(drop=["global_step"], noise_seeds=0)
def test_step_exercised(resumecheck):
    resumecheck.assert_components_exercised("program:CORRECT")
''')
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "--strict-markers", "test_marker.py")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*blind spots in program:CORRECT at resume point(s) 2: rng*",
        "*reproduce: resumecheck run program:CORRECT --steps 6 --resume-at 2 --drop rng*",
        "*test_marker.py::test_rng_exercised  program:CORRECT  full resume: ok "
        "| rng: blind spot*",
        "*test_marker.py::test_step_exercised  program:CORRECT  full resume: ok "
        "| global_step: exercised*",
    ])


def test_bad_marker_arguments_fail_clearly(project):
    project.makepyfile(test_bad='''
import pytest


@pytest.mark.resumecheck(stpes=3)
def test_typo(resumecheck):
    pass


@pytest.mark.resumecheck(3)
def test_positional(resumecheck):
    pass
''')
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "--strict-markers", "test_bad.py")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines([
        "*@pytest.mark.resumecheck got unknown argument(s) stpes; known: atol, drop*",
        "*@pytest.mark.resumecheck takes keyword arguments only*",
    ])


def test_bad_option_is_a_usage_error(project):
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "--resumecheck-isolation=thread")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--resumecheck-isolation='thread': expected inprocess or process*"])


def test_ini_settings_apply(project):
    project.makeini("[pytest]\nresumecheck_noise_seeds = 0\nresumecheck_steps = 5\n")
    project.makepyfile(test_ini='''
def test_steps(resumecheck):
    report = resumecheck.verify("program:CORRECT", drop="none")
    assert report.steps == 5 and report.noise["seeds"] == []
''')
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "test_ini.py")
    result.assert_outcomes(passed=1)


def test_marker_is_registered_with_a_description(project):
    result = project.runpytest_inprocess("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.resumecheck(target=None, steps=None*"])


def test_the_fixtures_exercised_check_takes_drop_as_the_components_it_names():
    """Trial 403: ``assert_components_exercised(target, drop=["rng,hooks"])``
    replaced its drop= with every component alone, unsaid; a comma joins
    names into one ablation, as the README's marker says."""
    from resumecheck.pytest_plugin import ResumeCheck

    results: list = []
    check = ResumeCheck({}, {}, "t.py::t", results)
    report = check.assert_components_exercised(
        "fixtures.bugs.class01_scheduler_not_saved:CORRECT", drop=["optimizer,scheduler"],
        noise_seeds=0, check_determinism=False)
    assert [r.dropped for r in report.runs if r.dropped] == [["optimizer", "scheduler"]]


def test_a_caveat_said_of_the_checks_that_passed_says_a_failing_check_lists_none():
    """Trials 596, 609: "(test_resume.py::test_fixed)" beside the in-process
    caveat read as not said of the failing check, which ran in-process too."""
    from resumecheck.pytest_plugin import _caveat_lines

    caveat = "not checked in-process: an order that follows the hash seed"
    fixed = {"nodeid": "t.py::test_fixed", "report": {"equivalent": True, "caveats": [caveat]}}
    buggy = {"nodeid": "t.py::test_buggy", "report": {"equivalent": False, "caveats": []}}
    assert _caveat_lines([fixed, buggy]) == [
        f"{caveat} (t.py::test_fixed, the check that passed; a check that failed lists none: "
        "it may hold of it too)"]
    other = {"nodeid": "t.py::test_other", "report": {"equivalent": True, "caveats": []}}
    assert _caveat_lines([fixed, other, buggy]) == [f"{caveat} (t.py::test_fixed)"]
    assert _caveat_lines([fixed]) == [f"{caveat} (every check)"]
