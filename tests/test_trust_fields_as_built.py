"""A field of a declared component that the resume point finds as a fresh
build holds it is not checked there. A trial's early stopper kept a best loss
and a patience counter; at the default resume point the counter was 0, the
ablation of the stopper diverged on its best loss alone, and a load that lost
the counter passed (`early_stop: ok` in the test's row). The report now says
which fields the resume point leaves unchecked (``verdict.fields_as_built``,
``fixtures/trust/patience_at_zero.py``)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.pytest_plugin import _summary_row

SPEC = "fixtures.trust.patience_at_zero:"
LINE = ("of `early_stop`, `bad_evals` (0 there, 4 at the end) is at step 4 as the restore "
        "without `early_stop` leaves it (as a fresh build makes it), and the run changes it "
        "later: the row of `early_stop` is no check of this one (other fields of `early_stop` "
        "differ there and made it diverge): a checkpoint that loses it may resume alike here; "
        "a resume point where it has changed checks it (resumecheck fuzz tries them)")


def test_a_counter_as_built_at_the_resume_point_is_said_unchecked_for_the_program_and_its_twin():
    for name in ("FORGETS_PATIENCE", "CORRECT"):
        report = verify(SPEC + name, drop=["early_stop"], noise_seeds=0)
        assert report.equivalent, name  # (true at this point: the counter is 0 in both)
        assert LINE in report.not_checked, name
        # (trial 539: "resume point: of `data_cursor`, `epoch_progress...`" read badly)
        said = LINE.removeprefix("of `early_stop`, ")
        assert f"not checked at this resume point, of `early_stop`: {said}" in report.render()
        row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": report.to_json()})
        assert ("early_stop: exercised, by the state it ends with alone (every step matched), "
                "but not `bad_evals`: as a restore without it leaves it, at the resume "
                "point") in row


def test_a_resume_point_where_the_counter_has_changed_checks_it_and_says_nothing_of_it():
    report = verify(SPEC + "FORGETS_PATIENCE", drop=["early_stop"], resume_at=[6],
                    noise_seeds=0)
    assert not report.equivalent
    [finding] = report.full_resume.diagnosis
    assert (finding.component, finding.detail) == ("early_stop", "bad_evals 0, expected 2")
    assert not any("fresh build's" in w for w in report.not_checked)


def test_nothing_is_said_without_the_components_ablation():
    report = verify(SPEC + "FORGETS_PATIENCE", drop="none", noise_seeds=0)
    assert not any("fresh build's" in w for w in report.not_checked)


def test_with_several_restarts_a_field_is_unchecked_only_where_every_one_finds_it_as_built():
    """Trials 165 and 166: restarted at two points, the line spoke of the
    first alone, though the second checked the field."""
    report = verify(SPEC + "FORGETS_PATIENCE", drop=["early_stop"], resume_at=[4, 6],
                    noise_seeds=0)
    assert not report.equivalent  # (the restart at 6 shows the counter lost)
    assert not any("as the restore without" in w for w in report.not_checked), report.not_checked
    report = verify(SPEC + "CORRECT", drop=["early_stop"], resume_at=[2, 4], noise_seeds=0)
    [line] = [w for w in report.not_checked if "as a fresh build makes it" in w]
    assert line.startswith("of `early_stop`, `bad_evals` (0 there, 4 at the end) is at steps 2 "
                           "and 4 as the restore without `early_stop` leaves it"), line
    row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": report.to_json()})
    assert ("early_stop: exercised, by the state it ends with alone (every step matched), but not "
            "`bad_evals`: as a restore without it leaves it") in row, row


def test_without_ablations_what_the_resume_point_finds_as_built_is_said_and_in_the_row():
    """Trials 161 and 165: with the plugin's default check (the full resume
    alone), a load that lost a counter at 0 there, or a shuffle generator
    before its first epoch, passed with `full resume: ok` and nothing said."""
    line = ("of `early_stop`, `bad_evals` (0 there, 4 at the end) is at step 4 as the run's build "
            "made it, and the run changes it later: a checkpoint that loses it gives it back "
            "here as the run held it, where a restart builds it so (other fields of "
            "`early_stop` differ there "
            "from what the build made: the full resume checks those); a resume point where it "
            "has changed checks it (resumecheck fuzz tries them)")
    for name in ("FORGETS_PATIENCE", "CORRECT"):
        report = verify(SPEC + name, drop="none", noise_seeds=0)
        assert report.equivalent and line in report.not_checked, report.not_checked
        row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": report.to_json()})
        # (trial 445: "a later one" of a pointer that later points held at 0 too)
        assert ("not checked, as the run's build made it at the resume point (one where the run "
                "has changed it shows it): optimizer, early_stop (bad_evals)") in row, row
    # (a run that drops it alone says it in its own words, once)
    report = verify(SPEC + "CORRECT", drop=["early_stop"], noise_seeds=0)
    assert not any("`early_stop`" in w and "build made" in w for w in report.not_checked)
    # (where the counter has moved, the resume point checks it)
    report = verify(SPEC + "FORGETS_PATIENCE", drop="none", resume_at=[6], noise_seeds=0)
    assert not report.equivalent
    assert not any("`early_stop`" in w for w in report.not_checked), report.not_checked
    # (trial 172: beside a failure the row's news is the failure, not what is unchecked)
    report = verify("fixtures.trust.plateau_cut:BUGGY", drop="none", noise_seeds=0)
    assert any("`optimizer`" in w and "build made" in w for w in report.not_checked)
    row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": report.to_json()})
    assert "DIVERGED" in row and "build made" not in row, row


def test_a_component_with_one_value_as_built_is_said_once():
    report = verify("fixtures.bugs.class14_epoch_boundary:CORRECT", drop="none", resume_at=[5],
                    noise_seeds=0)
    assert ("`sampler_epoch` (0 there, 3 at the end) is at step 5 as the run's build made it"
            in "\n".join(report.not_checked)), report.not_checked


class _CyclingPointer:
    """A queue's write pointer that comes back to 0 every 4 steps (trial 170's
    MoCo queue: 0 at the resume point 4 and at the end, 8)."""

    def __init__(self, settings: dict) -> None:
        import torch

        torch.manual_seed(0)
        self.x, self.y = torch.randn(16, 3), torch.randn(16, 1)
        self.model = torch.nn.Linear(3, 1)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.ptr = 0

    def components(self) -> dict:
        from resumecheck import Attr

        return {"params": self.model, "optimizer": self.optimizer,
                "queue_ptr": Attr(self, "ptr")}

    def train_step(self):
        import torch

        from resumecheck import StepOutput

        at = self.ptr * 4
        loss = torch.nn.functional.mse_loss(self.model(self.x[at:at + 4]), self.y[at:at + 4])
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.ptr = (self.ptr + 1) % 4
        return StepOutput(loss=loss.item(), samples=torch.arange(at, at + 4))


def test_a_position_as_built_at_the_resume_point_and_at_the_end_that_cycles_between_is_said():
    from resumecheck import Target

    report = verify(Target(factory=_CyclingPointer, steps=8, resume_at=(4,)), drop="none",
                    noise_seeds=0)
    assert ("`queue_ptr` (0 there and at the end, another value after step 5) is at step 4 as "
            "the run's build made it") in "\n".join(report.not_checked), report.not_checked


def test_a_pass_whose_resume_points_hold_no_epochs_end_says_so_in_its_row():
    """Trial 175: a load that starts the next epoch early at an epoch's end
    passed the plugin's default check, `full resume: ok`; `run` said that no
    epoch's end was tried, the row did not."""
    report = verify("fixtures.bugs.class14_epoch_boundary:BUGGY_DEFAULT_K", drop="none",
                    noise_seeds=0)
    assert report.equivalent
    row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": report.to_json()})
    # (trial 483: in a test, the marker's resume_at, not the CLI's option)
    # (trial 722: the first epoch end after the resume point, where the run has changed
    # what a fresh build holds; the first end of all may hold it as built)
    # (trial 812: "resume_at=[10]" read as in place of the test's own points; trials 825,
    # 830, 837, 838: "the test's mark" of a test with none, its points the target's)
    assert ("not checked: a restart where an epoch ends (resume_at=[9, 10], adding 10, in the "
            "test's mark.resumecheck or its call, checks one)" in row), row
    assert not verify("fixtures.bugs.class14_epoch_boundary:BUGGY_DEFAULT_K", drop="none",
                      noise_seeds=0, resume_at=[10]).equivalent  # (and it shows the bug)


def test_a_tensor_as_built_there_says_its_values_moved_not_the_same_words_twice():
    """Trial 177: "a tensor of 8 values there, a tensor of 8 values at the end"."""
    import torch

    from resumecheck.verdict import _built_then

    assert _built_then(torch.zeros(8), torch.ones(8), None) == (
        "a tensor of 8 values there, other values at the end")
    assert _built_then(0, 4, None) == "0 there, 4 at the end"
    assert _built_then(0, 0, 5) == "0 there and at the end, another value after step 5"


def test_a_field_back_at_its_value_at_the_end_is_said_unchecked_under_drop_all():
    """Trial 268: an episode's step count, at the resume point as built and back
    there at the end, moved between; its component's row departed on another
    field, and under the default --drop all nothing said the count was not
    checked (under --drop none it was)."""
    report = verify("fixtures.trust.episode_cycle:TARGET", noise_seeds=0)
    assert report.equivalent
    [line] = [x for x in report.not_checked if x.startswith("of `env`")]
    assert line.startswith("of `env`, `t` (0 there and at the end, another value after step 6) "
                           "is at step 5 as the restore without `env` leaves it"), line


def test_a_field_another_component_puts_back_is_said_so_not_left_to_guess():
    """A trial: a position component seeded the loader's generator again from
    its epoch, and the line on that generator hedged between a fresh build's
    and another component's, with advice for the first that cannot apply.
    Trial 479: the generator's state read "a tensor of 5056 values"."""
    from resumecheck.phrases import fields_as_built

    report = verify("fixtures.trust.reseeded_by_position:TARGET", drop=["rng"], noise_seeds=0)
    [line] = [w for w in report.not_checked if w.startswith("of `rng`, ")]
    assert line.startswith(
        "of `rng`, `generators.loader` (its state there, another at the end) "
        "is at step 6 as the restore without `rng` leaves it (not as a fresh build makes it: "
        "another declared component puts it back, or your program sets it again where the rest "
        "of `rng` is missing), and the run changes it later: the row of `rng` is no check of "
        "this one (other fields of `rng` differ there and made it diverge): a checkpoint that "
        "loses it from `rng` alone may resume alike here"), line
    assert line.endswith("where another component puts it back, that component keeps it here; "
                         "either way the row that drops `rng` cannot check it at this "
                         "resume point (the full resume's rows compare it as restored)")
    assert "a fresh build's, what another" not in line and "fuzz tries them" not in line
    assert fields_as_built(report.not_checked, "rng") == ["generators.loader"]


def test_a_schedulers_fields_as_built_say_that_stepping_it_with_an_epoch_sets_them_anew():
    """Trial 372: a warm-restart schedule stepped with fractional epochs had its
    cycle length said to be checked at a later resume point, where
    ``step(epoch)`` sets it anew from the epoch and no point checks it."""
    spec = "fixtures.trust.warm_restarts_by_epoch:"
    unless = ("unless the program steps `scheduler` with an explicit epoch, step(epoch), which "
              "sets")
    for name, it in (("BY_EPOCH", "them"), ("BY_STEP", "it")):
        report = verify(spec + name, drop="none", noise_seeds=0)
        [line] = [w for w in report.not_checked if "`scheduler`" in w]
        # (trial 845 read the fuzz hint, said after the hedge, as fuzz closing it)
        assert report.equivalent and unless in line and line.endswith(
            "(resumecheck fuzz tries them), unless the program steps `scheduler` with an "
            f"explicit epoch, step(epoch), which sets {it} from that epoch: then none does"), line
        row = _summary_row({"nodeid": "t.py::t", "target": "t", "report": report.to_json()})
        assert ("; no resume point checks them where the program steps it with an explicit "
                "epoch, step(epoch), which sets them anew)") in row, row
    # (both halves hold: stepped by its epoch, a later point checks nothing of it)
    later = verify(spec + "BY_EPOCH", drop=["scheduler"], resume_at=[10], noise_seeds=0)
    assert [r.verdict for r in later.runs if r.dropped] == ["identical"]
    later = verify(spec + "BY_STEP", drop=["scheduler"], resume_at=[10], noise_seeds=0)
    assert [r.verdict for r in later.runs if r.dropped] == ["diverged"]
    # (trial 502: `_last_lr`, which each step() writes and nothing reads, is no field a
    # checkpoint may lose; trial 372's float to six figures is said of the others)
    report = verify(spec + "BY_STEP", drop="none", noise_seeds=0)
    said = "\n".join(report.not_checked)
    assert "_last_lr" not in said and "`T_cur` (0 there, 1 at the end)" in said, said
    from resumecheck.verdict import _built_then
    assert _built_then(2.048, 2.0480000000000005, None) == \
        "2.048 there, 2.0480000000000005 at the end"  # (alike to six figures: in full)
    # (no hedge where the component is no scheduler)
    report = verify(SPEC + "CORRECT", drop="none", noise_seeds=0)
    assert not any("step(epoch)" in w for w in report.not_checked), report.not_checked
    # (trial 396: a plateau scheduler's step(epoch) sets its last_epoch alone, not
    # its count of evaluations without a better one)
    report = verify("fixtures.trust.plateau_cut:CORRECT", drop="none", resume_at=[4],
                    noise_seeds=0)
    [line] = [w for w in report.not_checked if "`scheduler`" in w]
    assert "`num_bad_epochs` (0 there, 1 at the end)" in line and "step(epoch)" not in line, line


def test_the_rows_fields_as_built_keep_how_many_more_the_line_counts():
    """Trial 450: `env: exercised, but not goal[1], pos[0], pos[1]` where the
    report's line went on "; and 3 more": the row read as though the others
    were checked."""
    from resumecheck.phrases import as_built_at_points, fields_as_built

    line = ("of `env`, `goal[1]` (0 there, 3 at the end); `pos[0]` (1 there, 2 at the end); "
            "`pos[1]` (0 there, 1 at the end); and 3 more are at step 3 as the restore without "
            "`env` leaves them (a fresh build's, what another declared component puts back, or "
            "what your program sets again where the rest is missing), and the run changes them "
            "later")
    assert fields_as_built([line], "env") == ["goal[1]", "pos[0]", "pos[1]", "3 more"]
    built = line.replace("as the restore without `env` leaves them (a fresh build's, what "
                         "another declared component puts back, or what your program sets "
                         "again where the rest is missing)", "as the run's build made them")
    assert as_built_at_points([built]) == ["env (goal[1], pos[0], pos[1], 3 more)"]


def test_a_full_resume_that_failed_is_not_said_to_check_the_other_fields():
    """Trial 462: with --drop none and a full resume that failed after its restore,
    the line said "other fields of `data_cursor` differ there: the full resume
    checks those"; it had checked nothing."""
    from resumecheck.verdict import _as_built_line

    def line(failed: bool) -> str:
        return _as_built_line("early_stop", ["bad_evals"], False, {"bad_evals": 0, "best": 1.0},
                              {"bad_evals": 4, "best": 0.5}, [4], {}, full_failed=failed)

    # (trial 745 read "differ there" without what they differ from)
    assert ("(other fields of `early_stop` differ there from what the build made: the full resume "
            "checks those)") in line(False)
    said = line(True)
    assert ("(other fields of `early_stop` differ there from what the build made: the full resume "
            "failed, and checked none of them)") in said and "checks those" not in said


def test_where_nothing_says_whose_a_field_is_another_components_is_left_to_the_own_resume():
    """Trial 519: of a Lightning program's `hooks`, the torch stream its
    on_save_checkpoint kept read "a checkpoint that loses it may resume alike
    here ... where another declared component puts it back, that component
    keeps it": the adapter's `rng` puts it back in the engine's restore alone,
    Lightning's checkpoint holds no stream, and the program's own resume at
    that point departed where a variant lost it."""
    from resumecheck.verdict import _as_built_words

    line = _as_built_words("of `hooks`, `torch_rng` (...) is at step 10 as the restore "
                           "without `hooks` leaves it", "hooks", True, None)
    assert "that component keeps it" not in line, line
    assert line.endswith(
        "the row of `hooks` is no check of this one (other fields of `hooks` differ there and "
        "made it diverge); where that is a fresh build's, a checkpoint that loses it may "
        "resume alike here, and a resume point where it has changed checks it (resumecheck "
        "fuzz tries them); where another declared component puts it back in the engine's "
        "restore, your own resume shows whether your checkpoint keeps it"), line
