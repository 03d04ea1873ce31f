"""Issue 13 §6: the data order shows as data without the user's help."""

import pytest
import torch

from resumecheck import StepOutput, Tolerance, verify
from resumecheck.compare import compare_values
from resumecheck.program import Target
from resumecheck.trace import Tracer

from fixtures.evidence import shuffled_no_samples

ISOLATIONS = ["inprocess", pytest.param("process", marks=pytest.mark.process)]


class _Accumulating:
    """Two micro-batches per step, a keyword argument, no samples returned."""

    def __init__(self, config):
        torch.manual_seed(0)
        self.model = torch.nn.Linear(3, 1)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.samples = config.get("samples", False)

    def components(self):
        return {"params": self.model, "optimizer": self.opt}

    def train_step(self):
        xs = [torch.randn(2, 3), torch.randn(2, 3)]
        loss = sum(self.model(input=x).sum() for x in xs)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return StepOutput(loss=loss.detach(), samples=torch.arange(4) if self.samples else None)


def _traced(config):
    built = Target(factory=_Accumulating).build(config)
    tracer = Tracer(built, None)
    tracer.before_step(1)
    record = tracer.after_step(1, built.step(1), keep_tensors=False)
    return built, tracer, record


def test_every_forward_of_the_step_is_fingerprinted_and_the_hook_goes_on_close():
    built, tracer, record = _traced({})
    assert sorted(k for k in record.digests if k.startswith("inputs")) == ["inputs:0", "inputs:1"]
    assert record.digests["inputs:0"] != record.digests["inputs:1"]
    assert len(built.program.model._forward_pre_hooks) == 1
    tracer.close()
    assert len(built.program.model._forward_pre_hooks) == 0


def test_each_input_is_named_as_the_program_passed_it_with_its_call():
    """A trial's Trainer step: 'the model's input tensor 2 of 4' said neither
    which micro-batch nor which argument."""
    _, tracer, record = _traced({})
    tracer.close()
    assert record.inputs == {"inputs:0": "`input` in its 1st call of 2",
                             "inputs:1": "`input` in its 2nd call of 2"}
    from resumecheck.trace import _input_words, _named_tensors

    x, mask = torch.zeros(1), torch.ones(1)
    named = _named_tensors((x, {"ids": x, "mask": [mask]}), {"labels": x})
    assert [n for n, _ in named] == ["input 1", "input 2 at `['ids']`",
                                     "input 2 at `['mask'][0]`", "`labels`"]
    assert _input_words([(1, "input 1")], 1) == {}  # (one input: "the model's input")
    assert _input_words([(1, "input 1"), (1, "input 2")], 1) == {
        "inputs:0": "input 1", "inputs:1": "input 2"}


def test_returned_samples_are_the_data_and_inputs_are_not_recorded():
    _, tracer, record = _traced({"samples": True})
    tracer.close()
    assert "data" in record.digests
    assert not any(k.startswith("inputs") for k in record.digests)


def test_the_fingerprint_changes_nothing_the_program_computes():
    torch.manual_seed(5)
    untraced = Target(factory=_Accumulating).build({})
    plain_loss = untraced.step(1).loss
    plain_stream = torch.get_rng_state()
    torch.manual_seed(5)
    built, tracer, record = _traced({})
    tracer.close()
    assert record.loss == float(plain_loss)
    assert torch.equal(torch.get_rng_state(), plain_stream)
    assert torch.equal(built.program.model.weight, untraced.program.model.weight)


def test_integer_differences_read_as_counts_not_magnitudes():
    ref = torch.arange(16)
    new = ref.clone()
    new[[5, 9, 12]] = torch.tensor([42, 43, 44])
    ref[5] = 17
    new[5] = 42
    d = compare_values(ref, new, Tolerance.bitwise())
    assert not d.within_tolerance
    assert d.summary == "3 of 16 entries differ, first at position 5: 42 vs 17 in the reference"
    assert d.max_abs is None and d.max_ulp is None


@pytest.mark.e2e
@pytest.mark.parametrize(("bug", "isolation"), [
    ("BUGGY_EPOCH", "inprocess"), ("BUGGY_CURSOR", "inprocess"),
    pytest.param("BUGGY_EPOCH", "process", marks=pytest.mark.process),
])
def test_data_order_bug_is_the_models_inputs_at_the_step_it_happens(bug, isolation):
    report = verify(getattr(shuffled_no_samples, bug), drop="none", isolation=isolation,
                    noise_seeds=0, check_determinism=isolation == "inprocess")
    full = report.full_resume
    assert full.verdict == "diverged"
    assert (full.first_divergent_step, full.first_divergent_quantity) == (
        9, "data (the model's inputs)")
    assert full.divergence_detail.startswith("the model's input in step 9: max |Δ|")
    assert "data (the model's inputs) differs from step 9" in full.explanation


@pytest.mark.e2e
@pytest.mark.parametrize("isolation", ISOLATIONS)
def test_shuffled_twin_with_fingerprinted_inputs_is_equivalent(isolation):
    report = verify(shuffled_no_samples.CORRECT, drop="none", isolation=isolation, noise_seeds=0,
                    check_determinism=isolation == "inprocess")
    assert report.equivalent, report.render()
    assert report.full_resume.verdict == "identical"


@pytest.mark.e2e
def test_integer_samples_read_as_how_many_differ_and_where():
    report = verify("fixtures.bugs.class11_cursor_dropped:BUGGY", drop="none", noise_seeds=0)
    full = report.full_resume
    assert full.first_divergent_quantity == "data (the samples consumed)"
    detail = full.divergence_detail
    assert detail.startswith("step 10: 8 of 8 samples differ, first at position 0: ")
    # (the cursor lost, the epoch's batches are read from its first again)
    assert detail.endswith(" in the reference; they are what the uninterrupted run read at "
                           "step 6 (4 steps earlier), the first of its epoch: the restart reads "
                           "the epoch again from its start (a position that came back but that "
                           "the loop does not skip to, or one not kept)")
    assert detail in full.explanation
    assert "ULP" not in detail and "|Δ|" not in detail


def test_on_many_ranks_the_inputs_are_counted_on_the_rank_that_differs():
    """A trial (DDP, two micro-batches a rank): 'on rank 1 ... the model's
    input tensor 3 of 4' counted both ranks' inputs."""
    import torch

    from resumecheck.evidence import describe_data
    from resumecheck.segments import SegmentResult
    from resumecheck.trace import StepRecord

    def segment(rank1_second: torch.Tensor, digest: str) -> SegmentResult:
        tensors = {"inputs:0[rank 0]": torch.zeros(2), "inputs:1[rank 0]": torch.ones(2),
                   "inputs:0[rank 1]": torch.full((2,), 2.0), "inputs:1[rank 1]": rank1_second}
        digests = {"inputs:0[rank 0]": "a", "inputs:1[rank 0]": "b", "inputs:0[rank 1]": "c",
                   "inputs:1[rank 1]": digest}
        result = SegmentResult(records=[StepRecord(step=1, loss=0.0, digests=digests)],
                               names=[], captures={}, end_state=None, tensor_dir="/nonexistent")
        result.kept["step_1.pt"] = tensors
        return result

    reference = segment(torch.full((2,), 3.0), "d")
    run = segment(torch.tensor([3.0, 4.0]), "e")
    detail = describe_data(reference, [(0, run)], 1)
    # (trial 449: the figure is the rank's whose inputs it describes, and says so)
    assert detail is not None and detail.startswith(
        "the model's input tensor 2 of 2 in step 1 on rank 1: "), detail
    # named as the program passed it, where the trace knew (two micro-batches a rank)
    run.records[0].inputs = {"inputs:1[rank 1]": "`input_ids` in its 2nd call of 2"}
    detail = describe_data(reference, [(0, run)], 1)
    assert detail is not None and detail.startswith(
        "the model's `input_ids` in its 2nd call of 2 in step 1 on rank 1"), detail
    run.records[0].inputs = {"inputs:1[rank 1]": "input 1 in its 2nd call of 2"}
    detail = describe_data(reference, [(0, run)], 1)
    assert detail is not None and detail.startswith(
        "the model's input 1 in its 2nd call of 2 in step 1 on rank 1"), detail
    # (trial 449: both ranks differ; the rank the headline names is the one described)
    run.records[0].digests["inputs:0[rank 0]"] = "a2"
    run.kept["step_1.pt"]["inputs:0[rank 0]"] = torch.ones(2)
    assert "in step 1 on rank 0: " in (describe_data(reference, [(0, run)], 1) or "")
    detail = describe_data(reference, [(0, run)], 1, "inputs:1[rank 1]")
    assert detail is not None and "in step 1 on rank 1: " in detail, detail



def test_a_batch_of_token_ids_that_repeats_tokens_is_matched_all_the_same():
    """Trial 138: a language model's batches of token ids always repeat a
    token, and no batch of them was ever matched with the step that read it
    (the clue that the restart read its epoch again never appeared); a few
    labels still are not."""
    import torch

    from resumecheck.evidence import telling

    tokens = torch.tensor([[5, 9, 9, 2, 7, 5, 1, 3], [4, 4, 8, 6, 2, 0, 11, 9]])
    assert telling(tokens, 1)
    assert not telling(torch.tensor([0, 1, 1, 0, 2, 2, 1, 0, 0, 1, 2, 1, 0, 0, 1, 2]), 1)
    assert not telling(torch.tensor([3, 3, 1]), 1)
    assert telling(torch.tensor([3, 0, 1, 2]), 1)


def test_a_positional_input_is_named_as_the_forward_names_it():
    """Trial 138: "the model's input 1 in its 1st call of 2" of a forward that
    takes one argument, `idx`."""
    from resumecheck.trace import _named_tensors, _positional_names

    class LM(torch.nn.Module):
        def forward(self, idx, mask=None):
            return idx

    assert _positional_names(LM(), 2) == ["`idx`", "`mask`"]
    assert _positional_names(LM(), 3)[2] == "input 3"
    x = torch.zeros(2)
    assert [n for n, _ in _named_tensors((x, {"a": x}), {}, _positional_names(LM(), 2))] == [
        "`idx`", "`mask` at `['a']`"]


def test_a_call_made_at_fewer_steps_is_a_number_of_calls_not_other_data():
    """Trial 159: a validation every third step, decided by a step counter
    the ablation dropped, was the first divergence as `data (the model's
    inputs)`, where every training batch agreed (``fixtures/trust/eval_by_step.py``)."""
    report = verify("fixtures.trust.eval_by_step:TARGET", drop=["global_step"], noise_seeds=0)
    [run] = [r for r in report.runs if r.dropped == ["global_step"]]
    assert run.first_divergent_step == 6
    # (trial 543: counted in calls where each is one tensor, "2 input tensors, 6" of 1
    # call against 3 read as a mislabel)
    assert run.first_divergent_quantity == (
        "number of model calls (1 call, 2 in the uninterrupted run; the first one agrees)")
    assert ("step 6 called the model with 1 input tensor over all its calls, 2 in the "
            "reference; the first one "
            "agrees bit for bit, so the data agree: the reference's `input` in its 2nd call of 2 "
            "was not made on the other side (a call the step makes only at some steps, an "
            "evaluation every few steps, decided otherwise: by a step counter or other state "
            "that differs here)") in run.explanation
    assert "the uninterrupted run called it with" not in run.explanation
    assert report.equivalent  # (the full resume keeps the counter)


def test_a_number_of_calls_whose_first_inputs_differ_says_nothing_agrees():
    """Trial 431: a DQN's step acted (one call on the observation) and learned
    (one on a batch); restarted without its epsilon, it explored instead, and
    the first divergence read "number of model calls (1 input tensor, 2 in the
    uninterrupted run; the first one agrees)", where the batch and the
    observation, the first inputs of the two, did not agree."""
    report = verify("fixtures.trust.explore_calls:TARGET", drop=["epsilon"], noise_seeds=0,
                    check_determinism=False)
    [run] = [r for r in report.runs if r.dropped == ["epsilon"]]
    assert (run.first_divergent_step, run.first_divergent_quantity) == (
        4, "number of model calls (1 call, 2 in the uninterrupted run; the inputs both made "
        "differ too)")
    assert "agree" not in run.explanation, run.explanation


class _Sequences:
    """Token sequences as samples (4 of 3 tokens a step), read from a cursor
    that the checkpoint loses (trial 199: "86 of 96 samples differ" of 16
    sequences of 6 tokens)."""

    def __init__(self, settings: dict) -> None:
        torch.manual_seed(0)
        self.tokens = torch.arange(96).reshape(32, 3)
        self.model = torch.nn.Embedding(96, 2)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.cursor = 0

    def components(self) -> dict:
        return {"params": self.model, "optimizer": self.optimizer}

    def train_step(self):
        from resumecheck import StepOutput

        batch = self.tokens[self.cursor % 8 * 4:self.cursor % 8 * 4 + 4]
        self.cursor += 1
        loss = self.model(batch).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return StepOutput(loss=loss.item(), samples=batch)


def test_samples_of_several_values_each_are_counted_by_sample_and_by_value():
    from resumecheck import Target

    report = verify(Target(factory=_Sequences, steps=6, resume_at=(3,)), drop="none",
                    noise_seeds=0, check_determinism=False)
    detail = report.full_resume.divergence_detail
    # (trial 672: samples=[anchors, others] of 32 pairs read "2 of 2 samples differ")
    assert detail.startswith("step 4: 4 of 4 samples differ, counted by the first dimension of "
                             "what the step returned, 3 values each (12 of 12 values differ, "
                             "first at position 0: 0 vs 36 in the reference)"), detail


def test_integer_inputs_of_another_shape_say_their_shapes():
    """Trial 201: "32 entries, 48 in the reference" of a batch of sequences
    8 tokens long where the uninterrupted run's were 12."""
    from resumecheck.compare import describe_entries

    ref, new = torch.ones(4, 12, dtype=torch.long), torch.ones(4, 8, dtype=torch.long)
    assert describe_entries(ref, new) == (
        "32 entries, 48 in the reference (shape [4, 8], [4, 12] in the reference)")
    assert describe_entries(ref.reshape(-1), new.reshape(-1)) == "32 entries, 48 in the reference"
    # (trial 625: "248 samples, 234 in the reference" of 8 padded sequences against 9)
    rows, more = torch.ones(8, 31, dtype=torch.long), torch.ones(9, 26, dtype=torch.long)
    assert describe_entries(more, rows, "samples") == (
        "8 samples (8 × 31 values), 9 in the reference (9 × 26 values)")


def test_inputs_that_depart_with_a_random_stream_say_a_step_draws_into_them():
    """Two trials (diffusion noise, an autoencoder's input masks): `data (the
    model's inputs)` read as a data loader's fault, where the stream blamed
    below drew what the step added to its batch."""
    from resumecheck.report import CONFIRMED, DIVERGED, Finding, RunResult
    from resumecheck.verdict import _optimizers_rate

    def run(dropped, status):
        return RunResult(dropped=dropped, resume_at=[6], verdict=DIVERGED,
                         first_divergent_key="inputs:x", diagnosis=[Finding(
                             "rng", "torch CPU stream differs from the uninterrupted run's at "
                             "step 6", step=6, status=status)])

    said = ("the model's inputs are its batch and what a step draws into it, noise or masks: a "
            "random stream that differs makes them differ too")
    assert said in _optimizers_rate(run([], CONFIRMED))
    assert said in _optimizers_rate(run(["rng"], None))
    assert _optimizers_rate(run([], None)) == ""  # (no stream shown to be the cause)


def test_a_step_that_did_not_call_the_model_at_all_is_said_so():
    """A trial: "the 0 both have agree bit for bit, so the data agree", of a
    step whose exploration decided its action without the model's one call."""
    report = verify("fixtures.trust.eval_by_step:WARMUP", drop=["global_step"], noise_seeds=0)
    [run] = [r for r in report.runs if r.dropped == ["global_step"]]
    assert run.first_divergent_step == 6
    assert run.first_divergent_quantity == (
        "number of model calls (0 input tensors, 1 in the uninterrupted run: this run did not "
        "call it at all)")
    assert ("step 6 called the model with 0 input tensors over all its calls, 1 in the "
            "reference; this run did not call the model at all: the reference's input was not "
            "made on the other side") in run.explanation
    assert "the 0 both have" not in run.explanation


def test_a_framework_batch_of_whole_numbers_is_told_value_by_value():
    """Trial 402: an adapter's batch, its tensors' values as floats (token ids
    and labels), read "samples of step 1: max |Δ| 130", a figure that means
    nothing of ids; features that are not whole numbers keep their figures."""
    import torch

    from resumecheck.evidence import describe_data
    from resumecheck.segments import SegmentResult
    from resumecheck.trace import StepRecord

    def segment(batch: torch.Tensor, digest: str) -> SegmentResult:
        result = SegmentResult(records=[StepRecord(step=1, loss=0.0, digests={"data": digest})],
                               names=[], captures={}, end_state=None, tensor_dir="/nonexistent")
        result.kept["step_1.pt"] = {"data": batch}
        return result

    ids = torch.tensor([37.0, 2.0, 130.0, 4.0], dtype=torch.float64)
    detail = describe_data(segment(ids, "a"), [(0, segment(ids.flip(0), "b"))], 1)
    assert detail == ("step 1: 4 of 4 values of the batch differ, first at position 0: "
                      "4 vs 37 in the reference"), detail
    features = ids / 3
    detail = describe_data(segment(features, "a"), [(0, segment(features.flip(0), "b"))], 1)
    assert detail is not None and detail.startswith("samples of step 1: max |Δ| "), detail
