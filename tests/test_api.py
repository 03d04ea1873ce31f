"""The public facade: __all__ is exactly what the package exposes."""

import types

import resumecheck


def test_all_is_exactly_the_public_names():
    public = {
        name for name, value in vars(resumecheck).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
        and name != "annotations"
    }
    assert public | {"__version__"} == set(resumecheck.__all__)


def test_all_names_resolve():
    for name in resumecheck.__all__:
        assert getattr(resumecheck, name) is not None


def test_component_names_are_the_nine_standard_ones():
    assert resumecheck.STANDARD_COMPONENTS == (
        "params", "optimizer", "scheduler", "scaler", "rng",
        "data_cursor", "sampler_epoch", "global_step", "config",
    )
