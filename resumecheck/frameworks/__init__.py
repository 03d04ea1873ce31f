"""Adapters for the training frameworks people train with.

Each adapter lives in its own module and imports its framework only when it
is used: importing resumecheck, its CLI or its pytest plugin never imports a
framework. A framework is an optional extra of the package
(``pip install 'resumecheck[accelerate]'``); a target that needs a missing
one gets ``MissingFramework``, which names the extra.

* ``resumecheck.frameworks.accelerate`` — ``accelerate_program``: a program
  from an ``Accelerator`` and what the user prepared, checkpointed with
  ``accelerator.save_state`` / ``load_state``.
* ``resumecheck.frameworks.lightning`` — ``lightning_target``: a Lightning
  module and its data, resumed with ``Trainer.fit(ckpt_path=...)``.
* ``resumecheck.frameworks.transformers`` — ``trainer_target``: a function
  returning a HuggingFace ``Trainer``, resumed with
  ``trainer.train(resume_from_checkpoint=...)``.

Lightning and the HuggingFace Trainer own their training loop; both run it
in a worker thread that their callback parks after every optimizer step
(``resumecheck.frameworks._loop``), so the engine drives them as ordinary
step programs.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from resumecheck.errors import MissingFramework

__all__ = ["lightning_target", "require", "trainer_target"]

_LAZY = {"lightning_target": "lightning", "trainer_target": "transformers"}


def __getattr__(name: str) -> Any:
    # the adapters' modules import torch, never their framework, until a target is built
    if name in _LAZY:
        module = importlib.import_module(f"resumecheck.frameworks.{_LAZY[name]}")
        return getattr(module, name)
    raise AttributeError(f"module 'resumecheck.frameworks' has no attribute {name!r}")


def require(module: str, needed_by: str) -> ModuleType:
    """Import a framework, or raise ``MissingFramework`` naming the extra."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != module.split(".")[0]:
            raise  # the framework is there; something it imports is not
        raise MissingFramework(module.split(".")[0], needed_by) from exc
