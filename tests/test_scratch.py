"""A process-isolated segment is told its work directory, which the check
removes whatever ends the segment (a kill included): the framework adapters
make their scratch there (tests/test_frameworks_*.py check that they do)."""

from __future__ import annotations


def test_a_process_isolated_segment_is_told_its_work_directory_for_scratch(tmp_path):
    from resumecheck.segments import SCRATCH_ENV, SegmentSpec
    from resumecheck.transport import child_env

    spec = SegmentSpec(target_spec="resumecheck.tiny:TARGET", config={}, start=0, stop=1,
                       workdir=str(tmp_path), name="s")
    assert child_env(spec)[SCRATCH_ENV] == str(tmp_path)
