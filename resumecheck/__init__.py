"""resumecheck: does a training run resumed from a checkpoint continue exactly
like the run that was never interrupted? And if not, which state was lost?

The public API is what ``__all__`` lists; everything else is internal. Names
are imported on first use (PEP 562), so importing the package, and its pytest
plugin with it, does not import torch.
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

__version__ = "0.1.0"

# public name -> the module that defines it
_EXPORTS = {
    "CONFIG": "components",
    "DATA_CURSOR": "components",
    "GLOBAL_STEP": "components",
    "OPTIMIZER": "components",
    "PARAMS": "components",
    "RNG": "components",
    "SAMPLER_EPOCH": "components",
    "SCALER": "components",
    "SCHEDULER": "components",
    "STANDARD_COMPONENTS": "components",
    "Attr": "components",
    "RNGState": "components",
    "Stateful": "components",
    "Value": "components",
    "Tolerance": "compare",
    "ReferenceFailed": "errors",
    "verify": "engine",
    "CheckpointError": "errors",
    "EnvironmentFailure": "errors",
    "InvalidArgument": "errors",
    "MissingFramework": "errors",
    "ResumecheckError": "errors",
    "StepError": "errors",
    "TargetError": "errors",
    "UnknownComponent": "errors",
    "Program": "program",
    "StepOutput": "program",
    "Target": "program",
    "load_target": "program",
    "Finding": "report",
    "Report": "report",
    "RunResult": "report",
    "StreamOffset": "report",
    "NondeterministicBaseline": "errors",
    "ModuleStateChanged": "errors",
    "PHASES": "phases",
    "PhaseTimer": "timing",
    "phase": "phases",
    "ComponentsNotExercised": "errors",
    "ResumeNotEquivalent": "errors",
    "Settings": "settings",
    "assert_components_exercised": "assertions",
    "assert_resume_equivalent": "assertions",
    "MissingExtra": "errors",
    "ReportSchemaError": "errors",
    "ProgressEvent": "progress",
    "Trajectory": "trajectory",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> _Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'resumecheck' has no attribute {name!r}")
    # Not cached in globals(): the module in sys.modules stays the one truth
    # (pytester's in-process runs drop and re-import modules between sessions).
    return getattr(_importlib.import_module(f"resumecheck.{module}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if _TYPE_CHECKING:
    from resumecheck.assertions import assert_components_exercised, assert_resume_equivalent
    from resumecheck.compare import Tolerance
    from resumecheck.components import (
        CONFIG,
        DATA_CURSOR,
        GLOBAL_STEP,
        OPTIMIZER,
        PARAMS,
        RNG,
        SAMPLER_EPOCH,
        SCALER,
        SCHEDULER,
        STANDARD_COMPONENTS,
        Attr,
        RNGState,
        Stateful,
        Value,
    )
    from resumecheck.engine import verify
    from resumecheck.errors import ReferenceFailed
    from resumecheck.phases import PHASES, phase
    from resumecheck.timing import PhaseTimer
    from resumecheck.errors import (
        CheckpointError,
        ComponentsNotExercised,
        EnvironmentFailure,
        InvalidArgument,
        MissingFramework,
        ModuleStateChanged,
        NondeterministicBaseline,
        ResumecheckError,
        ResumeNotEquivalent,
        StepError,
        TargetError,
        UnknownComponent,
    )
    from resumecheck.program import Program, StepOutput, Target, load_target
    from resumecheck.report import Finding, Report, RunResult, StreamOffset
    from resumecheck.settings import Settings
    from resumecheck.errors import MissingExtra, ReportSchemaError
    from resumecheck.progress import ProgressEvent
    from resumecheck.trajectory import Trajectory
