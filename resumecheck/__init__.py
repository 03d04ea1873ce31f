"""resumecheck: does a training run resumed from a checkpoint continue exactly
like the run that was never interrupted? And if not, which state was lost?

The public API is what ``__all__`` lists; everything else is internal.
"""

from __future__ import annotations

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
from resumecheck.engine import ReferenceFailed, verify
from resumecheck.errors import (
    CheckpointError,
    InvalidArgument,
    ResumecheckError,
    StepError,
    TargetError,
    UnknownComponent,
)
from resumecheck.program import Program, StepOutput, Target, load_target
from resumecheck.report import Finding, Report, RunResult

__version__ = "0.1.0"

__all__ = [
    "CONFIG",
    "DATA_CURSOR",
    "GLOBAL_STEP",
    "OPTIMIZER",
    "PARAMS",
    "RNG",
    "SAMPLER_EPOCH",
    "SCALER",
    "SCHEDULER",
    "STANDARD_COMPONENTS",
    "Attr",
    "CheckpointError",
    "Finding",
    "InvalidArgument",
    "Program",
    "RNGState",
    "ReferenceFailed",
    "Report",
    "ResumecheckError",
    "RunResult",
    "Stateful",
    "StepError",
    "StepOutput",
    "Target",
    "TargetError",
    "Tolerance",
    "UnknownComponent",
    "Value",
    "__version__",
    "load_target",
    "verify",
]
