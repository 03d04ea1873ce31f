"""A blind spot whose dropped state the restore of another component puts
back says so, where the build's own digests show it is no fresh build's
state (a trial's loader generator, which its position component's restore
drew to where it was: the report hedged between the two and told it to try
another resume point, at none of which dropping it alone could show
anything); one that is a fresh build's says that alone
(``verdict._held_as``, ``fixtures/trust/generator_replayed.py``)."""

from __future__ import annotations

from resumecheck import verify
from resumecheck.errors import ComponentsNotExercised

SPEC = "fixtures.trust.generator_replayed:TARGET"


def test_a_stream_another_components_restore_puts_back_is_said_so_and_not_sent_elsewhere():
    report = verify(SPEC, noise_seeds=0, check_determinism=False)
    assert report.equivalent
    [rng] = [r for r in report.runs if r.dropped == ["rng"]]
    assert rng.blind_spot
    assert ("(state_dict() bit for bit: not a fresh build's, which the build's own digests "
            "show, so another declared component's restore puts it back)") in rng.explanation
    # (trial 679 read "<that component>" as a placeholder left unfilled)
    assert ("dropping it alone shows nothing at a resume point where that component puts it "
            "back, and the component keeps it there: a resume point where it no longer does "
            "(in another epoch, say) checks it alone, and --drop with rng and that component "
            "together checks them together") in rng.explanation
    assert "<that component>" not in rng.explanation
    assert "a resume point where it has moved from there shows" not in rng.explanation
    [opt] = [r for r in report.runs if r.dropped == ["optimizer"]]  # (plain SGD: no state)
    assert "(state_dict() bit for bit: a fresh build's state)" in opt.explanation
    message = str(ComponentsNotExercised(report, ["rng"]))
    assert ("rng: at the resume point its state is what the restore that drops it leaves (not "
            "a fresh build's: another declared component's restore puts it back), bit for bit: "
            "dropping it puts in the same state, however the program uses it; no resume point "
            "where that component puts it back shows it lost alone") in message, message
    assert "choose a resume point where it has moved" not in message


def test_dropped_with_the_component_that_puts_it_back_the_loss_shows():
    report = verify(SPEC, drop=[["rng", "data_cursor"]], noise_seeds=0, check_determinism=False)
    [both] = [r for r in report.runs if r.dropped == ["rng", "data_cursor"]]
    assert both.verdict == "diverged", both
