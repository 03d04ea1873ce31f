"""Adapters for the training frameworks people train with.

Each adapter lives in its own module and imports its framework only when it
is used: importing resumecheck, its CLI or its pytest plugin never imports a
framework. A framework is an optional extra of the package
(``pip install 'resumecheck[accelerate]'``); a target that needs a missing
one gets ``MissingFramework``, which names the extra.

* ``resumecheck.frameworks.accelerate`` — ``accelerate_program``: a program
  from an ``Accelerator`` and what the user prepared, checkpointed with
  ``accelerator.save_state`` / ``load_state``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from resumecheck.errors import MissingFramework

__all__ = ["require"]


def require(module: str, needed_by: str) -> ModuleType:
    """Import a framework, or raise ``MissingFramework`` naming the extra."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != module.split(".")[0]:
            raise  # the framework is there; something it imports is not
        raise MissingFramework(module.split(".")[0], needed_by) from exc
