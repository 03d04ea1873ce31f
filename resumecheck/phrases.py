"""Phrases of a report that its readers match, and what they name.

Torch-free, as ``errors`` and ``settings`` are: the pytest plugin's session
summary reads them in an xdist controller, which runs no check and need
not import torch (a second of every such session) to word a row.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Mapping, Sequence

__all__ = ["ACCELERATE_DATASET", "ADAPTER_LEFT_OUT", "AFTER_LAST_STEP", "AS_THE_BUILD_MADE",
           "BETWEEN_STEPS", "between_steps_line",
           "NOT_SET_BACK", "SET_BY_EPOCH", "as_built_at_points", "changed_after_load",
           "frozen_only", "amount", "BUILDING", "LOSS_LOG",
           "CHANGED_AFTER_LOAD", "CHECKPOINT_LOSES", "READ_BY_NO_STEP", "CHANGED_NO_STEP",
           "GENERATOR_CHANGED",
           "CHECKPOINT_MAY_LOSE", "FEWER_STEPS", "LIGHTNING_DATASET", "LIKE_NAMED_AS_BUILT",
           "LOOP_ENDED", "NOT_DECLARED", "NOT_VALIDATED_AGAIN",
           "MODULE_ATTR_TODO", "framework_module_todo",
           "READ_BEFORE", "NONE_DIFFERS", "a_type",
           "OWN_RESUME_ENDS_OTHERWISE", "OWN_RESUME_ENDS_WITHOUT", "paths_said", "ordinal",
           "under_roots", "UNHELD_POSITION",
           "SET_AGAIN_LATER", "SET_ALIKE_LATER", "set_again_uncompared",
           "FRAMEWORK_RESUME", "IDLE_SEED", "LIGHTNING_LOADER", "LEFT_OUT_ALIKE",
           "LEFT_OUT_ALIKE_MARK", "OWN_THROUGH",
           "lost_through_framework",
           "POSITION_NEW_EPOCH", "POSITION_OTHER_EPOCH", "POSITION_TRANSFORMED", "position_named",
           "POSITION_UNUSED", "POSITION_FIELDS_LEFT", "REORDERED",
           "RESTART_HELD_OTHERWISE", "AS_BUILT_AT_RESUME", "AS_BUILT_CYCLING", "AS_BUILT_MARK",
           "AT_THIS_POINT",
           "as_built_uncompared",
           "at_the_point", "OUTSIDE_THE_CHECKPOINT", "side_files", "ADAPTER_LOOP",
           "framework_generator", "framework_name", "accelerate_scheduler_todo",
           "REGISTER_GENERATOR", "NOT_RESUMABLE",
           "LEFT_UNRESTORED", "MADE_ANEW", "MOVED_BY_LATER_LOAD", "NO_LONGER_USED",
           "drawn_at_import_text", "FETCHED_BEFORE_RESTORE", "GENERATOR_POSITION", "GRADS_SUMMED",
           "HASH_ORDER", "FRESH_BUILD_HOLDS", "PUT_BACK_HOLDS", "AS_A_BUILD_HOLDS", "SKIPS_BLIND",
           "fields_as_built",
           "HASH_ORDER_UNCHECKED", "MODULE_LEVEL", "OLDER_CHECKPOINT", "CAUSE_YET_BLIND",
           "ONE_POSITION",
           "global_streams",
           "CAME_BACK_READ", "MODES_PUT_BACK", "MODULE_AFTER_SAVE",
           "RESTORE_CHANGED", "RESTORING", "STARTED_LEVEL", "STOPPED", "UNDECLARED_LEAD",
           "first_few", "first_line",
           "lost_uncompared", "merge_alike", "merge_items", "uncompared_path", "undeclared_lead",
           "unless_not_state", "UNLESS_NOT_STATE", "KEPT_ALREADY", "SET_BY_LOAD", "place_read_alike",
           "NOT_STEPPED_MODULE",
           "SAME_PLACE", "PLACE_CAME_BACK", "is_place_finding", "RATE_ALONE",
           "RATE_AND_MOMENTUM",
           "NOT_WHAT_IT_MAKES",
           "RATE_SET_SOONER",
           "unused_position"]

CAUSE_YET_BLIND = "yet the full resume departs on it (confirmed in its row)"
"""Said of a blind spot whose dropped component the full resume's diagnosis
confirmed as its cause (trial 158: "no resume point shows it lost" of a
vocabulary that resume point showed lost)."""

OLDER_CHECKPOINT = "your load() restored an older checkpoint"
"""How a run's why opens where its load restored an earlier step's state (the
weights are the reference's after that step, bit for bit)."""

GENERATOR_CHANGED = "whose state the run changed"
"""How a ``Report.undeclared`` line says a random generator (torch's, numpy's,
a ``random.Random``) the run drew from or seeded again (``undeclared._line``)."""

UNHELD_POSITION = "a generator's position, which no checkpoint of yours holds"
"""How a departed own resume's why, and a test's row, name the Python
generators whose lines say ``GENERATOR_POSITION`` (after what a checkpoint
may lose: trial 404's, made anew from a saved count, ended elsewhere only
for a buffer the load lost)."""

GENERATOR_POSITION = "how far it ran is in no checkpoint and cannot be compared"
"""How a ``Report.undeclared`` line says a Python generator's position is state
no checkpoint holds (``undeclared._generator_text``)."""

NOT_SET_BACK = "that the engine's restore of it does not set back"
"""How a `not compared` line says that a field of a declared component of the
program's own is left out of what its state_dict() returns or its
load_state_dict() sets (``undeclared``)."""

AS_THE_BUILD_MADE = "as the run's build made"
"""How a ``Report.not_checked`` line (``verdict.as_built_untried``) says that a
declared component no run dropped alone, or fields of it, is at the resume
points as the uninterrupted run's build made it."""


SET_BY_EPOCH = "step(epoch), which sets"
"""How that line hedges fields of a scheduler, which a program that steps it
with an explicit epoch sets anew from that epoch: no resume point checks them."""


def as_built_at_points(not_checked: list[str]) -> list[str]:
    """The components, with their fields where not all of it, that
    ``Report.not_checked`` says are at the resume points as the run's build
    made them (``early_stop (bad_evals)``; the test's row says them)."""
    out = []
    for line in not_checked:
        if f" {AS_THE_BUILD_MADE} " not in line:
            continue
        if line.startswith("of `"):
            name = line[4:].split("`", 1)[0]
            head = re.split(r" at steps? \d", line)[0]
            fields = re.findall(r"`([^`]+)` \(", head) + _more_fields(head)
            # (trial 485: "none if step(epoch) sets it" could not be read)
            unless = ("; no resume point checks them where the program steps it with an "
                      "explicit epoch, step(epoch), which sets them anew"
                      if SET_BY_EPOCH in line else "")
            out.append(f"{name} ({', '.join(fields)}{unless})")
        else:
            out.append(line[1:].split("`", 1)[0])
    return out


FRESH_BUILD_HOLDS = ("(a fresh build's, what another declared component puts back, or what "
                     "your program sets again where the rest is missing), and the run changes")
"""How a ``Report.not_checked`` line (``verdict.fields_as_built``) says fields
of a declared component are, at the resume point, as the restore without it
leaves them, and change later."""


AS_A_BUILD_HOLDS = "(as a fresh build makes"
"""The same line's words where the fields are a fresh build's (the build's own
digests say so)."""


PUT_BACK_HOLDS = "(not as a fresh build makes"
"""The same line's words where the fields are not a fresh build's: another
declared component puts them back (``verdict._fields_as_built``)."""


def fields_as_built(not_checked: list[str], name: str) -> list[str]:
    """The fields of component ``name`` a ``Report.not_checked`` line says are,
    at the resume point, as the restore without the component leaves them (the
    test's row says them)."""
    line = next((w for w in not_checked if w.startswith(f"of `{name}`, ")
                 and (FRESH_BUILD_HOLDS in w or PUT_BACK_HOLDS in w
                      or AS_A_BUILD_HOLDS in w)), None)
    if line is None:
        return []
    head = re.split(r" at steps? \d", line)[0].removeprefix(f"of `{name}`, ")
    return re.findall(r"`([^`]+)` \(", head) + _more_fields(head)


def _more_fields(head: str) -> list[str]:
    """``["3 more"]`` where a line's fields end "; and 3 more" (trial 450: a
    row named three of six fields, as though the others were checked)."""
    found = re.search(r"; and (\d+) more\b", head)
    return [f"{found.group(1)} more"] if found else []


GRADS_SUMMED = "gradients summed over more than one step"
"""How a ``Report.undeclared`` line says parameters' ``.grad`` carried across a
resume point reached the optimizer's step (``grad_carry``)."""

MODULE_LEVEL = "state your program keeps at module level, which the run changed"
"""How a ``Report.undeclared`` line opens its words on module-level state the
reference changed in a fresh interpreter (``engine._report``)."""

HASH_ORDER = ("the iteration order of a set (or of what is built by iterating one), or hash() "
              "of a string or bytes")
"""What follows an interpreter's hash seed (a trial's data order sorted by
hash() of a string was told "a set, or a dict keyed by hash"; a dict keeps
the order its keys were put in)."""

HASH_ORDER_UNCHECKED = (
    "not checked in-process: an order that follows the hash seed (ids numbered by iterating "
    "set(names), items sorted by hash() of a string), if your program has one: every restart "
    "here shares one hash seed; --isolation process checks it under a second one")
"""Said where in-process restarts cannot show a dependence on the hash seed."""

RESTORING = "restoring the checkpoint"
BUILDING = "building the restarted program"
"""How a run's explanation names the restore as the stage that failed."""
CANNOT_RESTORE_WITHOUT = "a checkpoint that loses it cannot be restored"
"""Said of an ablation whose restore failed where the engine's full resume
restored the same capture: dropping it is what failed the restore, so the
program needs it (``verdict.note_needed_to_restore``; it counts as exercised)."""
_FROZEN_ONLY = re.compile(r"^parameters? `[^`]+`(, `[^`]+`)?( and \d+ more)? "
                          r"(left frozen|trainable) after the load")


def frozen_only(detail: str) -> bool:
    """A finding that differs only in which parameters are frozen
    (``verdict._frozen_differ``): requires_grad, which no state_dict() holds.
    Of the engine's own resume, which sets it as captured at the restore,
    something changed it after (trial 388: a callback that froze layers in
    on_train_begin, after the engine's restore, was said to be a component
    that does not load back its own state)."""
    return _FROZEN_ONLY.match(detail) is not None


def changed_after_load(detail: str) -> bool:
    """A finding of the engine's own resume that something changed between its
    restore and the first step (``CHANGED_AFTER_LOAD``, or frozen flags only)."""
    return CHANGED_AFTER_LOAD in detail or frozen_only(detail)


CHANGED_AFTER_LOAD = ("its load gave back what its state_dict() returned, and something that ran "
                      "between the restore and the first step changed it (a hook of the "
                      "framework's loop that runs as it starts: Lightning's on_fit_start or "
                      "on_train_start, the HuggingFace Trainer's on_train_begin; or, there, "
                      "a data loader's new iterator, which draws its base seed from the "
                      "generator the loader is given, or the first resumed batch's collation, "
                      "run before it is looked at)")
"""Said of a framework component found otherwise right after the restore that
its own load had brought back (a trial: a callback that reset itself in
on_train_begin was said not to load back its own state; trial 283: a
datamodule's generator that Lightning's loop start moved, drawing a
StatefulDataLoader's new iterator's seed, was offered hooks it did not have)."""
AFTER_LAST_STEP = "what train() does after its last step"
"""How a ``Report.not_checked`` line of a Trainer target begins where train()
does more after its last step than a check runs (its best model loaded back)."""
BETWEEN_STEPS = "a restart between the batches of one optimizer step"
"""How a ``Report.not_checked`` line begins where a framework's loop ran
several training batches per optimizer step by the program's own hand
(``between_steps_line``)."""


def between_steps_line(every: str, ends: str) -> str:
    """The ``not_checked`` line of a loop under manual optimization that stepped
    its optimizer ``every`` (``once every 3 batches``), with where its epochs
    end inside a step (``ends``: ``; an epoch ends inside steps 4, 7``, or
    empty): a check restarts only after an optimizer step (trial 875)."""
    return (f"{BETWEEN_STEPS} (under manual optimization this run stepped its optimizer "
            f"{every}{ends}): a check restarts only after an optimizer step, where what "
            "the module keeps from one batch to the next within a step (a count of "
            "batches, gradients summed by hand) is as a step leaves it, so a checkpoint "
            "that loses it resumes alike at every point a check or fuzz tries; a "
            "checkpoint the run writes between them (a ModelCheckpoint at an epoch's end "
            "inside a step, or every few batches) resumes from a place no check tried: "
            "relaunch from one yourself, or save and load such a count where every "
            "checkpoint holds it")


ACCELERATE_DATASET = "loader.dataset"
"""Where an Accelerate target names its prepared loader's dataset, the program's own."""
LIGHTNING_LOADER = "train_dataloader"
"""Where a Lightning target names its training loader of the program's own class
(``frameworks.lightning._loader_roots``)."""
LIGHTNING_DATASET = "train_dataloader.dataset"
"""Where a Lightning target names its training loader's dataset, the program's own
(``undeclared`` says what to do about state it keeps)."""
LOOP_ENDED = "'s loop ended after step"
"""How a framework target's failure says that the framework's loop stopped
before the check's last step (``frameworks._loop``)."""
FEWER_STEPS = "; give the target at least as many steps as the check runs"
"""Where that failure's advice on the target's steps begins (``verdict`` drops
it where the uninterrupted run trained on: not a matter of the steps)."""
NOT_DECLARED = "state you did not declare"
LEFT_OUT_ALIKE = ("; left out alone of the engine's restore, the run departs as your resume "
                  "does, step for step")
"""How a finding of the program's own resume that a rerun put right to no change says that
its ablation alone departs as that resume does (``verdict.note_dropped_alike``)."""
LEFT_OUT_ALIKE_MARK = (" (the likely cause, which a rerun cannot confirm: your load() may read "
                       "it before a rerun puts it right after the load, and put right there the "
                       "run departs no later)")
"""The mark of such a finding (in the diagnosis and in the why's restored-state clause;
trial 694 read one that led with "put right in a rerun, the run departs no later" as
"not the cause")."""
REGISTER_GENERATOR = ("register it, RNGState({'name': generator}) (among the generators of the "
                      "RNGState you declare, or beside it with streams=(): another holds the "
                      "global streams too), to check that it resumes")
"""What a `not compared` line of a generator of the program's own says to do; a
framework's target, which declares the framework's own state only, is told
``framework_generator`` instead (a trial: a Lightning target has no way to declare)."""
def framework_name(restored_by: str) -> str:
    """The framework's name in what restores a framework target's run, in a
    report's words: ``Lightning`` of ``Lightning's restore``, ``Accelerate`` of
    ``Accelerate's load_state()``."""
    return restored_by.split("'s ")[0]


def accelerate_scheduler_todo(name: str) -> str:
    """What keeps a scheduler an Accelerator's ``save_state()`` does not hold
    (trial 616: "only when it was prepared" of one its twin kept by
    registering it; preparing one also changes how often it steps)."""
    return (f"Accelerate's save_state() holds a scheduler only when it was registered or "
            f"prepared: accelerator.register_for_checkpointing({name}) (or {name} = "
            f"accelerator.prepare({name}), which then steps it once per process at each "
            "step() unless split_batches=True)")


def framework_generator(framework: str) -> str:
    """``REGISTER_GENERATOR`` in a framework target's words: keep it in the
    checkpoint the framework writes, through the user's own code it calls
    (``framework``: what restores, in a report's words, ``Lightning's restore``)."""
    name = framework_name(framework)
    how = {"Lightning": "your LightningModule's on_save_checkpoint() and "
                        "on_load_checkpoint(), or your datamodule's state_dict() and "
                        "load_state_dict()",
           "Accelerate": "an object with state_dict() and load_state_dict() given to "
                         "accelerator.register_for_checkpointing()",
           # (trial 607: a subclass's own _save_checkpoint() kept its sampler's state)
           "the HuggingFace Trainer": "a callback that is an ExportableState, or your "
                                      "Trainer subclass's own _save_checkpoint() and "
                                      "_load_from_checkpoint()"}.get(
        name, "a hook or a state_dict() the framework calls")
    return (f"keep its state in the checkpoint {name} writes, through your own code that it "
            f"calls ({how}), so that its restore puts it back")
LOSS_LOG = "a log of the loss, which no step reads unless your program does"
"""How a `not compared` line says a list the program keeps holds the run's
losses, step by step (``undeclared._loss_log``); the WARNING lists it last
among what may explain a departure."""
MODULE_ATTR_TODO = ("keep it in a buffer (register_buffer), or declare it as a component of "
                    "its own (Attr(the module, its name)), to check that it resumes")
"""What a number kept as a plain attribute of a declared module is told (its
state_dict() leaves it out); ``framework_module_todo`` in a framework's words
(trial 571: a plain target's LightningModule was told of Lightning's hooks and
the component `hooks`, which its own save() never calls and only
``lightning_target`` has)."""


def framework_module_todo(framework: str) -> str:
    """``MODULE_ATTR_TODO`` in a framework target's words (trial 292: a Trainer
    target's model attribute was told of LightningModule hooks and of declaring
    a component, which a framework target does not)."""
    name = framework_name(framework)
    how = {"Lightning": "or save it in your LightningModule's on_save_checkpoint() and set "
                        "it in on_load_checkpoint()",
           "Accelerate": "or keep it in an object with state_dict() and load_state_dict() "
                         "given to accelerator.register_for_checkpointing()"}.get(name, "")
    return (f"keep it in a buffer (register_buffer){', ' + how if how else ''}, so that "
            f"{name}'s checkpoint holds it")


LEFT_UNRESTORED = "left it there: it did not restore it"
"""How a stream's line says the restore left it where a fresh launch and the
build did (``evidence``); a framework's advice on keeping it reads it back
(``verdict.give_fixes``)."""
MADE_ANEW = "the restart draws from it as made (or seeded) anew, and it was not restored"
"""How a stream's line says it stands, after the restore, where the build
left it at the uninterrupted run's start (``evidence``): not restored, as
``LEFT_UNRESTORED`` says of one right after the load (``verdict.give_fixes``)."""
MOVED_BY_LATER_LOAD = "which the load of a component restored after it then changed"
"""How a finding ends where the engine's restore brought a component back
through its own load and a later component's load changed it before the first
step (``restore._Watch``, trial 891); the WARNING and the plugin's row read it back."""
NO_LONGER_USED = "which the run no longer uses"
"""How a random state's finding ends where the engine's restore set the
generators it held at the build, after another component's load made them
anew (``verdict``); the WARNING and the plugin's row read it back."""
STREAMS_NOT_KEPT = "where its save keeps the random streams"
"""How a framework's advice says the checkpoint it resumed from held no state of
the streams (the Trainer's missing ``rng_state.pth``): given beside a stream the
restore set nowhere too (``verdict.give_fixes``)."""
NOT_RESUMABLE = "restores a training loader's place in its epoch only where the loader keeps one"
"""How a framework target's why says its training loader keeps no place in its
epoch (``verdict.note_data_not_resumable``; the WARNING reads it back)."""
ADAPTER_LEFT_OUT = "state no declared component holds"
"""What a framework target's texts say for ``NOT_DECLARED``: its components
are the adapter's declaration, not the user's."""
READ_BEFORE = "what the uninterrupted run read at"
"""How a first divergence says the restart's samples are an earlier step's
(``evidence.describe_data``; the WARNING points at it only where it says so)."""

UNDECLARED_LEAD = f": what it leaves different is {NOT_DECLARED}"
"""How a departed own resume with no lead in the declared state opens its
list of likely causes (the launch settings, where suspected, go first)."""
POSITION_UNUSED = ("the declared data position {} came back as saved, yet the samples "
                   "differ first: a position saved where the run was not (counted early or "
                   "late), or a resumed loop that does not act on it as saved (skips none of "
                   "the batches it already read, too few or too many, or makes its iterator "
                   "without it), "
                   "reads other samples so; or what the loader reads depends on state no "
                   "component declares (a curriculum's level, a shard's index)")
"""Said of a full resume whose first departure is the data while the declared
data position came back as saved (a trial's loop restored its position and
never skipped the batches it had read); ``{}``: the position's names, quoted."""
POSITION_FIELDS_LEFT = ("the declared data position {} came back as its state_dict() returns "
                        "it, without {}, which that state leaves out: the likeliest cause of "
                        "the samples that differ")
"""``POSITION_UNUSED`` where the position's own fields are not set back by its
restore (``verdict._position_fields``); ``{}``: its names, then the fields."""
POSITION_OTHER_EPOCH = ("the declared data position {} came back as saved, and the samples "
                        "are those of the same place in another epoch: the position is not "
                        "what differs, the epoch's data is (its order: a sampler's epoch that "
                        "set_epoch sets, or a shuffle generator's state, that the restart does "
                        "not put back; or state the data depends on: a curriculum's level; "
                        "or a resumed loop that does not act on the epoch it came back with, "
                        "and reads an epoch it had read)")
"""``POSITION_UNUSED`` where the samples read are the uninterrupted run's at the
same place of another epoch (a trial's forgotten set_epoch was told of a
position saved where the run was not; trial 297's loop, which ignored the
position it loaded at an epoch's end and read the first epoch again, was told
only of the epoch's order)."""
POSITION_TRANSFORMED = ("the declared data position {} came back as saved, and most of the "
                        "samples agree ({}): the same samples, made otherwise, as a random "
                        "augmentation or masking does when it draws from a stream the restore "
                        "does not set (a DataLoader worker's, seeded anew as each iterator "
                        "starts; a generator of your own) is likelier than a position saved "
                        "where the run was not, which reads other samples throughout")
"""``POSITION_UNUSED`` where fewer than half the values of the first departing
step's samples (of several values each) differ and they are not another epoch's
(trial 150: a mask drawn in the loader's workers was told first of a position
saved where the run was not)."""
STOPPED = "stopped by its time bound"
"""How a run's explanation opens when a phase outlived its bound (not a
failure of the program's own, unless it hangs there): a step's bound is
--timeout, any other phase's the larger of it and ``PHASE_TIMEOUT`` (trial
435: a load that hung past 600 s under --timeout 5 read "stopped by the step
timeout")."""

NONE_DIFFERS = "; no declared component's state (what it saves) differs right after your load()"
"""An own resume whose declared state all came back (trial 428: "no declared
component differs" read as contradicting a field of one held otherwise,
outside what it saves)."""

OUTSIDE_THE_CHECKPOINT = "outside the checkpoint path it was given"
"""How a run's why says the program's save() wrote (or its load() read) files
beside its checkpoint (``verdict.side_files_text``)."""


def side_files(files: Mapping[str, Sequence[str]]) -> str | None:
    """The files a program's save() wrote (``save``) and its load() read
    (``load``) outside its checkpoint (a run's ``side_files``), in words
    (``your save() wrote `progress.json```), or None where there are none.
    Three of each are named, and how many more."""
    def listed(kind: str) -> str:
        named = list(dict.fromkeys(files.get(kind, ())))
        return ", ".join(named[:3]) + (f" and {len(named) - 3} more" if len(named) > 3 else "")

    wrote, read = listed("save"), listed("load")
    said = " and ".join(part for part in (f"your save() wrote {wrote}" if wrote else "",
                                          f"your load() read {read}" if read else "") if part)
    return said or None


ORDER_BEFORE_RESTORE = "its epoch's order was drawn before its random streams were restored"
"""How a framework target's own resume says that the framework made the
resumed epoch's iterator, whose sampler shuffles from torch's global stream,
before it restored that stream (``verdict.note_order_before_restore``)."""

ONE_POSITION = "the end of one epoch and the start of the next are one position"
"""How a data position found in its other form at an epoch's end is said
(``verdict._ONE_POSITION``; its mark reads it: nothing was put back)."""

RATE_SET_SOONER = ("the rate the uninterrupted run's next step stepped with, set sooner (a "
                   "rate the program sets as a step or an epoch starts)")
"""How a learning rate the load set to the next step's rate is said
(``verdict._RATE_SOONER``; its mark reads it: nothing was put back)."""

STARTED_LEVEL = "started level"
"""How a stream's finding says that it was the reference's at the first step
after the restore, and was drawn from more during it (``evidence._detail``;
the WARNING's advice reads it)."""

SKIPS_BLIND = "cannot tell where an epoch of it ends"
"""How a framework target's resume says that its training data has no length
(``verdict.note_lengthless``; the WARNING reads it)."""

FETCHED_BEFORE_RESTORE = "fetched before its random streams were restored"
"""How a framework target's own resume says that the framework fetched (and
collated) the first resumed step's batches before it restored the streams its
data collator or dataset draws from (``verdict.note_draws_before_restore``)."""


def global_streams(streams: Sequence[str]) -> str:
    """``numpy's global stream``, ``numpy's and torch's global streams``."""
    named = " and ".join(f"{name}'s" for name in streams)
    return f"{named} global stream{'s' if len(streams) > 1 else ''}"


def drawn_at_import_text(streams: Sequence[str]) -> str:
    """What a report says of the global streams a program's module drew from
    without a seed as it was imported (``Report.drawn_at_import``)."""
    return (f"as your module was imported it drew from {global_streams(streams)} "
            "without a seed (an order or a split made "
            "at import): every run and restart in this interpreter shares what it drew, while a "
            "real restart imports it again in a new interpreter and draws otherwise; seed it "
            "before that draw, or run with --isolation process, which checks it")


ADAPTER_LOOP = "the loop that ran is resumecheck's"
"""How the own resume's why opens its note where the loop that ran is the
adapter's around the user's step (Accelerate's ``LOOP_NOTE``)."""

FRAMEWORK_RESUME = "the resume that ran is the check's"
"""How the own resume's why opens its note where a framework's own resume
ran (Lightning's, the Trainer's: ``frameworks._loop.loop_note``)."""

LOOP_GOES_ON = "loop goes on otherwise after a restore than in the uninterrupted run"
"""How a framework target whose own loop runs (Lightning's, the Trainer's)
says that loop may be what departs the engine's restart, beside state the
components do not capture (``verdict._its_words``; the WARNING reads it back)."""

AT_THIS_POINT = "named at this resume point"
"""How a ``Report.undeclared`` entry opens the clause on why it is named at
the report's resume points (fuzz names the point: ``at_the_point``)."""

SET_ALIKE_LATER = "until a later step set it alike"
"""How that entry ends where a step after the restart set it as the uninterrupted
run held it: state the steps make again (an episode's position), which a load()
need not put back (trial 579: named among what the load put back)."""
RESTART_HELD_OTHERWISE = (f"{AT_THIS_POINT}: the engine's own restart, which "
                          "restores every declared component, ends with it as the "
                          "uninterrupted run does, but held it otherwise")
"""How a ``Report.undeclared`` entry says why it is named where the engine's own
full resume ends with it alike (when follows: right after its restore at step k,
or after step n)."""

_FUZZ_TRIES = "resumecheck fuzz tries them"
AS_BUILT_MARK = "so a restart holds it alike there whatever the checkpoint keeps"
"""The part of ``AS_BUILT_AT_RESUME`` that says a line's state cannot have made a
restart depart (the WARNING leaves such lines out of its list: trial 148)."""
AS_BUILT_AT_RESUME = (
    AT_THIS_POINT + ": at {at} the uninterrupted run held it as a fresh build "
    f"does, {AS_BUILT_MARK}; a resume point "
    "after the run changes it shows whether it comes back (" + _FUZZ_TRIES + ")")
"""How a ``Report.undeclared`` entry says why it is named where a restart ends with it
alike only because the resume point found it as built (``{at}``: the resume points)."""
AS_BUILT_CYCLING = AS_BUILT_AT_RESUME.split("; a resume point")[0] + (
    "; it changes as the run goes and is back at the build's value at the end too: a "
    "value that cycles (a ring buffer's pointer) or is set back is as built at many "
    "resume points, before this one too; a resume point where the run holds it otherwise "
    "than a fresh build shows whether it comes back (" + _FUZZ_TRIES + ")")
"""``AS_BUILT_AT_RESUME`` of state that the run changed and held as built again at
its end (trial 866: a queue pointer that cycled every 4 steps, told "a resume point
after the run changes it", was tried at 16, as built there too)."""

REORDERED = "lists its parameters in another order than the run that saved it"
"""How an optimizer's finding begins when the restored optimizer holds the
reference's parameters at other positions: its state, saved by position,
belongs to other parameters (an order that follows ``PYTHONHASHSEED``, or
objects' addresses)."""

NOT_STEPPED_MODULE = "a module no optimizer steps"
"""How a first divergence names a parameter of a declared module that no optimizer
steps (an average of the weights: ``verdict``; fuzz's silent summary reads it)."""

UNLESS_NOT_STATE = "unless it is not state"
NOT_WHAT_IT_MAKES = "a load_state_dict() that brings back state but not what it makes"
"""The plugin's row on a restore of every declared component that departs, besides
declared state that is incomplete (trial 831: a position that skipped its epoch's
read batches without reading them; its loader's workers drew afresh)."""
RATE_ALONE = ": only its learning rate differs, which "
"""How an optimizer's finding whose learning rate alone differs says so, whatever it
then names as setting it (the plugin's row, on the controller, which imports no
torch, names the rate by it)."""

RATE_AND_MOMENTUM = ": only its learning rate and momentum differ, which "
"""How an optimizer's finding begins where its rate and momentum alone differ
(``state_diff.MOMENTUM_TOO``; the plugin's row says so, trial 841)."""
SAME_PLACE = "at the same place of another epoch"
"""How a first divergence says the restart read its place in another epoch's order
(``evidence.OTHER_EPOCH`` opens with it)."""
PLACE_CAME_BACK = "its data position came back; it reads another epoch's order"


_PLACE_FIELD = re.compile(r"[\w.\[\]]*?(pos|position|index|idx|offset|cursor|seen|consumed|"
                          r"yielded|start|batch)[\w.\[\]]* ")


def is_place_finding(component: str, detail: str) -> bool:
    """Whether a finding of a restore is of a data position: any of a declared
    ``data_cursor``'s, or a datamodule's field named as a place (``sampler.pos``,
    ``seen``; not a curriculum's ``level``)."""
    base = component.split("[", 1)[0]
    return base == "data_cursor" or base == "datamodule" and bool(_PLACE_FIELD.match(detail))
"""The plugin's row where a data position differed right after the restore and the
steps after it read its place in another epoch's order (trial 833)."""
def place_read_alike(component: str, detail: str, at_first: bool, compared: Sequence[str],
                     differs: Mapping[str, Sequence[int]]) -> bool:
    """A data position's finding at a run's first restore (``at_first``) that its
    load left so, where every step after it read the uninterrupted run's samples
    (``compared`` and ``differs``: the run's trajectory's): its place came back,
    set when the next iterator was made, and it is no lossy load (trial 847: a
    StatefulDataLoader's sampler, `yielded 0, expected 8` right after the
    restore, read "does not load back its own state", every sample alike). The
    report's ``RunResult.lossy_loads`` and the plugin's row, on JSON, ask it."""
    return (at_first and "data" in compared and not differs.get("data")
            and not differs.get("inputs") and is_place_finding(component, detail)
            and not changed_after_load(detail))


SET_BY_LOAD = ("your load() sets it, to neither what the run held when it saved nor what a "
               "fresh build holds")
"""How a fix begins where the load set a component otherwise (``verdict.give_fixes``)."""

KEPT_ALREADY = "a declared component keeps it"
"""How a diagnosis's fix begins where the checkpoint holds the component's state
already (``verdict._streams_held_text``): the report then says no "to keep it"."""
"""How a `not compared` line qualifies what a checkpoint loses (a log, a timer), and
the why and the plugin's row with it (``verdict.NOT_STATE``)."""

CHECKPOINT_LOSES = "your checkpoint loses it"
"""How a ``Report.undeclared`` entry says that the program's own full resume
showed its checkpoint losing that state (held otherwise right after the load
and after the next step, or at the end of a resume whose steps all matched)."""

CHANGED_NO_STEP = ("what differs in it changed no step here: no step reads it (as none reads "
                   "a log), or the steps read it where its other value leads alike (a count "
                   "read modulo a period that this resume point is a multiple of); a later "
                   "step, another resume point, or an evaluation may show it")
"""Why state a resume ends otherwise with changed no step (trial 860: a Lookahead's
counter, read at every step modulo 5, lost at a resume point that is a multiple of 5,
was said to be read by no step, and told to be named not_state)."""
READ_BY_NO_STEP = "; every step after the restart matched all the same: " + CHANGED_NO_STEP
"""What a ``Report.undeclared`` entry the program's own resume ends otherwise with
(or without) adds where that resume matched at every step (trials 735, 744: a log
a subclass kept, named beside the cause with equal weight, or alone on a correct
program, with advice on how to save it)."""

CHECKPOINT_MAY_LOSE = "your checkpoint may lose it"
"""The same where that resume departed at the very step after the load, so
that it was seen otherwise once, right after the load."""

RESTORE_CHANGED = ("the run held it as the uninterrupted run did right before this restore: "
                   "the restore changed it")
"""How a finding at a later restart says that the restore, not the steps
before it, made it differ (``RunResult.lossy_loads``)."""

MODULE_AFTER_SAVE = (
    "; and your LightningModule's on_train_batch_end runs after the callbacks' "
    "on_train_batch_end, where Lightning's checkpoint at a batch's end is written (the "
    "check's, and a ModelCheckpoint of steps'): what it changes there (an average of the "
    "weights kept in the module) is not in that checkpoint, and a resume from it misses "
    "that batch's change (a checkpoint written at an epoch's end holds it)")
"""What a Lightning target's own resume adds where its module overrides
on_train_batch_end (``frameworks.lightning._changed_after_save``); the WARNING
leads with it (``report._incomplete_state_notice``)."""

MODES_PUT_BACK = "every step matches, but this is no blind spot"
"""How an ablation's why opens where the engine's restore put back the modes or
frozen parameters the program held otherwise without the dropped component
(``verdict.modes_set_over``)."""

CAME_BACK_READ = "yet its restore carried state the steps read"
"""How a finding of the engine's full resume, a declared component otherwise
right after the restore, says that dropping it departs before that resume
does: its restore carried what those steps read (a load applied when the next
iterator is made), so it is no lossy load (``RunResult.lossy_loads``)."""

NOT_VALIDATED_AGAIN = "a resume from it does not validate again"
"""How a run's why says that the framework's loop validated after the step
its checkpoint was written at, which the resume does not run again."""

OWN_RESUME_ENDS_OTHERWISE = "your own resume (save/load) ends with it otherwise"
"""How a ``Report.undeclared`` entry says that the program's own full resume
ends with that state otherwise than the uninterrupted run did."""

OWN_RESUME_ENDS_WITHOUT = ("your own resume (save/load) ends without it "
                           "(nothing there made it again)")
"""The same of an entry (a dict's, a list's) the uninterrupted run ends with
and that resume does not hold at its end."""


SET_AGAIN_LATER = "a later step setting it again"
"""How a ``Report.undeclared`` entry says the program's own resume held it
otherwise after its load() and ends with it alike all the same."""


def set_again_uncompared(undeclared: list[str]) -> list[str]:
    """Of what is not compared, what the program's own resume held otherwise
    right after its load() and after the next step, and ends with as the
    uninterrupted run did (``SET_AGAIN_LATER``): its checkpoint loses it."""
    return [uncompared_path(what) for what in undeclared if f"{SET_AGAIN_LATER}: " in what]


def lost_through_framework(undeclared: list[str]) -> bool:
    """Whether what is not compared is said of a framework's own resume, whose
    target declares the framework's own state only: no component can be added
    (trial 507: the pytest warning told a Trainer target to declare one)."""
    return any(OWN_THROUGH in what for what in undeclared)


def lost_uncompared(undeclared: list[str]) -> list[str]:
    """Of what is not compared (``Report.undeclared``), what the program's own
    full resume ends with otherwise than the uninterrupted run (its checkpoint
    likely loses it), by where the program keeps it; not a loader's own
    generator that seeds no worker (``IDLE_SEED``: it changes no step, and
    ``--strict`` failed a correct program on it, trial 424)."""
    return [uncompared_path(what) for what in undeclared
            if _OWN_ENDS.search(what) and IDLE_SEED not in what]


IDLE_SEED = "the workers' base seed alone, which nothing then reads"
"""How a `not compared` line says a DataLoader's own generator serves only the
base seed of workers the loader does not have (``undeclared._IDLE_SEED_TODO``)."""


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``11th``, ``23rd``."""
    tail = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{tail}"


def under_roots(path: str, roots: Sequence[str]) -> bool:
    """Whether a path the program holds is one of ``roots`` or inside one
    (``data_collator``, ``data_collator.rng``, ``data_collator[0]``): what a
    framework runs before the state right after its restore is looked at."""
    return any(path == root or path.startswith((f"{root}.", f"{root}[")) for root in roots)


def paths_said(paths: list[str], quote: str = "`") -> str:
    """Paths for a sentence, two or more entries of one dict or list said as one
    (trial 178: fourteen keys of two caches made one headline): "`state.cache[...]`
    (7 entries), `ema`"."""
    bases: Counter[str] = Counter()
    for path in paths:
        base, n = _entries_of(path)
        if base is not None:
            bases[base] += n
    out: list[str] = []
    for path in paths:
        base, _ = _entries_of(path)
        if base is None or bases[base] < 2:
            out.append(f"{quote}{path}{quote}")
        elif f"{quote}{base}[...]{quote} ({bases[base]} entries)" not in out:
            out.append(f"{quote}{base}[...]{quote} ({bases[base]} entries)")
    return ", ".join(out)


def _entries_of(path: str) -> tuple[str | None, int]:
    """``("state.cache", 1)`` of ``state.cache[(6, 0)]``, ``("state.cache", 2)``
    of two entries said as one (``state.cache[(6, 0)], [(7, 1)]``: ``merge_items``);
    ``(None, 0)`` of a path that names no entry."""
    found = re.match(r"^(.+?)((?:, )?\[[^\[\]]*\])+$", path)
    if found is None or ", [" not in path and not _ENTRY.match(path):
        return None, 0
    return found.group(1), path.count(", [") + 1


OWN_THROUGH = "your own resume (through "
"""How a framework target's `not compared` line opens what its own resume did:
``your own resume (through the HuggingFace Trainer's restore)``, not through a
save() and load() of the program's."""
_OWN_ENDS = re.compile(
    r"your own resume \((?:save/load|through [^)]*)\) ends (?:with it otherwise|without it)")
"""``OWN_RESUME_ENDS_OTHERWISE`` or ``OWN_RESUME_ENDS_WITHOUT``, or a framework
target's rewording (``your own resume (through the HuggingFace Trainer's restore) ...``)."""


def at_the_point(undeclared: list[str], resume_at: list[int]) -> list[str]:
    """``Report.undeclared`` said where the resume point is not the reader's
    (fuzz, which looked at the default one: trial 137 read "named at this
    resume point" under a search of 72 schedules)."""
    points = ", ".join(map(str, resume_at))
    # (trial 149: "resumecheck fuzz tries them" under fuzz's own search, which had;
    # a later one read "there, too, it is not compared" of a value that a declared
    # component's state_dict() held at those points, which `run` there showed)
    tried = ("the examples above resumed at later points too: where a step they ran "
             "reads it, it came back; whether a declared component holds it, "
             "`resumecheck run --resume-at` a later point shows")
    return [what.replace(AT_THIS_POINT, f"named at the default resume point ({points})")
            .replace(_FUZZ_TRIES, tried) for what in undeclared]


def at_the_schedule(undeclared: list[str], schedule: list[int]) -> list[str]:
    """``Report.undeclared`` of the run that reproduced fuzz's minimal failing
    schedule, said of that schedule, under fuzz's own output (trial 223 read
    "named at this resume point" and "resumecheck fuzz tries them" there)."""
    points = ",".join(map(str, schedule))
    return [what.replace(AT_THIS_POINT, f"named at the minimal schedule's resume point "
                                        f"({points})")
            .replace(_FUZZ_TRIES, "`resumecheck run --resume-at` a later point checks it")
            for what in undeclared]


LIKE_NAMED_AS_BUILT = ", of a like name, as built there too"
"""How a `not compared` line says that a declared component returns a field of
a like name, as built at the resume point too, which may hold it
(``undeclared.alike_named``)."""


def as_built_uncompared(undeclared: list[str]) -> list[str]:
    """Of what is not compared, what the resume points found as a fresh build
    holds it (any restart holds it alike there: ``AS_BUILT_AT_RESUME``); one a
    declared component may hold under a like name says so (trial 374: a row
    said a position's `batch_in_epoch` unchecked, which its `batch` held)."""
    marker = AS_BUILT_AT_RESUME.split("{at}")[1].split(";")[0]
    out = []
    for what in undeclared:
        if marker in what:
            like = re.search(rf"\(((?:`\w+` returns [^;(]+?)(?:; `\w+` returns [^;(]+?)*)"
                             rf"{LIKE_NAMED_AS_BUILT}", what)
            held = like.group(1).replace("` returns `", "`'s `") if like else ""
            out.append(uncompared_path(what) + (f" (perhaps compared as {held})" if like else ""))
    return out


def uncompared_path(what: str) -> str:
    """Where the program keeps what a ``Report.undeclared`` entry names
    (``state.ema`` of ``state.ema (AveragedModel: ...)``; a callback's
    class is part of its path: ``callbacks (EMA).shadow``, ``callbacks (EMA#2).shadow``)."""
    found = _HOLDER.match(what)
    return found.group(1) if found else what.split(" (", 1)[0]


_HOLDER = re.compile(r"^((?:[^ ]| \([\w.#]+\)(?=[.\[]))+) \(")


def unless_not_state(undeclared: list[str], paths: list[str]) -> str:
    """``, unless it is not state`` where each `not compared` line of ``paths``
    says so (a log, a timer), for what repeats their "your checkpoint loses it"
    (the own resume's why, the plugin's row: trials 791, 796); '' otherwise."""
    said = all(UNLESS_NOT_STATE in what for what in undeclared if uncompared_path(what) in paths)
    return f", {UNLESS_NOT_STATE}" if said else ""


def merge_items(undeclared: list[str]) -> list[str]:
    """``Report.undeclared`` with the entries of two or more items of one
    list said alike (``buffer[0]`` ... ``buffer[14]``, every word after the
    path the same) as one entry, ``buffer[0..14] (each of these 15 items: ...)``
    (a trial: a shuffle buffer's fifteen tuples printed fifteen lines; another
    trial's two validation results, two identical long lines)."""
    groups: dict[tuple[str, str], list[int]] = {}
    for what in undeclared:
        found = _item_key(what)
        if found is not None:
            groups.setdefault(found[0], []).append(found[1])
    entries: dict[tuple[str, str], list[str]] = {}
    for what in undeclared:
        found_entry = _entry_key(what)
        if found_entry is not None:
            entries.setdefault(found_entry, []).append(what)
    out, said, said_entries = [], set(), set()
    for what in undeclared:
        item = _item_key(what)
        key = item[0] if item is not None else None
        entry = _entry_key(what)
        if entry is not None and len(entries[entry]) > 1:
            if entry not in said_entries:
                said_entries.add(entry)
                out.append(_entries_said(entry[0], entries[entry]))
        elif key is None or len(groups[key]) < 2:
            out.append(what)
        elif key not in said:
            said.add(key)
            base, rest = key
            items = sorted(groups[key])
            which = (f"{items[0]}..{items[-1]}" if len(items) > 2 and
                     items == list(range(items[0], items[-1] + 1)) else ",".join(map(str, items)))
            out.append(f"{base}[{which}] (each of these {len(items)} items: "
                       f"{rest.removeprefix(' (')}")
    return out


def _item_key(what: str) -> tuple[tuple[str, str], int] | None:
    """An item's entry as (its list's path, its words with the item's index
    written ``[*]`` where they name it again: ``as data_cursor.buf[*]``), and
    its index; None: not an item of a list."""
    path = uncompared_path(what)
    found = _ITEM.match(path)
    if found is None:
        return None
    index = found.group(2)
    rest = re.sub(rf"(?<=[\w\]])\[{index}\]", "[*]", what[len(path):])
    return (found.group(1), rest), int(index)


_ITEM = re.compile(r"^(.*)\[(\d+)\]$")
"""A path that is an item of a list (``data_cursor.buffer[3]``)."""


def _entry_key(what: str) -> tuple[str, str] | None:
    """An entry of a dict whose key is no index (``state.cache[(6, 0)]``) as its
    dict's path and its words with each count of tensors, values or numbers
    written ``#`` (a cache's entries differ in their sizes); None otherwise."""
    path = uncompared_path(what)
    found = _ENTRY.match(path)
    if found is None or _ITEM.match(path):
        return None
    return found.group(1), _COUNTS.sub(r"# \2", what[len(path):])


def _entries_said(base: str, entries: list[str]) -> str:
    """Two or more of a dict's entries said alike as one line (trial 178: a
    cache's fourteen keys, fourteen lines), each count as the range it spans:
    ``state.cache[(6, 6)], [(7, 4)] (each of these 2 entries: tuple: 4 tensors,
    102 to 133 values, ...``."""
    keys = [uncompared_path(e)[len(base):] for e in entries]
    counts = [[int(n) for n, _ in _COUNTS.findall(e[len(uncompared_path(e)):])]
              for e in entries]
    spans = iter([f"{min(c)} to {max(c)}" if min(c) != max(c) else str(c[0])
                  for c in zip(*counts)])
    first = entries[0][len(uncompared_path(entries[0])):]
    words = _COUNTS.sub(lambda m: f"{next(spans)} {m.group(2)}", first)
    return (f"{base}{', '.join(keys)} (each of these {len(entries)} entries: "
            f"{words.removeprefix(' (')}")


def merge_alike(undeclared: list[str]) -> list[str]:
    """``Report.undeclared`` with the lines of two or more attributes of one
    name said alike (every word after the path the same, each path's
    segments apart) as one line, the paths as a pattern:
    ``params.bert.*.dropout.p (8 alike: params.bert.embeddings.dropout.p,
    ..., ...; each float: ...`` (a trial's dropout schedule: eight lines of
    600 characters each, one per layer)."""
    def key(what: str) -> tuple[str, str] | None:
        path = uncompared_path(what)
        if "." not in path or path.endswith("]"):  # (entries and items: merge_items)
            return None
        return path.rsplit(".", 1)[1], what[len(path):]

    groups: dict[tuple[str, str] | None, list[str]] = {}
    for what in undeclared:
        groups.setdefault(key(what), []).append(uncompared_path(what))
    out, said = [], set()
    for what in undeclared:
        paths = groups[key(what)]
        if key(what) is None or len(paths) < 2:
            out.append(what)
        elif key(what) not in said:
            said.add(key(what))
            shown = ", ".join(paths[:2]) + (", ..." if len(paths) > 2 else "")
            out.append(f"{path_pattern(paths)} ({len(paths)} alike: {shown}; each "
                       f"{what[len(uncompared_path(what)):].removeprefix(' (')}")
    return out


def path_pattern(paths: list[str]) -> str:
    """Paths of one attribute name as one, their segments apart written ``*``:
    ``params.bert.*.dropout.p``."""
    split = [p.split(".") for p in paths]
    shortest = min(len(s) for s in split)
    head = 0
    while head < shortest - 1 and len({s[head] for s in split}) == 1:
        head += 1
    tail = 1
    while tail < shortest - head and len({s[-tail - 1] for s in split}) == 1:
        tail += 1
    return ".".join([*split[0][:head], "*", *split[0][-tail:]])


_ENTRY = re.compile(r"^(.+)(\[[^\[\]]*\])$")
"""A path that is an entry of a dict (``state.adj_cache[(6, 0)]``): its dict's path, its key."""

_COUNTS = re.compile(r"\b(\d+) (tensors?|values?|numbers?)\b")
"""A count in an entry's words (``4 tensors``, ``102 values``)."""


def first_few(items: list[str], shown: int = 5) -> str:
    """The first ``shown`` of ``items``, and how many more: ``a, b, c, d, e and
    3 more`` (a trial read a list cut at five as all that differed)."""
    more = len(items) - shown
    return ", ".join(items[:shown]) + (f" and {more} more" if more > 0 else "")


def undeclared_lead(text: str) -> str | None:
    """The ``UNDECLARED_LEAD`` that ``text`` holds, in a program's words or a
    framework target's (None: none)."""
    for lead in (UNDECLARED_LEAD, UNDECLARED_LEAD.replace(NOT_DECLARED, ADAPTER_LEFT_OUT)):
        if lead in text:
            return lead
    return None


POSITION_NEW_EPOCH = ("the declared data position {} came back as saved, and every step "
                      "read what the uninterrupted run read until a new epoch began: the "
                      "position is not what differs, the new epoch's order is (see below)")
"""``POSITION_UNUSED`` where the data first differs at the first step of a new epoch
after the restore (trial 451: an epoch that began inside a step, half its samples
another epoch's, was told first of a position saved one batch early or late)."""


def unused_position(text: str) -> str | None:
    """The ``POSITION_UNUSED`` (or ``POSITION_OTHER_EPOCH``) sentence that
    ``text`` holds (None: none)."""
    for sentence in (POSITION_UNUSED, POSITION_OTHER_EPOCH, POSITION_TRANSFORMED,
                     POSITION_NEW_EPOCH, POSITION_FIELDS_LEFT):
        head, tail = sentence.split("{}")[0], sentence.split("{}")[-1]
        start = text.find(head)
        end = text.find(tail, start)
        if start >= 0 and end >= 0:
            return text[start:end + len(tail)]
    return None


def position_named(said: str) -> str | None:
    """The position's names (quoted) in a ``POSITION_UNUSED`` sentence ``said``
    (None: ``said`` is another of the sentences ``unused_position`` finds)."""
    head, tail = POSITION_UNUSED.split("{}")
    if not (said.startswith(head) and said.endswith(tail)):
        return None
    return said[len(head):said.index(" came back")]


def amount(size: float) -> str:
    """Bytes in words: ``141 TB``, ``1.3 GB``, ``240 MB``."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            shown = f"{size / scale:.2g}" if size < 10 * scale else f"{size / scale:.0f}"
            return f"{shown} {unit}"
    return f"{size:.0f} bytes"


def first_line(text: str) -> str:
    """A message's first line; where it ends with a colon, the next line too (a
    trial's report cut torch's "Error(s) in loading state_dict for Classifier:"
    there, and said nothing of which keys), and the short lines after it that
    each name one more fact (trial 886: Accelerate's "... does not match the
    number of registered objects:" cut after "Found checkpoints: 1", which left
    out "Registered objects: 0", the one clue)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    if not lines[0].endswith(":") or len(lines) < 2:
        return lines[0]
    facts = [lines[1]] + list(itertools.takewhile(
        lambda line: len(line) <= 60 and re.fullmatch(r"[\w ()'-]+: \S.*", line) is not None,
        lines[2:5]))
    return f"{lines[0]} " + "; ".join([f.rstrip(".") for f in facts[:-1]] + facts[-1:])


def a_type(name: str) -> str:
    """A type's name with its article: ``a float``, ``an int`` (trial 435:
    "the factory returned a int")."""
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


SAVED_AT_BATCH_END = (
    "; and the check writes Lightning's checkpoint in on_train_batch_end, where a "
    "ModelCheckpoint of steps writes, not at an epoch's end, where one of epochs (Lightning's "
    "default) writes: a resume from such a checkpoint is not checked here (a trial's departed "
    "from the second step after it)")
"""What a Lightning target's own resume adds where the run's checkpoints are written
at epoch ends (``_saved_where``)."""

EPOCH_END_UNCHECKED = (
    "not checked: a resume from a checkpoint written at an epoch's end, where a ModelCheckpoint "
    "of epochs (Lightning's default) writes (the target's trainer has no ModelCheckpoint of "
    "steps, every_n_train_steps, so which your run writes is not known here): the check "
    "writes Lightning's checkpoint at a batch's end, in on_train_batch_end, and Lightning "
    "restores one of an epoch's end otherwise (a trial's correct program departed from the "
    "second step after one)")
"""A passing report's line where a Lightning target's own resume carries
``SAVED_AT_BATCH_END`` (trial 774 read EQUIVALENT, its own checkpoints at epoch
ends departing, the caveat only deep in a why; trial 784's target had no
ModelCheckpoint, its script one of steps: "your run's own checkpoints" read as a
claim about them, and trial 790 read "as your run's do" so)."""

UNCOMPARED_SEE = "(see `not compared`)"
"""How a why points at the `not compared` lines, where it names state no component
holds as what the checkpoint loses, or may (``verdict``; fuzz's shrink reads it)."""
