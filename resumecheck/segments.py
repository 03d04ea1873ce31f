"""Segments as plain data: what to run, how it restores, what it produced.

A run is a chain of segments (a stretch of training between two
checkpoints). A ``SegmentSpec`` travels to a fresh interpreter as JSON and a
``SegmentResult`` comes back the same way, so both hold plain data only.
The bounds on a segment's phases (one step, everything else) live here too:
the runner enforces them in this interpreter, the transport from outside.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from resumecheck.trace import StepRecord

__all__ = [
    "PHASE_TIMEOUT",
    "SCRATCH_ENV",
    "Isolation",
    "Restore",
    "SegmentResult",
    "SegmentSpec",
    "phase_bound",
    "scratch_dir",
    "timeout_text",
]

SCRATCH_ENV = "RESUMECHECK_SCRATCH"
"""Names, in a process-isolated segment's environment, its work directory:
the check removes it whatever ends the segment (a kill included)."""


def scratch_dir() -> str | None:
    """Where an adapter should make the scratch files of a segment it builds:
    inside the segment's work directory in a process-isolated segment, which
    the check removes even when it kills the segment (None: the system's
    temporary directory; an in-process run removes its own)."""
    path = os.environ.get(SCRATCH_ENV)
    return path if path and os.path.isdir(path) else None


PHASE_TIMEOUT = 600.0
"""Bound in seconds on each part of a segment that is not a training step
(starting an interpreter, building, restoring, saving, capturing), and on
each step of an uninterrupted reference unless a timeout is given."""

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
    """The step after which the program's own save() writes the checkpoint a
    restart will load (``program_checkpoint``)."""
    save_at: list[int] = field(default_factory=list)
    """Steps after which a program with its own save() calls it, to a scratch
    file, as the run every resumed run is compared with does: it checkpoints
    at the check's resume points, and a save() that runs validation or draws
    from a stream moves state the continuation reads. Before the engine's
    capture there, so a restart from that capture continues from it too."""
    watch_save: bool = False
    """Record what each of the program's own saves changes (``save_moved``)."""
    save_after_end: bool = False
    """Once everything else is done (the last step, the end capture, what the
    program holds), call the program's own save() to a scratch file and record
    what it changed, at ``stop`` (``save_moved``): what a save does, asked of
    a run whose compared state it can no longer touch (fuzzing's reference)."""
    keep_tensors_after: int | None = None
    reseed: int | None = None
    launch_moved: list[str] = field(default_factory=list)
    """Global streams a run from step 0 starts from another launch's state
    (``components.launch_global_streams``): the seeding check."""
    threads: int = 1
    hash_seed: int | None = None
    """PYTHONHASHSEED of a process-isolated segment (None: the interpreter picks one)."""
    reference_digests: list[dict[str, str]] | None = None
    """The reference's digests per step: full tensors are written only for the
    steps that differ from it (the only ones a comparison will read)."""
    step_timeout: float | None = None
    """Seconds one training step may take (None: no bound); a step that takes
    longer ends the segment as failed. Other phases get max(this, PHASE_TIMEOUT)."""
    keep_tensor_steps: list[int] = field(default_factory=list)
    """Steps whose full tensors are written whatever the digests say (the
    reference keeps the few steps after each resume point)."""
    max_tensor_steps: int | None = None
    """At most this many differing steps get their full tensors written (None: all)."""
    spare_tensor_steps: list[int] = field(default_factory=list)
    """Steps whose full tensors are written while they add up to at most
    ``spare_tensor_bytes``: the reference keeps a few more steps after each
    resume point when they are small, so that a resumed run that first
    differs there is compared without a replay of the reference."""
    spare_tensor_bytes: int = 0
    keep_samples: bool = False
    """Every step's samples (``data``) are kept too, where its full tensors are
    not: an elastic reference, whose earlier global batches say where a
    continuation's came from (``elastic``)."""
    capture_end: bool = True
    """Capture every component's state at the end (runs judged on their trace alone skip it)."""
    find_undeclared: bool = False
    """Name the tensors and numbers the program holds that the run changed and
    no declared component holds (``undeclared``; the reference)."""
    digest_built: bool = False
    """Right after the build, digest every declared component's state leaf by
    leaf (``SegmentResult.built_leaves``): a reference whose check drops not
    every component alone, so that what a resume point finds as the build
    made it can be said (``verdict.as_built_untried``)."""
    began: float | None = None
    """When the check began (``time.time()``): a file the program's own load()
    reads outside its checkpoint path that nothing changed since then (the
    run's data, a vocabulary) is its input, not state kept beside the
    checkpoint (``side_files.changed_since``; None: every such file is named)."""
    digest_held: bool = False
    """At the end, digest what the program holds outside its declared
    components (``held``): the reference; the engine's own full resume, whose
    restart shows what of it the declared state brings back; and the program's
    own full resume, which shows what of it its checkpoint brings back."""
    held_after: list[int] = field(default_factory=list)
    """Steps after which what the program holds outside its declared
    components is digested (``SegmentResult.held_after``): each resume point
    and the step after it, in the reference and the engine's own full resume
    (whose resume point is right after its restore)."""
    trace_streams: bool = True
    """Record the random streams' digests at the start of a step: at every step
    from step 0, at the first steps after a restore (all that is compared:
    ``evidence.STEPS_AFTER_RESTORE``). Runs never compared stream by stream
    (noise, determinism, replays, a first half) skip them."""
    nproc: int | None = None
    """Run as this many ranks under torch's elastic launcher (resumecheck.distributed);
    None: one process."""
    preload: list[str] = field(default_factory=list)
    """A framework's modules the warm server imports before it forks this
    process-isolated segment (``Target.preload``)."""
    loadable_shapes: list[str] = field(default_factory=list)
    """Structures of captures that earlier segments loaded back with
    weights_only=True (``capture.loadable_shapes``): this segment's captures
    of the same structure are not read back to prove it."""


@dataclass(kw_only=True)
class SegmentResult:
    """What a segment produced; files live in the run's work directory."""

    records: list[StepRecord]
    names: list[str]
    captures: dict[int, str]
    end_state: str | None
    tensor_dir: str | None = None
    has_own_checkpoint: bool = False
    boundaries: dict[str, Any] = field(default_factory=dict)
    advice: dict[str, str] = field(default_factory=dict)
    """Per component, what makes the program's checkpoint hold it, where a
    framework's setting decides that (``BuiltProgram.advice``)."""
    build_settings: list[str] = field(default_factory=list)
    """What the reference set of the process-wide settings as it built the
    program, in words (``module_state.settings_set``): a restart builds it
    the same way before its load(), a script's own resume path may not."""
    restored_state: str | None = None
    program_checkpoint: str | None = None
    kept: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The files of ``tensor_dir`` that an in-process run kept in memory instead
    (file name -> what it holds; ``trace.load_step_tensors`` reads both);
    never sent between processes."""

    error: str | None = None
    error_step: int | None = None
    error_stage: str | None = None
    timed_out: bool = False
    """The error is a phase that outlived its bound (the step timeout), not a
    failure of the program's own."""
    slowest_step: float = 0.0
    """Seconds the slowest training step of this segment took."""
    undeclared: dict[str, str] = field(default_factory=dict)
    """State the program keeps that no declared component holds: where, and
    what, in words (``SegmentSpec.find_undeclared``)."""
    module_moved: list[str] = field(default_factory=list)
    """In a fresh interpreter, the state the program keeps at module level that
    the run changed, in words (``module_state.changed``; the reference, with
    ``SegmentSpec.find_undeclared``): in-process such state refuses the check."""
    unrestorable: list[str] = field(default_factory=list)
    """State the program keeps that no checkpoint can hold, in words (a
    DataLoader's persistent worker processes; ``SegmentSpec.find_undeclared``)."""
    held: dict[str, list[str]] = field(default_factory=dict)
    """Where the program keeps state outside its declared components, and the
    digests of what is there at the end (``SegmentSpec.digest_held``)."""
    held_after: dict[int, dict[str, list[str]]] = field(default_factory=dict)
    """The same after each step of ``SegmentSpec.held_after`` (step -> digests)."""
    held_at_build: dict[str, list[str]] = field(default_factory=dict)
    """The same right after the build (``SegmentSpec.find_undeclared``)."""
    built_leaves: dict[str, dict[str, str]] = field(default_factory=dict)
    """Each declared component's state right after the build, by leaf path
    (``compare.flatten_state``): the leaf's digest (``SegmentSpec.digest_built``)."""
    leaves_after: dict[int, dict[str, dict[str, str]]] = field(default_factory=dict)
    """The same after the step that follows each resume point (step -> digests)."""
    streams_set: dict[str, list[str]] = field(default_factory=dict)
    """Each global stream the program's own load() set from a saved state, and
    the digests of the states it set (``streams.streams_set``)."""
    unreached: dict[str, list[str]] = field(default_factory=dict)
    """Data loaders (component names) the engine put state into at the restore
    while the program kept an iterator it had made from them, and where it
    keeps it: that state may not reach the iterator (``restore.restore_state``)."""
    moved_by_load: dict[str, str] = field(default_factory=dict)
    """Components (names) that came back from their own load in the engine's
    restore and that a later component's load then changed, with the
    components loaded after it, in words (``restore._Watch``)."""
    made_anew: dict[str, list[str]] = field(default_factory=dict)
    """Random states (component names) whose generators another component's
    load_state_dict() made anew during the engine's restore, before the
    engine set the state into the ones held at the build: that component,
    then the generators' names (``restore.restore_state``)."""
    modes_set: dict[str, list[str]] = field(default_factory=dict)
    """What the engine's restore set of the declared modules' modes and frozen
    parameters otherwise than the program held them (``BuiltProgram.modes_set``)."""
    save_moved: dict[int, list[str]] = field(default_factory=dict)
    """What the program's own save() changed at each step where it was watched
    (``SegmentSpec.watch_save``): the declared components whose state differs
    after it from before it, and those whose modules' modes do."""
    side_files: dict[str, list[str]] = field(default_factory=dict)
    """Files the program's save() wrote (``save``) or its load() read
    (``load``) outside the checkpoint path it was given (``side_files``)."""
    loadable_shapes: list[str] = field(default_factory=list)
    """Structures of captures known to load back when the segment ended
    (``SegmentSpec.loadable_shapes``, passed on to the next segment)."""
    model_unhooked: str | None = None
    """Why the model's inputs could not be traced, where its kind takes no
    hooks (``trace.model_unhooked``)."""

    def to_plain(self) -> dict[str, Any]:
        plain = asdict(replace(self, records=[], kept={}))
        del plain["kept"]
        plain["records"] = [r.to_plain() for r in self.records]
        plain["captures"] = {str(k): v for k, v in self.captures.items()}
        plain["held_after"] = {str(k): v for k, v in self.held_after.items()}
        plain["leaves_after"] = {str(k): v for k, v in self.leaves_after.items()}
        plain["save_moved"] = {str(k): v for k, v in self.save_moved.items()}
        return plain

    @classmethod
    def from_plain(cls, plain: dict[str, Any]) -> SegmentResult:
        plain = dict(plain)
        plain["records"] = [StepRecord.from_plain(r) for r in plain["records"]]
        plain["captures"] = {int(k): v for k, v in plain["captures"].items()}
        plain["held_after"] = {int(k): v for k, v in plain.get("held_after", {}).items()}
        plain["leaves_after"] = {int(k): v for k, v in plain.get("leaves_after", {}).items()}
        plain["save_moved"] = {int(k): v for k, v in plain.get("save_moved", {}).items()}
        return cls(**plain)


def phase_bound(phase: str, step_timeout: float | None) -> float | None:
    """Seconds ``phase`` may take under ``step_timeout`` (None: no bound)."""
    if step_timeout is None:
        return None
    return step_timeout if phase == "step" else max(step_timeout, PHASE_TIMEOUT)


def timeout_text(phase: str, step: int | None, bound: float) -> str:
    """What outlived its bound, in words."""
    if phase == "step":
        return f"step {step} took longer than {bound:g} s (the step timeout)"
    what = {"start": "starting the interpreter", "build": "building the program",
            "restore": "restoring the checkpoint", "save": "the program's save()",
            "capture": "capturing state", "exit": "exiting the interpreter"}.get(phase, phase)
    return (f"{what} took longer than {bound:g} s (its bound, the larger of --timeout and "
            f"{PHASE_TIMEOUT:g} s: --timeout alone bounds a step)")

