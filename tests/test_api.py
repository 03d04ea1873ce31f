"""The public facade: __all__ is exactly what the package exposes, and it is cheap."""

import subprocess
import sys

import resumecheck


def test_all_is_exactly_the_public_names():
    public = {name for name in dir(resumecheck) if not name.startswith("_")}
    public -= {"annotations"}
    public -= {n for n in public if type(getattr(resumecheck, n)).__name__ == "module"}
    assert public | {"__version__"} == set(resumecheck.__all__)


def test_all_names_resolve():
    for name in resumecheck.__all__:
        assert getattr(resumecheck, name) is not None


def test_unknown_attribute_is_an_attribute_error():
    try:
        resumecheck.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_component_names_are_the_nine_standard_ones():
    assert resumecheck.STANDARD_COMPONENTS == (
        "params", "optimizer", "scheduler", "scaler", "rng",
        "data_cursor", "sampler_epoch", "global_step", "config",
    )


def test_importing_the_package_and_plugin_does_not_import_torch():
    code = (
        "import sys, resumecheck, resumecheck.pytest_plugin; "
        "assert 'torch' not in sys.modules, 'torch imported'; "
        "assert 'numpy' not in sys.modules, 'numpy imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_each_warning_of_a_check_crosses_from_an_xdist_worker_whole():
    """Trial 160: under `pytest -n 2` a LostStateWarning read
    `LostStateWarning: resumecheck.errors.LostStateWarning: ...`: pytest-xdist
    makes a worker's warning again from its class and ``args``, and could not."""
    import warnings

    from xdist.remote import serialize_warning_message
    from xdist.workermanage import unserialize_warning_message

    from resumecheck import errors

    made = [errors.DiskUseWarning("/tmp", 2 << 30), errors.ScratchElsewhereWarning("/x", "/tmp"),
            errors.LatentGapWarning("t:T", ["rng"], [4], "resumecheck run t:T"),
            errors.LostStateWarning("t:T", ["ema"], "resumecheck run t:T"),
            errors.DrawnAtImportWarning("t:T", ["torch"], "resumecheck run t:T"),
            errors.SideFilesWarning("t:T", "save() wrote a.json", "resumecheck run t:T"),
            errors.UnboundedStepsWarning("t:T"),
            errors.NotStateUnmatchedWarning("t:T", ["histor"], ["history"])]
    for warning in made:
        sent = warnings.WarningMessage(warning, type(warning), "test.py", 1)
        got = unserialize_warning_message(serialize_warning_message(sent)).message
        assert type(got) is type(warning) and str(got) == str(warning)
        assert not str(got).startswith("resumecheck.errors.")
