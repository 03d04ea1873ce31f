"""A component the load copies from another declared one after restoring it is
said to hold what that one holds (fixtures/trust/teacher_copied.py; trials 754, 764)."""

from __future__ import annotations

from resumecheck import verify

SPEC = "fixtures.trust.teacher_copied:"
FAST = {"drop": "none", "noise_seeds": 0, "check_determinism": False}


def test_a_teacher_the_load_copies_from_the_student_is_said_to_hold_the_students_state():
    own = verify(SPEC + "RESYNCS", **FAST).full_resume
    [finding] = [f for f in own.diagnosis if f.component == "teacher"]
    assert ("; it holds what `params` holds there, bit for bit: your load() copies it from "
            "`params` after restoring it") in finding.detail, finding.detail
    # (trial 850: "as where none of it came back (a checkpoint that does not keep it, ...)"
    # led the line, and the checkpoint kept it)
    assert "a checkpoint that does not keep it" not in finding.detail, finding.detail
    assert finding.detail.split(" (")[0].endswith("; every entry differs") or \
        "; every entry differs; it holds what `params`" in finding.detail, finding.detail
    assert verify(SPEC + "KEEPS_TEACHER", **FAST).equivalent
