"""`resumecheck baseline --nproc N`: distributed equivalence before any resume is judged.

Each check_baseline(nproc=2) launches torchrun twice (2 ranks, then 1): tens of
seconds on a shared CPU, so two such tests (FSDP's baseline is the same code
path; tests/test_dist_programs.py trains it). The argument checks launch nothing.
"""

from __future__ import annotations

import json

import pytest

from resumecheck import Target
from resumecheck.baseline import check_baseline
from resumecheck.dist_baseline import LOSS_TOLERANCE, PARAM_TOLERANCE, SYNC_TOLERANCE
from resumecheck.errors import InvalidArgument

CHECKS = ["determinism", "synchronized gradient", "ranks agree", "N ranks vs 1 rank"]


def test_nproc_must_be_a_positive_int():
    with pytest.raises(InvalidArgument, match="nproc"):
        check_baseline("resumecheck.tiny_dist:DDP", nproc=0)


def test_an_in_memory_target_cannot_be_launched_on_ranks():
    from resumecheck.tiny_dist import build_ddp

    with pytest.raises(InvalidArgument, match="module:attr"):
        check_baseline(Target(factory=build_ddp), nproc=2)


def test_the_tiny_batch_must_split_evenly_over_the_ranks():
    with pytest.raises(InvalidArgument, match="batch_size"):
        check_baseline("resumecheck.tiny_dist:DDP", nproc=2, batch_size=7)


@pytest.mark.distributed
@pytest.mark.e2e
def test_ddp_program_passes_through_the_cli_with_its_differences_reported(capsys):
    from resumecheck.cli import main
    from resumecheck.schema import validate

    code = main(["baseline", "resumecheck.tiny_dist:DDP", "--nproc", "2", "--steps", "4",
                 "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    validate(doc)
    assert doc["nproc"] == 2 and doc["passed"] is True
    checks = {c["name"]: c for c in doc["checks"]}
    assert list(checks) == CHECKS
    assert all(c["status"] == "passed" for c in doc["checks"])
    sync = checks["synchronized gradient"]["figures"]
    assert sync["dtype"] == "float64" and sync["ranks"] == 2
    assert 0 <= sync["max_abs"] < SYNC_TOLERANCE["atol"]
    trajectory = checks["N ranks vs 1 rank"]["figures"]
    accumulation = trajectory["accumulation"]
    assert accumulation["1 rank"]["accum_steps"] == 2 * accumulation["2 ranks"]["accum_steps"]
    # the detail names the program's own one-rank settings, not an assumed N-fold
    assert f"accum_steps={accumulation['1 rank']['accum_steps']}" in checks["N ranks vs 1 rank"]["detail"]
    differences = trajectory["differences"]
    assert {"loss", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"} <= set(differences)
    # The reduction order differs, so something differs a little; all within tolerance.
    assert any(d["max_abs"] > 0 for d in differences.values())
    assert differences["loss"]["max_abs"] < LOSS_TOLERANCE["atol"]
    assert all(d["within"] for d in differences.values())
    assert max(d["max_abs"] for k, d in differences.items() if k != "loss") < PARAM_TOLERANCE["atol"]


@pytest.mark.distributed
@pytest.mark.e2e
def test_a_program_without_the_gradient_sync_fails_and_says_where():
    report = check_baseline("fixtures.dist_userprog:NO_SYNC", nproc=2, steps=3)
    assert not report.passed
    status = {c.name: c.status for c in report.checks}
    assert status == {"determinism": "passed", "synchronized gradient": "failed",
                      "ranks agree": "failed", "N ranks vs 1 rank": "failed"}
    checks = {c.name: c for c in report.checks}
    assert "not averaged over the ranks" in checks["synchronized gradient"].detail
    assert checks["ranks agree"].figures["rank"] == 1
    assert checks["N ranks vs 1 rank"].figures["differences"]["loss"]["within"] is False
    # (a trial: the message said only where the worst difference was, not from when)
    first = checks["N ranks vs 1 rank"].figures["first_step"]
    assert first is not None and f"beyond tolerance from step {first} on" in (
        checks["N ranks vs 1 rank"].detail)
    assert "rank 1" in report.render() and "on 2 ranks against 1" in report.render()


@pytest.mark.distributed
@pytest.mark.e2e
def test_a_user_ddp_script_without_the_optional_hooks_is_trustworthy_with_skips():
    """A trial: no tiny_batch made determinism 'fail'; no equivalence_config
    crashed 'ranks agree' (KeyError: a bug in resumecheck)."""
    report = check_baseline("fixtures.dist.baseline_user:PLAIN", nproc=2, steps=3)
    status = {c.name: c.status for c in report.checks}
    assert status == {"determinism": "passed", "synchronized gradient": "skipped",
                      "ranks agree": "passed", "N ranks vs 1 rank": "skipped"}, report.render()
    assert report.passed
    agree = next(c for c in report.checks if c.name == "ranks agree")
    assert agree.detail == "the 2 ranks hold the same parameters after each of 3 steps, bit for bit"
    # the header says what ran: two ranks, not two ranks against one
    assert report.render().splitlines()[0].split(";")[0].endswith("3 steps on 2 ranks")


@pytest.mark.distributed
@pytest.mark.e2e
def test_the_module_inside_ddp_declared_as_params_is_checked_through_its_wrapper():
    """A trial: a backward through the bare module skipped DDP's sync and the
    check said the gradients were not averaged (false)."""
    report = check_baseline("fixtures.dist.baseline_user:INNER_DECLARED", nproc=2, steps=3)
    status = {c.name: c.status for c in report.checks}
    assert status["synchronized gradient"] == "passed", report.render()
    assert status["ranks agree"] == "passed"


def test_an_interrupt_while_a_launch_runs_stops_it_and_propagates(monkeypatch, tmp_path):
    """A trial: Ctrl-C during `baseline --nproc 2` became 'unexpected
    UnboundLocalError ... a bug in resumecheck' (exit 2), and the launch lived on."""
    import subprocess

    from resumecheck import dist_baseline, forkserver

    launched = []

    class Interrupted(subprocess.Popen):
        def wait(self, timeout=None):
            if timeout is not None:  # the launch's own wait: Ctrl-C arrives
                raise KeyboardInterrupt
            return super().wait()

    def spawn(*args, **kwargs):
        launched.append(Interrupted(["sleep", "60"], start_new_session=True))
        return launched[0]

    monkeypatch.setattr(forkserver, "spawn", spawn)
    with pytest.raises(KeyboardInterrupt):
        dist_baseline.launch(2, "resumecheck._rank", {"threads": 1}, tmp_path, "x", timeout=60)
    assert launched[0].returncode == -9  # the launch's process group was killed


@pytest.mark.distributed
@pytest.mark.e2e
def test_a_rank_that_fails_in_the_tiny_batch_fails_that_check_naming_where():
    """A trial: a batch_loss that raised was filed under 'determinism', with no
    phase or line named."""
    report = check_baseline("fixtures.dist.baseline_user:CASTS_TO_FLOAT32", nproc=2, steps=3)
    checks = {c.name: c for c in report.checks}
    assert {n: c.status for n, c in checks.items()} == {
        "determinism": "skipped", "synchronized gradient": "failed",
        "ranks agree": "skipped", "N ranks vs 1 rank": "skipped"}, report.render()
    detail = checks["synchronized gradient"].detail
    assert "in the tiny batch's gradient in float64 (tiny_batch, batch_loss, backward)" in detail
    assert "fixtures/dist/baseline_user.py:" in detail and "in batch_loss)" in detail
    assert checks["determinism"].detail == "a launch failed (see synchronized gradient)"


@pytest.mark.distributed
@pytest.mark.e2e
def test_ranks_seeded_from_their_process_id_differ_between_launches_and_both_doors_say_so(
        capsys):
    """Trial 141: `baseline --nproc 2` said TRUSTWORTHY of a program whose ranks
    seed from their process id (it reran inside one launch), and `run --nproc 2`
    built the program in its own process to find why two launches differ, where
    the factory cannot build without a process group, and told the user to fix
    the factory (exit 2)."""
    from resumecheck.cli import main

    report = check_baseline("fixtures.dist.ddp:SEEDED_BY_PID", nproc=2, steps=3)
    determinism = next(c for c in report.checks if c.name == "determinism")
    assert determinism.status == "failed" and not report.passed, report.render()
    assert determinism.detail.startswith(
        "two launches of 2 ranks (PYTHONHASHSEED 1 and 2) differ on rank "), determinism.detail
    assert "though two runs inside one launch agree" in determinism.detail
    code = main(["run", "fixtures.dist.ddp:SEEDED_BY_PID", "--nproc", "2", "--drop", "none",
                 "--noise-seeds", "0"])
    err = capsys.readouterr().err
    assert code == 3, err
    assert "is not deterministic: two uninterrupted launches of 2 ranks differ from step 1" \
        in err, err
    assert "a seed taken from the time, the process id or os.urandom" in err, err
    assert "factory" not in err and "Traceback" not in err, err
    assert "Reproduce: resumecheck baseline fixtures.dist.ddp:SEEDED_BY_PID --steps 4 " \
        "--threads 1 --nproc 2" in err, err


def test_ranks_agree_is_skipped_where_the_parameters_are_sharded_and_it_cannot_fail():
    """Trial 144: under FSDP2 every rank gathers the one sharded copy alike, and
    `ranks agree: passed` said what no program could fail."""
    from resumecheck import dist_baseline

    rank = {"sharded": True, "grads": None, "determinism": [[(0.5, "a")]]}
    agree = dist_baseline._agree([rank, {**rank, "determinism": [[(0.5, "b")]]}])
    assert agree.status == "skipped" and "sharded (FSDP)" in agree.detail
    replicated = {**rank, "sharded": False}
    assert dist_baseline._agree([replicated, {**replicated, "determinism": [[(0.5, "b")]]}]
                                ).status == "failed"  # (held apart: the same ranks, replicated)
