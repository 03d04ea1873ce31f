"""The plugin under faults: a hung step fails its test within the timeout;
an xdist worker that crashes loses none of the checks it had finished."""

import json
import os

import pytest

from resumecheck.schema import validate

pytestmark = pytest.mark.e2e

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def project(torch_dynamo_imported, pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", ROOT)  # fixtures.faults, in every worker
    return pytester


def test_a_hung_step_fails_the_test_within_the_timeout(project):
    project.makepyfile(test_hang='''
def test_hangs(resumecheck):
    resumecheck.assert_resume_equivalent("fixtures.faults.programs:HANGS")
''')
    project.makeini("[pytest]\nresumecheck_timeout = 0.5\n")
    # In-process: the inner session runs in this main thread, as a subprocess's
    # would, so the step timeout takes the same (signal) path.
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "--resumecheck-noise-seeds=0")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*step 5 took longer than 0.5 s*"])
    # the command-line option wins over the ini setting
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "--resumecheck-noise-seeds=0",
                                         "--resumecheck-timeout=0.7")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*step 5 took longer than 0.7 s*"])


def test_bad_timeout_and_too_many_noise_seeds_are_usage_errors(project):
    project.makepyfile(test_x="def test_x():\n    pass\n")
    result = project.runpytest_inprocess("--resumecheck-timeout=soon")
    result.stderr.fnmatch_lines(["*--resumecheck-timeout='soon': expected a number of seconds*"])
    result = project.runpytest_inprocess("--resumecheck-noise-seeds=100000000")
    result.stderr.fnmatch_lines(
        ["*--resumecheck-noise-seeds='100000000': expected an int in 0..100 *100 is the upper limit*"])
    result = project.runpytest_inprocess("--resumecheck-jobs=0")
    result.stderr.fnmatch_lines(["*--resumecheck-jobs='0': expected an int >= 1*"])


def test_an_xdist_worker_crash_keeps_the_checks_it_finished(project):
    # loadfile: both tests of test_a.py run on one worker, the check first
    project.makepyfile(
        test_a='''
import os


def test_check_then(resumecheck):
    resumecheck.assert_resume_equivalent("fixtures.faults.programs:HEALTHY")


def test_worker_crashes():
    os._exit(1)
''',
        test_b='''
def test_check_elsewhere(resumecheck):
    resumecheck.assert_resume_equivalent("fixtures.faults.programs:HEALTHY")
''',
    )
    # the session in this interpreter; its two xdist workers are fresh ones
    result = project.runpytest_inprocess(
        "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile", "--max-worker-restart=0",
        "--resumecheck-noise-seeds=0", "--resumecheck-report=checks.json")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*crashed while running*test_worker_crashes*"])
    result.stdout.fnmatch_lines([
        "*= resumecheck =*",
        "test_a.py::test_check_then  fixtures.faults.programs:HEALTHY  full resume: ok",
        "test_b.py::test_check_elsewhere  fixtures.faults.programs:HEALTHY  full resume: ok",
    ])
    session = json.loads((project.path / "checks.json").read_text())
    validate(session)  # made in another process: the suite-wide check never saw it
    checks = session["checks"]
    assert sorted(c["nodeid"] for c in checks) == [
        "test_a.py::test_check_then", "test_b.py::test_check_elsewhere"]
