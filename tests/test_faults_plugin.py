"""The plugin under faults: a hung step fails its test within the timeout;
bad timeout and noise-seed options are usage errors."""

import os

import pytest


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
                                         "--resumecheck-timeout=0.3")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*step 5 took longer than 0.3 s*"])


def test_bad_timeout_and_too_many_noise_seeds_are_usage_errors(project):
    project.makepyfile(test_x="def test_x():\n    pass\n")
    result = project.runpytest_inprocess("--resumecheck-timeout=soon")
    result.stderr.fnmatch_lines(["*--resumecheck-timeout='soon': expected a number of seconds*"])
    result = project.runpytest_inprocess("--resumecheck-noise-seeds=100000000")
    result.stderr.fnmatch_lines(
        ["*--resumecheck-noise-seeds='100000000': expected an int in 0..100 *100 is the upper limit*"])
    result = project.runpytest_inprocess("--resumecheck-jobs=0")
    result.stderr.fnmatch_lines(["*--resumecheck-jobs='0': expected an int >= 1*"])


# An xdist worker that crashes keeps the checks it finished: asserted in the one
# xdist session of test_pytest_plugin.py (its workers are fresh interpreters).
