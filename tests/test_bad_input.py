"""Every kind of bad input gets a short message naming the cause and what to do.

Usage errors exit 2; failures inside a run are a ``failed`` verdict with the
reason (exit 1). Never a traceback without --debug, never stray files.
"""

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

import resumecheck
from resumecheck.cli import main

pytestmark = pytest.mark.e2e


@pytest.fixture(autouse=True)
def _private_tmp(monkeypatch, tmp_path_factory):
    """Every run's scratch files go to a fresh TMPDIR; the test checks it is left empty.
    A short path, as a user's is: a DataLoader worker's tensors travel through
    a Unix socket made under TMPDIR, whose path may not exceed 107 bytes (under
    a test's own directory the worker waited forever). pytest's own temporary
    directory is settled first (without xdist it is made under TMPDIR at first use)."""
    import tempfile

    tmp_path_factory.getbasetemp()
    scratch = Path(tempfile.mkdtemp(prefix="rc-"))
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    before = set(os.listdir("."))
    try:
        yield
        # (torch itself may create its inductor cache directory there)
        left = [p.name for p in scratch.iterdir() if not p.name.startswith("torchinductor")]
        assert left == [], "a run left files behind"
        assert set(os.listdir(".")) == before, "a run left files in the working directory"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run(capsys, *argv):
    code = main(["run", *argv, "--noise-seeds", "0"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("not_a_module_anywhere:build", "cannot import not_a_module_anywhere"),
        ("tests.programs:no_such_attr", "has no attribute 'no_such_attr' (it holds the targets "),
        # (trial 421: "the program factory" beside the Target it held)
        ("tests.programs:no_such_attr", "it must name a resumecheck.Target or the program's "
                                        "factory"),
        # (trial 168: a target file given without a colon)
        ("tests/programs.py", "not of the form module:attr or path/to/file.py:attr "
                              "(tests/programs.py holds the targets LINEAR, NOISY, "),
        ("tests/programs.py", "Name the target after a colon: tests/programs.py:LINEAR"),
        ("tests.programs:NOT_A_FACTORY", "is an int, not a program factory"),
        ("tests.programs:Settings", "Settings is a class with no train_step() method, not a "
                                    "program factory. Point at a program class (one whose "
                                    "instances have components() and train_step()"),
        ("tests.programs:factory_raises", "the factory raised RuntimeError: no GPU found"),
        ("tests.programs:returns_its_class", "the factory returned the class Linear, not a "
                                             "program made from it. Name the class itself"),
        ("tests.programs:build_from_args", "the factory raised AttributeError: 'dict' object has "
                                           "no attribute 'lr' (at "),
        ("tests.programs:build_from_args", "A target's factory is called with one argument, a "
                                           "dict of settings (here {}), and returns your program"),
        ("tests.programs:NAN_LOSS", "step 3: the loss is nan; a check needs finite losses"),
        ("tests.programs:VECTOR_LOSS", "returned a loss of shape (3,); return a scalar"),
        ("tests.programs:NAMED_SAMPLES", "train_step() returned samples torch cannot make a "
                                         "tensor of ("),
        # (trial 881: "returned a NoneType" of a StepOutput whose loss was None)
        ("tests.programs:NONE_LOSS", "train_step() returned a StepOutput whose loss is None"),
        ("tests.programs:DECLARED_TWICE", "components 'params' and 'model' are the same object: "
                                          "dropping one, the other still restores it"),
        ("tests.programs:STREAMS_TWICE", "components 'rng' and 'aug_rng' both hold the Python "
                                         "random stream, the numpy global stream, the torch "
                                         "CPU stream and the torch CUDA stream (an RNGState "
                                         "holds the global streams unless streams=() says"),
        ("tests.programs:SUBMODULE_BESIDE", "component 'head' is a submodule of component "
                                            "'params'"),
    ],
)
def test_bad_targets_exit_2(target, message, capsys):
    code, out, err = _run(capsys, target)
    assert code == 2
    assert message in err
    assert "Traceback" not in err and out == ""


def test_bad_arguments_exit_2(capsys):
    code, _, err = _run(capsys, "--resume-at", "9", "--steps", "9")
    assert code == 2 and "each resume point must be an int in 1..8 (steps=9)" in err
    code, _, err = _run(capsys, "--drop", "lr_schedule")
    assert code == 2 and "unknown component 'lr_schedule'" in err and "scheduler" in err


@pytest.mark.parametrize(
    ("target", "reason", "stage"),
    [
        ("tests.programs:OWN_SAVE_RAISES", "save() at step 4 raised OSError: disk full",
         "saving the checkpoint"),
        ("tests.programs:OWN_LOAD_RAISES", "load() raised KeyError", "restoring the checkpoint"),
        ("tests.programs:OWN_TRUNCATED", "truncated or corrupted", "restoring the checkpoint"),
        ("tests.programs:OWN_SAVES_NOTHING", "nothing is at that path: the program's save() "
                                             "wrote nothing there", "restoring the checkpoint"),
        ("tests.programs:OWN_NAN_AFTER_RESUME", "the loss is inf", "a step"),
        # (a trial: "nothing is at that path" for a save that wrote path + ".pt"
        # and a load that read it and raised for another reason)
        ("tests.programs:OWN_SAVES_BESIDE", "the program's load() raised ValueError: loaded "
                                            "state dict has a different number of parameter "
                                            "groups", "restoring the checkpoint"),
    ],
)
def test_failures_inside_a_run_are_failed_verdicts(target, reason, stage, capsys):
    code, out, err = _run(capsys, target, "--drop", "none", "--format", "json")
    report = json.loads(out)
    full = report["runs"][0]
    assert code == 1
    assert full["verdict"] == "failed"
    assert reason in full["failure"]
    assert full["explanation"].startswith(f"{stage} failed: ") and reason in full["explanation"]
    assert "Traceback" not in err


def test_a_save_that_wrote_beside_the_path_is_not_told_it_saved_nothing(capsys):
    code, out, _ = _run(capsys, "tests.programs:OWN_SAVES_BESIDE", "--drop", "none",
                        "--format", "json")
    assert code == 1
    failure = json.loads(out)["runs"][0]["failure"]
    assert "nothing is at that path" not in failure
    # (its scratch directory is gone when the check ends: named by step, not by path)
    assert failure.startswith("checkpoint load failed (the checkpoint your save() wrote at "
                              "step 4, given a path in the check's scratch directory)")


def test_a_run_that_fails_after_it_departed_says_where_it_departed(capsys):
    # (a trial: a learning rate overridden at resume; the loss reached inf at the
    # last step, and the first divergence was given as that step)
    code, out, _ = _run(capsys, "tests.programs:OWN_LR_BLOWS_UP", "--drop", "none",
                        "--format", "json")
    full = json.loads(out)["runs"][0]
    assert code == 1 and full["verdict"] == "failed" and "the loss is inf" in full["failure"]
    assert (full["first_divergent_step"], full["first_divergent_quantity"]) == (5, "learning rate")
    assert full["explanation"].endswith(
        "before that, it had departed from the reference bit for bit from step 5 (learning rate)")
    # the steps it completed are its trajectory (a trial found it null)
    trajectory = full["trajectory"]
    assert trajectory["first_step"] == 1 and trajectory["differs"]["lr"][0] == 5
    assert len(trajectory["loss"]) == json.loads(out)["steps"] - 1  # the last step failed


def test_debug_shows_the_traceback_and_keeps_the_exit_code(capsys):
    """Trial 484: with --debug a failure raised out of main(), and the command
    exited 1, the code of a resume that is not equivalent."""
    assert main(["run", "tests.programs:factory_raises", "--debug", "--noise-seeds", "0"]) == 2
    err = capsys.readouterr().err
    assert "Traceback (most recent call last):" in err and "no GPU found" in err, err
    assert err.rstrip().splitlines()[-1].startswith("resumecheck: error: "), err


def test_an_option_a_command_does_not_have_is_refused_with_that_commands_usage(capsys):
    assert main(["fuzz", "--noise-seeds", "0"]) == 2  # (run has it; fuzz makes none)
    err = capsys.readouterr().err
    assert err.startswith("usage: resumecheck fuzz ")
    assert "resumecheck fuzz: error: unrecognized arguments: --noise-seeds" in err
    # (a trial: the whole option list came above the error; it is --help's to list)
    assert len(err.splitlines()) == 2 and "(all options: resumecheck fuzz --help)" in err


def test_a_distributed_program_run_without_ranks_is_told_to_give_nproc(monkeypatch):
    """Trial 284: a DDP program's factory, run without --nproc, read "the factory
    raised ValueError: ... environment variable RANK expected ... Fix the factory"."""
    import torch.distributed as dist

    from resumecheck.errors import TargetError
    from resumecheck.program import Target

    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)

    def build(config: dict) -> None:
        dist.init_process_group("gloo")

    with pytest.raises(TargetError) as info:
        Target(factory=build, steps=4).build({})
    said = str(info.value)
    assert "environment variable RANK expected" in said and "Fix the factory" not in said
    assert "give the number of ranks, --nproc N" in said

    # (trial 393: a factory that asked for its rank, the group started by no one)
    def asks_rank(config: dict) -> None:
        dist.get_rank()

    with pytest.raises(TargetError) as info:
        Target(factory=asks_rank, steps=4).build({})
    said = str(info.value)
    assert "Default process group has not been initialized" in said, said
    assert "Fix the factory" not in said and "give the number of ranks, --nproc N" in said
    # (trial 536: inside pytest it was sent to the command line's flag alone)
    assert "or to the pytest marker: @pytest.mark.resumecheck(nproc=N)" in said


def test_a_target_that_imports_a_missing_package_names_that_package(tmp_path):
    """A trial: a found file importing an uninstalled package was told to run
    from its directory or give a file path (it had given one)."""
    from resumecheck.errors import TargetError
    from resumecheck.program import load_target

    program = tmp_path / "needs_pkg.py"
    program.write_text("import nonexistent_pkg_xyz\nTARGET = None\n")
    with pytest.raises(TargetError) as info:
        load_target(f"{program}:TARGET")
    said = str(info.value)
    assert f"{program} imports nonexistent_pkg_xyz, which is not installed" in said
    assert "pip install nonexistent_pkg_xyz" in said and "give a file path" not in said
    with pytest.raises(TargetError, match="cannot import not_a_module_here: No module named"):
        load_target("not_a_module_here:TARGET")


def test_a_target_given_a_setting_it_has_not_is_told_where_that_setting_goes(tmp_path):
    """A trial wrote Target(..., steps_per_epoch=8) and was told only to fix
    the error in its module."""
    from resumecheck.errors import TargetError
    from resumecheck.program import load_target

    head = "import resumecheck\nfrom resumecheck import tiny\n"
    for name, given, told in (
            ("spe.py", "steps_per_epoch=8", "steps_per_epoch is an attribute of your program "
                                            "(the object the factory returns"),
            ("typo.py", "resume_point=4", "Target has no setting 'resume_point' (did you mean "
                                          "'resume_at'?); its settings are factory, run_config")):
        program = tmp_path / name
        program.write_text(head + f"TARGET = resumecheck.Target(factory=tiny.build, {given})\n")
        with pytest.raises(TargetError) as info:
            load_target(f"{program}:TARGET")
        assert told in str(info.value)
        assert "Fix the error in that module" not in str(info.value)
        assert "import_streams" not in str(info.value)  # (none of the user's to give)


def test_a_file_target_that_imports_its_own_package_is_told_the_module_form(tmp_path):
    """A trial: `run mytrain/check.py:T`, whose file imports the package
    `mytrain` beside it, was told to `pip install mytrain` (another project's
    name on PyPI); `mytrain.check:T` from its folder is what works."""
    from resumecheck.errors import TargetError
    from resumecheck.program import load_target

    (tmp_path / "mytrain").mkdir()
    (tmp_path / "mytrain" / "__init__.py").write_text("")
    (tmp_path / "mytrain" / "check.py").write_text("from mytrain import train\nT = None\n")
    with pytest.raises(TargetError) as info:
        load_target(f"{tmp_path / 'mytrain' / 'check.py'}:T")
    said = str(info.value)
    assert f"imports mytrain, which is not installed, but is a package in {tmp_path}" in said
    assert f"Run from {tmp_path} with the target as a module, mytrain.check:T" in said
    assert "pip install" not in said


def test_from_the_packages_own_folder_it_is_told_to_give_the_module_form(tmp_path):
    """The re-check: the user was already in that folder and was told to 'Run from' it."""
    from resumecheck.errors import TargetError
    from resumecheck.program import load_target

    (tmp_path / "mytrain").mkdir()
    (tmp_path / "mytrain" / "__init__.py").write_text("")
    (tmp_path / "mytrain" / "check.py").write_text("from mytrain import train\nT = None\n")
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        with pytest.raises(TargetError) as info:
            load_target("mytrain/check.py:T")
    finally:
        os.chdir(here)
    assert "Give the target as a module, mytrain.check:T, or set PYTHONPATH=" in str(info.value)


def test_a_module_target_whose_sibling_module_is_missing_is_told_the_file_form(tmp_path):
    """`run examples.frameworks.lightning_check:DEFAULT` (whose module imports
    `lightning_train` beside it) was told to `pip install lightning_train`:
    the file form puts that folder on the path."""
    from resumecheck.errors import TargetError
    from resumecheck.program import load_target

    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "mytrain_sibling.py").write_text("T = None\n")
    (tmp_path / "proj" / "check_sib.py").write_text("import mytrain_sibling\nT = None\n")
    here = os.getcwd()
    os.chdir(tmp_path)
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(TargetError) as info:
            load_target("proj.check_sib:T")
    finally:
        os.chdir(here)
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "proj" or m.startswith("proj.")]:
            del sys.modules[name]
    said = str(info.value)
    assert ("proj.check_sib imports mytrain_sibling, which is not installed, but is a module "
            f"beside it in {tmp_path / 'proj'}") in said
    assert "Give the target as a file, proj/check_sib.py:T" in said
    assert f"or set PYTHONPATH={tmp_path / 'proj'}" in said and "pip install" not in said


def test_a_failure_in_the_programs_own_code_says_where_it_was_raised(capsys):
    # a trial: only "train_step() raised ValueError: boom" reached the user, in
    # text, JSON and --debug alike: the program's own line was lost
    programs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs.py")
    with open(programs) as f:
        save_line = next(i for i, line in enumerate(f, 1) if 'raise OSError("disk full")' in line)
    code, out, _ = _run(capsys, "tests.programs:OWN_SAVE_RAISES", "--drop", "none",
                        "--format", "json")
    failure = json.loads(out)["runs"][0]["failure"]
    assert code == 1
    assert f"(at {programs}:{save_line}, in save)" in failure, failure


@pytest.mark.process
def test_a_failure_in_a_loader_worker_says_the_workers_exception_and_line(capsys):
    # a trial: "raised ValueError: Caught ValueError in DataLoader worker process
    # 0.", the worker's traceback, and the line of the next() that received it;
    # a re-check: a class of the program's own (its name has its module's).
    # (In fresh interpreters: a loader worker forked from an xdist worker, which
    # has threads of its own, often stalled 5 s and once for good.)
    programs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs.py")
    with open(programs) as f:
        line = next(i for i, text in enumerate(f, 1) if "is corrupt" in text)
    code, out, _ = _run(capsys, "tests.programs:WORKER_RAISES", "--drop", "none",
                        "--no-determinism-check", "--isolation", "process", "--format", "json")
    (run,) = [r for r in json.loads(out)["runs"] if r["checkpoint"] == "program"]
    assert code == 1
    assert run["failure"] == (
        "step 3: train_step() raised CorruptRow in DataLoader worker process 0: row 0 is "
        f"corrupt\n(shard 3 of 8) (at {programs}:{line}, in __getitem__)"), run["failure"]


def test_a_wrapper_file_without_a_colon_is_read_not_run_for_what_it_binds(tmp_path, capsys):
    """Trial 171: `resumecheck run check.py` of a wrapper whose target is made by
    a function of its own (`TARGET = make_target(train)`) was told to write
    `mytrain:build`; the file is read, never imported (a script would train)."""
    (tmp_path / "check.py").write_text(
        "from rcwrap import make_target\nimport train\n\nTARGET = make_target(train)\n"
        "raise SystemExit('imported')\n")
    where = str(tmp_path / "check.py")
    code, out, err = _run(capsys, where)
    assert code == 2 and "Traceback" not in err and "imported" not in err
    assert f"({where} binds TARGET at its top level)" in err
    assert f"Name the target after a colon: {where}:TARGET" in err


def test_a_setting_read_at_import_is_not_offered_as_the_target(tmp_path, capsys):
    """Trial 255: `resumecheck run train.py` was told `train.py:WORD_DROPOUT`, a
    float read from the environment; a script without a target gets the plain hint."""
    (tmp_path / "train.py").write_text(
        "import os\nimport torch\n\nWORD_DROPOUT = float(os.environ.get('WD', '0.1'))\n"
        "DEVICE = torch.device('cpu')\nLOG = os.getenv('LOG')\n\n\ndef build(config):\n"
        "    return None\n")
    where = str(tmp_path / "train.py")
    code, _, err = _run(capsys, where)
    assert code == 2 and "WORD_DROPOUT" not in err and "DEVICE" not in err, err
    assert "Name the factory after a colon, e.g. mytrain:build or train.py:build" in err, err


def test_version(capsys):  # (trial 171: a usage error)
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"resumecheck {resumecheck.__version__}"


class _AsksGatherFirst:
    """A component whose state_dict() answers only before step 2 (as a sharded
    optimizer's answers only where its state was gathered first)."""

    def __init__(self, program) -> None:
        self.program = program

    def state_dict(self) -> dict:
        if self.program.step >= 2:
            raise RuntimeError("state not gathered on this rank")
        return {"n": self.program.step}

    def load_state_dict(self, state: dict) -> None:
        pass


def test_a_component_whose_state_dict_raises_at_a_capture_is_named_not_the_program():
    """Trial 258: a ZeroRedundancyOptimizer's state_dict() raised at the check's
    first capture, and the user was told to fix the program so that it trains."""
    import torch

    from resumecheck import Attr, ReferenceFailed, StepOutput, Target, verify

    class Program:
        def __init__(self, config: dict) -> None:
            torch.manual_seed(0)
            self.model = torch.nn.Linear(2, 1)
            self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
            self.step = 0

        def components(self) -> dict:
            return {"params": self.model, "optimizer": self.opt,
                    "global_step": Attr(self, "step"), "sharded": _AsksGatherFirst(self)}

        def train_step(self) -> StepOutput:
            loss = self.model(torch.ones(1, 2)).sum()
            loss.backward()
            self.opt.step()
            self.opt.zero_grad()
            self.step += 1
            return StepOutput(loss=loss.detach())

    with pytest.raises(ReferenceFailed) as info:
        verify(Target(factory=Program, steps=4, resume_at=(2,)), drop="none", noise_seeds=0)
    said = str(info.value)
    assert "the declared component `sharded` (_AsksGatherFirst): its state_dict() raised " \
           "RuntimeError: state not gathered on this rank (at " in said, said
    assert "Fix the program" not in said and "Traceback" not in said, said
    # (trial 305: "the uninterrupted reference run ... failed" sent a user to its training code)
    assert said.startswith("the check's own capture of the declared components after step 2 "
                           "of the uninterrupted reference run of "), said
    assert "failed (the training itself did not): " in said



def test_a_type_a_program_or_step_returned_is_named_with_its_article():
    """Trial 435: "the factory returned a int"."""
    from resumecheck.phrases import a_type

    assert (a_type("int"), a_type("float"), a_type("Trainer"), a_type("NoneType")) == (
        "an int", "a float", "a Trainer", "a NoneType")


def test_a_reference_that_stops_on_its_own_is_told_to_check_fewer_steps():
    """Trial 668: early stopping, as designed, raised StopIteration at step 11
    of 12, and the error said to fix the program."""
    from resumecheck.errors import ReferenceFailed

    said = str(ReferenceFailed("check.py:BUGGY", "step 11: train_step() raised StopIteration: "
                               "early stopping: val_loss did not improve", 11))
    assert "Fix the program" not in said
    assert said.endswith("A program that stops on its own (early stopping, the end of its "
                         "data) stops here, before the check's last step: check fewer steps "
                         "(--steps 10 or less); where a resumed run stops is then not "
                         "checked."), said


def test_an_unknown_json_option_says_what_gives_the_json_report(capsys):
    """Trials 808, 818, 820, 824 tried --json, which is --format json."""
    assert main(["run", "--json"]) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --json (the JSON report: --format json)" in err, err
