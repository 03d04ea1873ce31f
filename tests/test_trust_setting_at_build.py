"""Trial 145: a process-wide setting the build makes is said to be set again
by every restart here, which builds the program before its load(); a script
whose own resume path builds otherwise must make it there too."""

from __future__ import annotations

import torch

from resumecheck import verify
from resumecheck.report import RESUME_CODE_UNCHECKED


def test_a_setting_the_build_makes_is_named_on_the_last_lines_of_a_pass():
    was = torch.are_deterministic_algorithms_enabled(), \
        torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(False)
    try:
        report = verify("fixtures.trust.setting_at_build:CORRECT", drop="none", noise_seeds=0)
    finally:
        torch.use_deterministic_algorithms(was[0], warn_only=was[1])
    assert report.equivalent
    assert report.build_settings[0] == (
        "`torch.are_deterministic_algorithms_enabled()`: False → True")
    assert all("deterministic" in s and s.endswith("False → True") for s in report.build_settings)
    # (a trial read the compiler's flag, which that call sets with it, as a setting its
    # build never made: the call is named, the flag it sets too is not)
    assert not any("_inductor" in s for s in report.build_settings), report.build_settings
    lines = report.render().splitlines()
    at = lines.index(RESUME_CODE_UNCHECKED)  # (the last of the caveats: where epochs end
    # is not known for this program, which a line after them says)
    assert lines[at - 1].startswith("not checked: your build sets process-wide settings, which "
                                    "each restart here sets again as it builds the program "
                                    "before your load() (`torch.are_deterministic_algorithms_"
                                    "enabled()`: False")
    assert lines[at - 1] in report.to_json()["caveats"]
    assert lines[-1].startswith("not checked at this resume point: an epoch's end, or a restart "
                                "inside a later epoch: the program does not say where its "
                                "epochs end")
    plain = verify("fixtures.trust.best_so_far:CORRECT", drop="none", noise_seeds=0)
    assert plain.build_settings == [] and not any("process-wide" in c for c in
                                                  plain.to_json()["caveats"])
