"""Segments: a stretch of training between two checkpoints, run for real.

A run is a chain of segments. The first builds the program from the run's
settings and trains from step 0; each later one is a genuine restart: a
fresh program built the way real restarts are started (from the program's
defaults), then restored from the previous segment's checkpoint, minus the
dropped components, then trained on.

Two isolation modes run a segment:

* ``process``: a fresh interpreter (``python -m resumecheck._segment``). The
  ground truth: nothing survives but the checkpoint file.
* ``inprocess``: fresh objects from the factory in this interpreter, after
  every process-global random stream has been reseeded to a different value,
  so leftover state cannot hide a missing restore.

Checkpoints always go through ``torch.save`` and ``torch.load(weights_only=True)``,
so restored state never aliases live objects of the segment before.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import traceback
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

import torch

from resumecheck.components import (
    CONFIG, OPTIMIZER, PARAMS, RNG, launch_global_streams, reseed_global_streams,
)
from resumecheck.errors import CheckpointError, ResumecheckError, StepError, TargetError
from resumecheck.program import BuiltProgram, Target, load_target
from resumecheck.state_diff import reorder_optimizer_state
from resumecheck.trace import StepRecord, Tracer

__all__ = [
    "CHECKPOINT_FORMAT",
    "LiveProgram",
    "Restore",
    "SegmentResult",
    "SegmentSpec",
    "load_checkpoint",
    "run_segment",
]

CHECKPOINT_FORMAT = "resumecheck.checkpoint/1"
Isolation = Literal["process", "inprocess"]


@dataclass(kw_only=True)
class Restore:
    """Where a restarted segment's state comes from."""

    path: str
    """The checkpoint: an engine capture file, or the program's own checkpoint."""
    source: Literal["engine", "program"] = "engine"
    """``engine``: restore each declared component; ``program``: call program.load()."""
    drop: list[str] = field(default_factory=list)
    """Components left as the freshly built program has them."""
    override_path: str | None = None
    """An engine capture whose components in ``override`` replace the checkpoint's
    (for ``source="program"``: loaded into them after the program's load())."""
    override: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class SegmentSpec:
    """One segment to run: plain data, so it can travel to a fresh interpreter."""

    target_spec: str | None
    config: dict[str, Any]
    start: int
    stop: int
    workdir: str
    name: str
    restore: Restore | None = None
    capture_at: list[int] = field(default_factory=list)
    program_save_at: int | None = None
    keep_tensors_after: int | None = None
    reseed: int | None = None
    threads: int = 1
    hash_seed: int | None = None
    """PYTHONHASHSEED of a process-isolated segment (None: the interpreter picks one)."""
    reference_digests: list[dict[str, str]] | None = None
    """The reference's digests per step: full tensors are written only for the
    steps that differ from it (the only ones a comparison will read)."""


@dataclass(kw_only=True)
class SegmentResult:
    """What a segment produced; files live in the run's work directory."""

    records: list[StepRecord]
    names: list[str]
    captures: dict[int, str]
    end_state: str | None
    tensor_dir: str | None = None
    has_own_checkpoint: bool = False
    boundaries: dict[str, int | None] = field(default_factory=dict)
    restored_state: str | None = None
    program_checkpoint: str | None = None
    error: str | None = None
    error_step: int | None = None
    error_stage: str | None = None

    def to_plain(self) -> dict[str, Any]:
        plain = asdict(self)
        plain["records"] = [r.to_plain() for r in self.records]
        plain["captures"] = {str(k): v for k, v in self.captures.items()}
        return plain

    @classmethod
    def from_plain(cls, plain: dict[str, Any]) -> SegmentResult:
        plain = dict(plain)
        plain["records"] = [StepRecord.from_plain(r) for r in plain["records"]]
        plain["captures"] = {int(k): v for k, v in plain["captures"].items()}
        return cls(**plain)


def run_segment(spec: SegmentSpec, isolation: Isolation, target: Target | None = None) -> SegmentResult:
    """Run one segment under the chosen isolation."""
    if isolation == "process":
        return _run_in_subprocess(spec)
    assert target is not None
    return _run_here(spec, target)


def _run_here(spec: SegmentSpec, target: Target) -> SegmentResult:
    work = Path(spec.workdir)
    tensor_dir = work / f"{spec.name}.tensors"
    tensor_dir.mkdir(parents=True, exist_ok=True)
    result = SegmentResult(
        records=[], names=[], captures={}, end_state=None, tensor_dir=str(tensor_dir)
    )
    stage, step = "build", None
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(spec.threads)
    tracer = None
    try:
        if spec.reseed is not None:
            reseed_global_streams(spec.reseed)
        elif spec.restore is None:
            launch_global_streams()
        stage = "restore"
        capture = _engine_capture(spec.restore)
        stage = "build"
        built = target.build(_build_settings(spec.config, spec.restore, capture))
        result.names = list(built.names)
        result.has_own_checkpoint = built.has_own_checkpoint
        result.boundaries = built.boundaries()
        if spec.restore is not None:
            stage = "restore"
            _restore(built, spec.restore, capture)
            built.refresh()
            result.restored_state = str(work / f"{spec.name}.restored.pt")
            save_capture(built, result.restored_state, verify=False)
        if spec.program_save_at == spec.start:  # save right after the restore
            stage = "save"
            result.program_checkpoint = str(work / f"{spec.name}.program{spec.start}")
            _program_save(built, result.program_checkpoint, spec.start)
        stage = "step"
        tracer = Tracer(built, tensor_dir)
        for step in range(spec.start + 1, spec.stop + 1):
            tracer.before_step()
            try:
                out = built.step(step)
            except ResumecheckError:
                raise
            except Exception as exc:
                raise StepError(step, f"train_step() raised {type(exc).__name__}: {exc}") from exc
            tracer.after_step(step, out, partial(_keep_tensors, spec))
            result.records = tracer.records
            if step in spec.capture_at:
                stage = "capture"
                result.captures[step] = str(work / f"{spec.name}.capture{step}.pt")
                save_capture(built, result.captures[step], verify=len(result.captures) == 1)
            if step == spec.program_save_at:
                stage = "save"
                result.program_checkpoint = str(work / f"{spec.name}.program{step}")
                _program_save(built, result.program_checkpoint, step)
            stage = "step"
        stage = "capture"
        result.end_state = str(work / f"{spec.name}.end.pt")
        save_capture(built, result.end_state, verify=not result.captures)
    except Exception as exc:  # a failed segment is a result, not a crash
        result.error = _describe(exc)
        result.error_stage = stage
        result.error_step = getattr(exc, "step", step)
        if not isinstance(exc, ResumecheckError):
            result.error += "\n" + "".join(traceback.format_exception(exc)[-3:])
        if isinstance(exc, TargetError) and spec.restore is None and spec.start == 0:
            raise
    finally:
        if tracer is not None:
            tracer.close()
        torch.set_num_threads(previous_threads)
    return result


def _keep_tensors(spec: SegmentSpec, record: StepRecord) -> bool:
    if spec.keep_tensors_after is None or record.step <= spec.keep_tensors_after:
        return False
    ref = spec.reference_digests
    if ref is None or record.step > len(ref):
        return True
    return ref[record.step - 1] != record.digests


def _engine_capture(restore: Restore | None) -> dict[str, Any] | None:
    """The engine capture a restart restores from, read once (None otherwise)."""
    if restore is None or restore.source != "engine":
        return None
    return load_checkpoint(restore.path)


def _build_settings(
    config: dict[str, Any], restore: Restore | None, capture: dict[str, Any] | None
) -> dict[str, Any]:
    """The settings a restart is built from.

    A real resume reads the run's settings from the checkpoint before it
    builds anything (nanoGPT's model_args, OLMo's config.yaml), so settings
    baked in at build time come back too. When the engine restores the
    ``config`` component and its state is a settings mapping, the restart is
    built from it; when config is dropped, from the program's defaults.
    """
    if restore is None or capture is None or CONFIG in restore.drop:
        return config
    state = capture["components"].get(CONFIG)
    if isinstance(state, dict) and set(state) == {"value"}:
        state = state["value"]
    return dict(state) if isinstance(state, dict) else config


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, ResumecheckError) else f"{type(exc).__name__}: {exc}"


def _restore(built: BuiltProgram, restore: Restore, capture: dict[str, Any] | None) -> None:
    """Restore a fresh program: through its own load(), or from the engine's
    ``capture`` (already read) minus the dropped components."""
    if restore.source == "program":
        try:
            built.program.load(restore.path)
        except Exception as exc:
            problem = f"the program's load() raised {type(exc).__name__}: {exc}"
            damage = _damaged(restore.path)
            if damage:
                problem = f"the checkpoint its save() wrote is truncated or corrupted ({damage}); {problem}"
            raise CheckpointError("load", restore.path, problem) from exc
        if restore.override_path is not None:
            built.refresh()  # load() may have replaced objects
            _load_states(built, _overrides(built, restore), restore.override_path)
        return
    assert capture is not None
    states = capture["components"]
    if restore.override_path is not None:
        states = {**states, **_overrides(built, restore)}
    missing = [c.name for c in built.components
               if c.name not in restore.drop and c.name not in states]
    if missing:
        raise CheckpointError(
            "load", restore.path, f"component {missing[0]!r} is missing from the capture"
        )
    _load_states(built, {n: v for n, v in states.items() if n not in restore.drop}, restore.path)


def _load_states(built: BuiltProgram, states: dict[str, Any], path: str) -> None:
    """Load ``states`` into the declared components of those names."""
    # RNG goes last, and the other components are settled before it: some
    # build what they need lazily and draw a seed when they do (a
    # StatefulDataLoader creates its iterator on the first state_dict() or
    # iter()). Settled first, they draw before the streams are set, as a
    # correct resume must (PITFALLS: a DataLoader shifts the RNG by one draw).
    order = sorted(built.components, key=lambda c: c.name == RNG)
    for comp in order:
        if comp.name not in states:
            continue
        if comp.name == RNG:
            for other in built.components:
                if other.name != RNG:
                    other.obj.state_dict()
        try:
            comp.obj.load_state_dict(states[comp.name])
        except Exception as exc:
            raise CheckpointError(
                "load",
                path,
                f"{comp.name}.load_state_dict raised {type(exc).__name__}: {exc}",
            ) from exc


def _overrides(built: BuiltProgram, restore: Restore) -> dict[str, Any]:
    """States of ``restore.override`` taken from another capture.

    Optimizer state is moved by parameter name: the other capture may list
    the parameters in another order (that is what class-16 bugs do).
    """
    assert restore.override_path is not None
    other = load_checkpoint(restore.override_path)
    states = {n: other["components"][n] for n in restore.override if n in other["components"]}
    if OPTIMIZER in states:
        ours = _meta(built).get("optimizer_params")
        theirs = other.get("meta", {}).get("optimizer_params")
        if ours and theirs:
            states[OPTIMIZER] = reorder_optimizer_state(states[OPTIMIZER], theirs, ours)
    return states


def _damaged(path: str) -> str | None:
    """Why a torch checkpoint file cannot be read at all (None: it reads, or is no file)."""
    if not Path(path).is_file():
        return None
    try:
        torch.load(path, weights_only=True, map_location="cpu")
    except Exception as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "weights_only" in text or "Unsupported global" in text:
            return None  # readable, only not as plain data
        return text
    return None


def _program_save(built: BuiltProgram, path: str, step: int) -> None:
    try:
        built.program.save(path)
    except Exception as exc:
        raise CheckpointError(
            "save", path, f"the program's save() at step {step} raised {type(exc).__name__}: {exc}"
        ) from exc


def capture(built: BuiltProgram) -> dict[str, Any]:
    """The engine's own checkpoint of every declared component."""
    return {
        "format": CHECKPOINT_FORMAT,
        "rank": 0,
        "world_size": 1,
        "meta": _meta(built),
        "components": _states(built),
    }


def _states(built: BuiltProgram) -> dict[str, Any]:
    """Every component's state_dict(), the random streams first: another
    component's state_dict() may draw (a lazily created loader iterator), and
    the capture must hold the streams as they were at the checkpoint."""
    first = sorted(built.components, key=lambda c: c.name != RNG)
    states = {c.name: c.obj.state_dict() for c in first}
    return {c.name: states[c.name] for c in built.components}


def _meta(built: BuiltProgram) -> dict[str, Any]:
    """What comparisons need beside the state: the optimizer's parameter names."""
    opt = built.component(OPTIMIZER)
    if opt is None or not isinstance(opt.obj, torch.optim.Optimizer):
        return {}
    model = built.component(PARAMS)
    names = {}
    if model is not None and isinstance(model.obj, torch.nn.Module):
        names = {id(p): n for n, p in model.obj.named_parameters()}
    return {
        "optimizer_params": [
            names.get(id(p), f"group{g}.param{i}")
            for g, group in enumerate(opt.obj.param_groups)
            for i, p in enumerate(group["params"])
        ]
    }


def save_capture(built: BuiltProgram, path: str, verify: bool = True) -> None:
    """Write the engine's capture; ``verify`` proves at once that it loads with
    weights_only=True, naming the component that would not (done for a
    program's first capture: later ones hold the same kinds of state)."""
    state = capture(built)
    try:
        torch.save(state, path)
    except Exception as exc:
        raise CheckpointError("save", path, f"torch.save failed: {exc}") from exc
    if not verify:
        return
    try:
        torch.load(path, weights_only=True)
    except Exception as exc:
        bad = _unsafe_component(state["components"])
        raise CheckpointError(
            "load",
            path,
            f"component {bad!r} has state that torch.load(weights_only=True) refuses "
            f"({str(exc).splitlines()[0]}); make its state_dict() return tensors, "
            "numbers, strings, lists and dicts only",
        ) from exc


def _unsafe_component(components: dict[str, Any]) -> str:
    import io

    for name, state in components.items():
        buffer = io.BytesIO()
        torch.save(state, buffer)
        buffer.seek(0)
        try:
            torch.load(buffer, weights_only=True)
        except Exception:
            return name
    return "?"


def load_checkpoint(path: str) -> dict[str, Any]:
    """Load an engine capture safely, with a clear error when it is damaged."""
    try:
        data = torch.load(path, weights_only=True)
    except FileNotFoundError:
        raise CheckpointError("load", path, "the file does not exist") from None
    except Exception as exc:
        raise CheckpointError(
            "load", path, f"the file is truncated or corrupted ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''})"
        ) from exc
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError("load", path, f"not a {CHECKPOINT_FORMAT} file")
    return data


def _run_in_subprocess(spec: SegmentSpec) -> SegmentResult:
    if spec.target_spec is None:
        raise TargetError(
            "(an in-memory target)",
            "process isolation needs a target that a fresh interpreter can import",
            "Give the target as module:attr or path/to/file.py:attr, or use "
            "isolation='inprocess'",
        )
    work = Path(spec.workdir)
    spec_path = work / f"{spec.name}.spec.json"
    out_path = work / f"{spec.name}.result.json"
    spec_path.write_text(json.dumps(asdict(spec)))
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(spec.threads)
    if spec.hash_seed is not None:
        env["PYTHONHASHSEED"] = str(spec.hash_seed)
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), *filter(None, [env.get("PYTHONPATH")])])
    proc = subprocess.run(
        [sys.executable, "-m", "resumecheck._segment", str(spec_path), str(out_path)],
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode == 3:
        err = json.loads(out_path.read_text())
        raise TargetError(err["target"], err["problem"], err["hint"])
    if proc.returncode != 0 or not out_path.exists():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        return SegmentResult(
            records=[], names=[], captures={}, end_state=None,
            error=f"the restarted interpreter exited with code {proc.returncode}: "
            + " | ".join(tail),
            error_stage="process",
        )
    return SegmentResult.from_plain(json.loads(out_path.read_text()))


def _subprocess_main(spec_path: str, out_path: str) -> int:
    """Entry point of a process-isolated segment."""
    plain = json.loads(Path(spec_path).read_text())
    if plain.get("restore"):
        plain["restore"] = Restore(**plain["restore"])
    spec = SegmentSpec(**plain)
    try:
        target = load_target(spec.target_spec)
        result = _run_here(spec, target)
    except TargetError as exc:
        Path(out_path).write_text(
            json.dumps({"target": exc.target, "problem": exc.problem, "hint": exc.hint})
        )
        return 3
    Path(out_path).write_text(json.dumps(result.to_plain()))
    return 0


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
        launch_global_streams()
        self.built = target.build(config)
        self.tracer = Tracer(self.built, None)

    def step(self) -> StepRecord:
        self.step_no += 1
        self.tracer.before_step()
        try:
            out = self.built.step(self.step_no)
        except ResumecheckError:
            raise
        except Exception as exc:
            raise StepError(self.step_no, f"train_step() raised {type(exc).__name__}: {exc}") from exc
        return self.tracer.after_step(self.step_no, out, keep_tensors=False)

    def restart(self, reseed: int) -> None:
        path = str(self.work / f"live-{self.step_no}.ckpt")
        own = self.built.has_own_checkpoint
        if own:
            _program_save(self.built, path, self.step_no)
        else:
            save_capture(self.built, path)
        self.tracer.close()
        restore = Restore(path=path, source="program" if own else "engine")
        capture = _engine_capture(restore)
        reseed_global_streams(reseed)
        self.built = self.target.build(_build_settings(self.restart_config, restore, capture))
        _restore(self.built, restore, capture)
        self.built.refresh()
        self.tracer = Tracer(self.built, None)
        shutil.rmtree(path, ignore_errors=True)
        Path(path).unlink(missing_ok=True)

    def close(self) -> None:
        self.tracer.close()
