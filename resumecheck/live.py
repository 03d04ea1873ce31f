"""A program trained one step at a time and restarted on demand (the state machine's)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from resumecheck import torch_modes
from resumecheck.capture import save_capture
from resumecheck.components import launch_global_streams, reseed_global_streams
from resumecheck.errors import ResumecheckError, StepError
from resumecheck.module_state import raised
from resumecheck.program import Target
from resumecheck.restore import build_settings, engine_capture, program_save, restore_state
from resumecheck.segments import Restore
from resumecheck.trace import StepRecord, Tracer

__all__ = ["LiveProgram"]


class LiveProgram:
    """A program trained one step at a time and restarted on demand.

    What a hypothesis state machine drives: ``step()`` runs one optimizer step
    and returns its record; ``restart()`` checkpoints (the program's own
    save/load when it has them, else the engine's capture), reseeds every
    global stream, builds a fresh program and restores it, in this
    interpreter, exactly as an in-process segment restart does.
    """

    def __init__(self, target: Target, config: dict[str, Any],
                 restart_config: dict[str, Any], work: str) -> None:
        self.target = target
        self.restart_config = restart_config
        self.work = Path(work)
        self.step_no = 0
        self._caller_modes = torch_modes.fresh()  # (as a new interpreter starts)
        try:
            launch_global_streams()
            self.built = target.build(config)
            self.tracer = Tracer(self.built, None)
        except BaseException:
            torch_modes.put(self._caller_modes)  # (the caller's, whatever the build did)
            raise

    def step(self) -> StepRecord:
        self.step_no += 1
        self.tracer.before_step(self.step_no)
        try:
            out = self.built.step(self.step_no)
        except ResumecheckError:
            raise
        except Exception as exc:
            raise StepError(self.step_no, f"train_step() raised {raised(exc)}") from exc
        return self.tracer.after_step(self.step_no, out, keep_tensors=False)

    def restart(self, reseed: int) -> None:
        path = str(self.work / f"live-{self.step_no}.ckpt")
        own = self.built.has_own_checkpoint
        if own:
            program_save(self.built, path, self.step_no)
        else:
            save_capture(self.built, path)
        self.tracer.close()
        self.built.close()  # a loop program's thread ends before the next one starts
        restore = Restore(path=path, source="program" if own else "engine")
        capture = engine_capture(restore)
        reseed_global_streams(reseed)
        torch_modes.put(torch_modes.FRESH)
        self.built = self.target.build(build_settings(self.restart_config, restore, capture))
        restore_state(self.built, restore, capture)
        self.built.refresh()
        self.tracer = Tracer(self.built, None)
        shutil.rmtree(path, ignore_errors=True)
        Path(path).unlink(missing_ok=True)

    def close(self) -> None:
        try:
            self.tracer.close()
            self.built.close()
        finally:
            torch_modes.put(self._caller_modes)
