"""The CLI end to end: exit codes, formats, messages."""

import json
import re

import pytest

from resumecheck.cli import main

pytestmark = pytest.mark.e2e


def test_run_builtin_json_has_the_documented_fields(capsys):
    code = main(["run", "--format", "json", "--noise-seeds", "1"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["schema"] == "resumecheck.report/1"
    assert out["equivalent"] is True
    assert out["environment"]["threads"] == 1
    runs = out["runs"]
    assert len(runs) == 10
    full, *ablations = runs
    assert full["dropped"] == [] and full["verdict"] == "identical"
    assert full["first_divergent_step"] is None and full["plausible"] is None
    for run in ablations:
        assert run["verdict"] == "diverged"
        assert run["resume_at"] == [8]
        assert run["first_divergent_step"] >= 8
        assert isinstance(run["plausible"], bool)
        assert isinstance(run["explanation"], str) and run["explanation"]
        assert len(run["dropped"]) == 1


def test_table_lists_every_run_with_its_verdict(capsys):
    code = main(["run", "--drop", "scheduler", "--drop", "rng,config", "--noise-seeds", "0"])
    out = capsys.readouterr().out
    assert code == 0
    assert "full resume: EQUIVALENT" in out
    assert "drop scheduler" in out and "drop rng,config" in out
    assert sum(" diverged " in line for line in out.splitlines()
               if line.startswith("drop ")) == 2
    # (a trial read such rows under an EQUIVALENT headline as failures: a line says they are not)
    assert "\ndrop rows: ablations, each leaving a component out of the engine's restore on " \
        "purpose: `diverged` there shows that losing it changes this run (its steps, or, in a " \
        "row marked silent, only what no loss shows), not a failure;" in out


def test_markdown_and_output_file(tmp_path, capsys):
    target = tmp_path / "report.md"
    code = main(["run", "--drop", "none", "--format", "markdown", "--output", str(target),
                 "--noise-seeds", "0"])
    assert code == 0
    # (the verdict in the report's own words: a trial read two spellings of one)
    assert f"resumecheck run: full resume: EQUIVALENT; report written to {target}" in \
        capsys.readouterr().out
    text = target.read_text()
    assert text.startswith("### resumecheck: full resume EQUIVALENT") and "| run | verdict |" in text
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]
    # (a trial: the JSON file had no final newline)
    assert main(["run", "--drop", "none", "--format", "json", "--output", str(target),
                 "--noise-seeds", "0", "--no-determinism-check"]) == 0
    assert target.read_text().endswith("}\n") and text.endswith("\n")


def test_an_output_files_suffix_picks_the_format_where_none_is_given(tmp_path, capsys):
    """Trial 289: `--output report.json` wrote the text table, which json.load refused."""
    import json

    fast = ["run", "--drop", "none", "--noise-seeds", "0", "--no-determinism-check"]
    assert main([*fast, "--output", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["schema"] == "resumecheck.report/1"
    assert main([*fast, "--output", str(tmp_path / "r.md")]) == 0
    assert (tmp_path / "r.md").read_text().startswith("### resumecheck: full resume EQUIVALENT")
    assert main([*fast, "--output", str(tmp_path / "t.json"), "--format", "table"]) == 0
    assert (tmp_path / "t.json").read_text().startswith("resumecheck: ")
    assert main([*fast, "--output", str(tmp_path / "r.txt")]) == 0
    assert (tmp_path / "r.txt").read_text().startswith("resumecheck: ")


def test_not_equivalent_exits_1_and_prints_diagnosis_and_reproduce(capsys):
    code = main(["run", "fixtures.bugs.class01_scheduler_not_saved:BUGGY", "--drop", "none",
                 "--noise-seeds", "0"])
    out = capsys.readouterr().out
    assert code == 1
    assert "NOT EQUIVALENT" in out
    assert "diagnosis: scheduler: last_epoch 0, expected 9" in out
    assert "reproduce: resumecheck run fixtures.bugs.class01_scheduler_not_saved:BUGGY" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--drop", "schedular"], "unknown component 'schedular' (did you mean "
                                          "'scheduler'?); this program declares: params, "
                                          "optimizer"),
        # (a trial: the option's name, not the library's `resume_at=20`)
        (["run", "--resume-at", "16"], "--resume-at 16: each resume point must be an int in 1..15"),
        (["run", "--resume-at", "0"], "--resume-at 0"),
        (["run", "no_such_module:build"], "cannot import no_such_module"),
        (["run", "tests.programs:missing"], "has no attribute 'missing'"),
        (["run", "tests.programs:NOT_A_FACTORY"], "not a program factory"),
        (["run", "tests.programs:not_a_program"], "not a program"),
        (["run", "tests.programs:factory_raises"], "the factory raised RuntimeError: no GPU found"),
        (["run", "nocolon"], "not of the form module:attr"),
        (["run", "missing/file.py:build"], "no such file"),
        (["run", "--rtol", "1e-3"], "give --rtol and --atol together"),
        # a trial: an explicit bitwise was turned into close without a word
        (["run", "--tolerance", "bitwise", "--rtol", "0.1", "--atol", "0.1"],
         "--tolerance bitwise demands identical bits"),
        (["run", "--output", "/no/such/dir/r.json"], "does not exist"),
        (["run", "--drop", "all", "--drop", "rng"], "cannot be combined"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(argv, message, capsys):
    code = main([*argv, "--noise-seeds", "0"])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert "Traceback" not in err
    assert err.startswith("resumecheck: error:")


def test_usage_errors_from_argparse_exit_2(capsys):
    assert main(["run", "--steps", "zero"]) == 2
    assert "expected a whole number" in capsys.readouterr().err
    assert main(["run", "--format", "yaml"]) == 2
    # a trial: a second --resume-at replaced the first without a word
    assert main(["run", "--resume-at", "4", "--resume-at", "13"]) == 2
    err = capsys.readouterr().err
    assert "--resume-at: given twice (4, then 13)" in err
    assert "--resume-at 4,13 restarts one run at 4 and again at 13" in err
    assert main([]) == 2


def test_help_shows_examples(capsys):
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "resumecheck run --drop none --isolation process" in out
    assert "exit codes" in out


@pytest.mark.parametrize("command", ["run", "fuzz"])
def test_help_lists_every_exit_code_the_command_returns(capsys, command):
    """A trial: fuzz's help left out 5, which fuzz returns when a program's
    save() changes state that training reads (the README and run's help said it)."""
    assert main([command, "--help"]) == 0
    codes = capsys.readouterr().out.split("exit codes:", 1)[1]
    listed = set(re.findall(r"(?:^|[\s,])(\d+) ", codes))
    assert {"0", "1", "2", "3", "4", "5", "130"} <= listed, (command, codes)


def test_a_command_that_judges_nothing_writes_its_error_as_json_where_asked(tmp_path, capsys):
    """Trial 158: `run --format json` that refused (exit 3) left standard output
    empty, and a job parsing it read nothing; the error is now a document of
    its own (``resumecheck.error/1``), where the report would have gone."""
    from tests.conftest import check_document

    spec = "fixtures.trust.cached_order:BUGGY"
    assert main(["run", spec, "--drop", "none", "--noise-seeds", "0", "--format", "json"]) == 3
    out, err = capsys.readouterr()
    document = json.loads(out)
    check_document(document)
    assert document["exit_code"] == 3 and document["command"] == "run"
    assert document["target"] == spec and document["error"]["kind"] == "ModuleStateChanged"
    assert err.startswith("resumecheck: error: ")
    assert document["error"]["message"] in err  # (the same words on standard error)
    # to --output, replacing a report from before, and no word that it is stale
    (report := tmp_path / "r.json").write_text("{}")
    assert main(["run", spec, "--drop", "none", "--noise-seeds", "0", "--format", "json",
                 "--output", str(report)]) == 3
    assert json.loads(report.read_text())["exit_code"] == 3
    err = capsys.readouterr().err
    assert "was not written by this command" not in err
    # (trial 421: the report it replaced, with no word of it)
    assert err.endswith(f". The error is written to {report} as JSON (resumecheck.error/1), "
                        "in place of a report.\n"), err
    # a usage error found after the options were read: the same (one argparse
    # refuses is said with the usage line only: the options were not read)
    assert main(["run", "--drop", "all", "--drop", "rng", "--format", "json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["kind"] == "UsageError"
    # never over the program's own source, and never in a table's place
    source = tmp_path / "train.py"
    source.write_text("raise SystemExit('not a target')\n")
    assert main(["run", f"{source}:T", "--format", "json", "--output", str(source)]) == 2
    assert source.read_text() == "raise SystemExit('not a target')\n"
    # (trial 197: an --output the check refuses left no document anywhere: standard output)
    assert json.loads(capsys.readouterr().out)["error"]["kind"] == "OutputError"
    assert main(["run", spec, "--format", "json", "--output",
                 str(tmp_path / "nodir" / "report.json")]) == 2
    assert "does not exist" in json.loads(capsys.readouterr().out)["error"]["message"]
    assert not (tmp_path / "nodir").exists()
    # (but where only the file's name asked for JSON, its reader finds none either way:
    # the terminal gets the message alone, as every new user expected)
    assert main(["run", spec, "--output", str(tmp_path / "nodir" / "report.json")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "does not exist" in err
    assert main(["run", spec, "--drop", "none", "--noise-seeds", "0"]) == 3
    assert capsys.readouterr().out == ""


def test_isolation_process_beside_nproc_says_it_adds_nothing(capsys):
    """Trial 218: `--isolation process` with `--nproc 2` was accepted and
    dropped without a word (from the reproduce command too)."""
    import argparse

    from resumecheck.cli import _settings

    args = argparse.Namespace(steps=4, seed=None, threads=1, isolation="process", timeout=None)
    _settings(args, nproc=2)
    assert capsys.readouterr().err == (
        "resumecheck: note: --isolation process adds nothing to --nproc 2: every run and every "
        "restart is already a launch of its ranks, each starting as a new interpreter does\n")
    _settings(args)
    _settings(argparse.Namespace(**{**vars(args), "isolation": "inprocess"}), nproc=2)
    assert capsys.readouterr().err == ""


def test_with_several_restarts_the_drop_rows_say_they_drop_at_every_one():
    """Trial 496 asked, of restarts at 7 and 29, whether a drop row dropped its
    component at both: it does (``_Restarts.engine``), and the line says so."""
    from resumecheck import verify

    report = verify("resumecheck.tiny:TARGET", drop=["global_step"], resume_at=[4, 10],
                    noise_seeds=0, check_determinism=False)
    assert "\ndrop rows: ablations, each leaving a component out of the engine's restore on " \
        "purpose at every restart of the schedule: `diverged` there" in report.render()
