"""Distributed equivalence: do N ranks train like one, before any resume is judged?

``check_baseline(target, nproc=N)`` (``resumecheck baseline --nproc N``)
launches the program twice through torch's launcher (``torch.distributed.run``):
N ranks, then one rank. Each launch builds the program in every rank after the
process group exists (gloo on CPU; NCCL when the program's ``device`` setting
is CUDA and one is there; ``RESUMECHECK_BACKEND`` overrides) and measures:

* on a tiny batch, in float64 (the program is built with float64 as torch's
  default dtype, so its own wrapping and gradient sync run in float64), with
  dropout off (``eval()``): the whole global batch ``tiny_batch(size)`` is cut
  into N equal contiguous shards, rank r computes ``batch_loss`` on shard r
  and calls ``backward()`` through the program's own model (its DDP or FSDP
  wrapper synchronizes); the one-rank launch computes the gradient of the
  whole batch. Every rank's synchronized gradient must equal the whole batch's
  within float64 rounding, and the N ranks must agree bit for bit;
* two uninterrupted N-rank runs with the run's settings (rebuilt in the same
  launch, every stream put back) are identical bit for bit on every rank;
* N ranks against one rank with N-fold gradient accumulation on the same global
  batches: the program's ``equivalence_config(world_size, nproc)`` gives the
  settings for each (accumulation scaled, per-rank randomness off). The global
  loss of a step (the mean of the ranks' losses) and the parameters after every
  step are compared within a documented tolerance (the reduction order
  differs), and the ranks' parameters must agree bit for bit after every step.

The rank side is ``python -m resumecheck.dist_baseline SPEC.json`` under the
launcher; it writes ``rank{r}.pt`` beside the spec. Nothing here imports a
front end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch.nn.parallel import DistributedDataParallel

from resumecheck import forkserver
from resumecheck.baseline import N_VS_ONE, BaselineCheck
from resumecheck.compare import digest
from resumecheck.components import launch_global_streams
from resumecheck.distributed import LAUNCHER_PRELOAD
from resumecheck.errors import InvalidArgument, TargetError
from resumecheck.interrupt import scratch_directory
from resumecheck.program import load_target

__all__ = [
    "LAUNCH_TIMEOUT", "LOSS_TOLERANCE", "PARAM_TOLERANCE", "SYNC_TOLERANCE",
    "distributed_checks", "launch", "rank_main", "run_rank",
]

SYNC_TOLERANCE = {"rtol": 1e-10, "atol": 1e-12}
"""float64: a synchronized gradient against the whole batch's. The sum over
ranks and the sum over the whole batch add the same terms in another order;
that costs a few units in the last place (about 1e-16 relative), so 1e-10 is
far above rounding and far below any missing or doubled contribution."""
LOSS_TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}
"""The program's own dtype (float32): the global loss of a step at N ranks
against one rank with N-fold accumulation."""
PARAM_TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}
"""float32 parameters after each step, N ranks against one rank. Reduction
order changes the last bits of each gradient (about 1e-7 relative); Adam-like
optimizers divide by the root of the second moment, so a few ulps of gradient
move a parameter by a few ulps per step. Measured on the built-in program (2
ranks, 8 AdamW steps, CPU): at most 3e-8 absolute on parameters of size 0.1 to
1, and 1.2e-7 on the loss; the bounds keep more than an order of magnitude of
margin and stay far below what a skipped or doubled gradient sync does
(1e-3 and more after one step)."""


def launch(nproc: int, module: str, spec: dict[str, Any], work: Path, name: str,
           timeout: float, hash_seed: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
    """Run ``python -m module WORK/NAME/spec.json`` on ``nproc`` ranks through
    torch's elastic launcher (``resumecheck._launch``, as for the engine's segments):
    each rank's results (its ``rank{r}.pt`` beside the
    spec), or why the launch failed. A launch that runs past ``timeout`` seconds
    is stopped with every rank (its own process group). ``hash_seed``: the
    ranks' PYTHONHASHSEED (None: this process's environment's)."""
    where = work / name
    where.mkdir()
    spec_path = where / "spec.json"
    spec_path.write_text(json.dumps(spec))
    env = {**os.environ, "OMP_NUM_THREADS": str(spec["threads"])}
    if hash_seed is not None:
        env["PYTHONHASHSEED"] = hash_seed
    cwd = os.getcwd()  # module:attr targets import from here, as in one process
    env["PYTHONPATH"] = os.pathsep.join(p for p in (cwd, env.get("PYTHONPATH", "")) if p)
    # the engine's launcher (torch's elastic_launch with torchrun --standalone's
    # rendezvous), which also exits when this process is gone
    args = [str(nproc), str(where / "failures.json"), str(where / "launch-logs"), "-m", module,
            str(spec_path)]
    with open(where / "launch.log", "w+b") as log:
        # warm as the engine's launches are (resumecheck.distributed): forked from
        # a server that holds torch's distributed modules, each rank forked from it
        proc = forkserver.spawn("resumecheck._launch", args, env, log=str(where / "launch.log"),
                                preload=LAUNCHER_PRELOAD)
        code: int | None = None
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        finally:  # (also on an interrupt: the launch goes with the check)
            if code is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)  # the launcher and every rank
                except ProcessLookupError:
                    pass
                proc.wait()
        log.seek(0)
        output = log.read().decode(errors="replace")
    results = [torch.load(where / f"rank{r}.pt", weights_only=True)
               for r in range(nproc) if (where / f"rank{r}.pt").exists()]
    errors = [r["error"] for r in results if r.get("error")]
    why = None
    if errors:
        why = errors[0]
    elif code is None:
        why = f"it ran past {timeout:g} s and was stopped (a rank hung?)"
    elif code != 0 or len(results) != nproc:
        tail = " | ".join(output.strip().splitlines()[-4:])
        why = f"the launcher exited with status {code}: {tail}"
    return results, (f"the {nproc}-rank launch failed: {why}" if why else None)


LAUNCH_TIMEOUT = 600.0
"""Seconds one launch may take when no ``timeout`` is given."""


def distributed_checks(target_spec: str, *, nproc: int, steps: int, config: dict[str, Any],
                       threads: int, batch_size: int,
                       timeout: float | None) -> list[BaselineCheck]:
    """The checks above (``baseline.check_baseline(nproc=N)`` reports them)."""

    if batch_size % nproc:
        raise InvalidArgument("batch_size", batch_size,
                              f"expected a multiple of nproc={nproc}: each rank takes an equal shard")
    spec = {"target": target_spec, "config": config, "steps": steps, "threads": threads,
            "batch_size": batch_size, "nproc": nproc}
    names = ("determinism", SYNC_CHECK, "ranks agree", N_VS_ONE)
    with scratch_directory("resumecheck-dist-baseline-") as tmp:
        work = Path(tmp)
        bound = timeout or LAUNCH_TIMEOUT
        many, failed = launch(nproc, "resumecheck.dist_baseline", {**spec, "determinism": True},
                              work, f"ranks{nproc}", bound, hash_seed="1")
        # (trial 141: a rank seeded from its process id, or an order taken from a set,
        # differs between launches only; a rerun inside one launch cannot see it)
        again: list[dict[str, Any]] = []
        if failed is None:
            again, failed = launch(nproc, "resumecheck.dist_baseline",
                                   {**spec, "determinism": True}, work, f"ranks{nproc}-again",
                                   bound, hash_seed="2")
        one: list[dict[str, Any]] = []
        if failed is None:
            # (trial 143: under another hash seed a program that takes an order from a set
            # read other labels on one rank, and its sync was blamed)
            one, failed = launch(1, "resumecheck.dist_baseline", {**spec, "determinism": False},
                                 work, "ranks1", bound, hash_seed="1")
    if failed is not None:
        if "TargetError" in failed:
            raise TargetError(target_spec, failed, "Fix the factory so that it builds in "
                              "every rank once the process group exists")
        # the check whose work failed fails; the others were not reached or not judged
        guilty = next((r["check"] for r in [*many, *one] if r.get("check")), names[0])
        return [BaselineCheck(name=n, status="failed", detail=failed) if n == guilty else
                BaselineCheck(name=n, status="skipped",
                              detail=f"a launch failed (see {guilty})") for n in names]
    return [_determinism(many, again, steps), _synchronized(many, one, nproc),
            _agree(many), _trajectory(many, one, nproc)]


# -- judging (parent side) ----------------------------------------------------

def _determinism(ranks: list[dict[str, Any]], again: list[dict[str, Any]],
                 steps: int) -> BaselineCheck:
    """Two runs in one launch (rebuilt, streams put back), then the first
    runs of two launches (PYTHONHASHSEED 1 and 2)."""
    n = len(ranks)
    for r, res in enumerate(ranks):
        first, second = res["determinism"]
        for i, (a, b) in enumerate(zip(first, second), start=1):
            if a != b:
                return BaselineCheck(
                    name="determinism", status="failed",
                    detail=f"two uninterrupted {n}-rank runs differ on rank {r} from "
                    f"step {i} ({'loss' if a[0] != b[0] else 'parameters'})",
                    figures={"rank": r, "first_step": i})
    for r, (res, other) in enumerate(zip(ranks, again)):
        for i, (a, b) in enumerate(zip(res["determinism"][0], other["determinism"][0]),
                                   start=1):
            if a != b:
                return BaselineCheck(
                    name="determinism", status="failed",
                    detail=f"two launches of {n} ranks (PYTHONHASHSEED 1 and 2) differ on rank "
                    f"{r} from step {i} ({'loss' if a[0] != b[0] else 'parameters'}), though "
                    "two runs inside one launch agree: something each launch gives its ranks "
                    "anew reaches the run (a seed taken from the process id or the clock, an "
                    "order that follows the hash seed: a set's, or hash() of a string; a "
                    "stream never seeded)",
                    figures={"rank": r, "first_step": i})
    return BaselineCheck(
        name="determinism", status="passed",
        detail=f"two uninterrupted {n}-rank runs are identical bit for bit on every rank over "
        f"{steps} steps, inside one launch (rebuilt, streams put back) and across two launches "
        "(PYTHONHASHSEED 1 and 2)",
        figures={"steps": steps, "ranks": n})


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> tuple[float, float]:
    diff = (a.double() - b.double()).abs()
    scale = b.double().abs().clamp_min(torch.finfo(torch.float64).tiny)
    return float(diff.max()), float((diff / scale).max())


_NO_TINY_BATCH = ("the program has no tiny_batch(size) and batch_loss(model, batch): the "
                  "gradient on a tiny batch needs both")


def _synchronized(many: list[dict[str, Any]], one: list[dict[str, Any]], nproc: int) -> BaselineCheck:

    whole = one[0]["grads"]
    if whole is None:
        return BaselineCheck(name="synchronized gradient", status="skipped", detail=_NO_TINY_BATCH)
    dtype = one[0]["dtype"]
    worst: dict[str, Any] = {"max_abs": 0.0, "max_rel": 0.0, "parameter": "", "rank": 0}
    failed = []
    for r, res in enumerate(many):
        if res["init"] != one[0]["init"]:
            return BaselineCheck(
                name="synchronized gradient", status="failed",
                detail=f"rank {r} builds other initial parameters than a one-rank run: seed the "
                "model alike on every rank (the comparison needs one starting point)",
                figures={"rank": r})
        for name, g in whole.items():
            got = res["grads"].get(name)
            if got is None:
                return BaselineCheck(name="synchronized gradient", status="failed",
                                     detail=f"rank {r} has no gradient for {name}",
                                     figures={"rank": r, "parameter": name})
            abs_d, rel_d = _max_diff(got, g)
            if abs_d > worst["max_abs"]:
                worst = {"max_abs": abs_d, "max_rel": rel_d, "parameter": name, "rank": r}
            if not torch.allclose(got.double(), g.double(), rtol=SYNC_TOLERANCE["rtol"],
                                  atol=SYNC_TOLERANCE["atol"]):
                failed.append((r, name, abs_d, float(g.double().abs().max())))
    figures = {**worst, "dtype": dtype, "batch_size": many[0]["batch_size"], "ranks": nproc,
               "tolerance": SYNC_TOLERANCE}
    if failed:
        r, name, abs_d, scale = failed[0]
        return BaselineCheck(
            name="synchronized gradient", status="failed",
            detail=f"after the sync, rank {r}'s gradient of {name} differs from the whole "
            f"batch's by {abs_d:.3g} (largest entry {scale:.3g}; {len(failed)} of "
            f"{len(whole) * nproc} gradients over the ranks differ): the gradients are not "
            "averaged over the ranks (no DDP/FSDP wrapper, no_sync left on, or a sum where a "
            "mean belongs)",
            figures=figures)
    return BaselineCheck(
        name="synchronized gradient", status="passed",
        detail=f"on a tiny batch of {many[0]['batch_size']} in {dtype}, every rank's "
        f"synchronized gradient equals the whole batch's gradient on one rank: max |Δ| "
        f"{worst['max_abs']:.2g}",
        figures=figures)


def _agree(many: list[dict[str, Any]]) -> BaselineCheck:
    """The ranks hold the same synchronized gradient (on the tiny batch, when the
    program has one) and the same parameters after each step: those kept by
    the N-vs-1 run, else (their digests) the first determinism run's."""
    first = many[0]
    if first.get("sharded"):  # (trial 144: it passed where it cannot fail)
        return BaselineCheck(
            name="ranks agree", status="skipped",
            detail="the parameters are sharded (FSDP): the ranks hold one copy between them, "
            "which each gathers alike, so comparing them cannot tell the ranks apart")
    kept = "params" in first
    for r, res in enumerate(many[1:], start=1):
        apart = _grads_apart(first, res, r) or (
            _params_apart(first["params"], res["params"], r) if kept else
            _digests_apart(first["determinism"][0], res["determinism"][0], r))
        if apart is not None:
            return apart
    steps = len(first["params"] if kept else first["determinism"][0])
    held = (f"the same synchronized gradient and, after each of {steps} steps, the same "
            "parameters," if first["grads"] is not None
            else f"the same parameters after each of {steps} steps,")
    return BaselineCheck(
        name="ranks agree", status="passed",
        detail=f"the {len(many)} ranks hold {held} bit for bit",
        figures={"ranks": len(many), "steps": steps})


def _grads_apart(first: dict[str, Any], res: dict[str, Any], r: int) -> BaselineCheck | None:
    for name in first["grads"] or {}:
        if digest(res["grads"][name]) != digest(first["grads"][name]):
            abs_d, _ = _max_diff(res["grads"][name], first["grads"][name])
            return BaselineCheck(
                name="ranks agree", status="failed",
                detail=f"after the sync, rank {r}'s gradient of {name} differs from rank "
                f"0's by {abs_d:.3g}: the ranks would step apart",
                figures={"rank": r, "parameter": name, "quantity": "grad", "max_abs": abs_d})
    return None


def _params_apart(first: list[dict[str, torch.Tensor]], other: list[dict[str, torch.Tensor]],
                  r: int) -> BaselineCheck | None:
    for step, (a, b) in enumerate(zip(first, other), start=1):
        for name in a:
            if digest(a[name]) != digest(b[name]):
                abs_d, _ = _max_diff(b[name], a[name])
                return BaselineCheck(
                    name="ranks agree", status="failed",
                    detail=f"after step {step}, rank {r}'s {name} differs from rank 0's by "
                    f"{abs_d:.3g}: the ranks train apart (is the gradient synchronized?)",
                    figures={"rank": r, "parameter": name, "quantity": "param",
                             "step": step, "max_abs": abs_d})
    return None


def _digests_apart(first: list[tuple[float, str]], other: list[tuple[float, str]],
                   r: int) -> BaselineCheck | None:
    """``_params_apart`` from the determinism run's (loss, parameters' digest) per step."""
    for step, (a, b) in enumerate(zip(first, other), start=1):
        if a[1] != b[1]:
            return BaselineCheck(
                name="ranks agree", status="failed",
                detail=f"after step {step}, rank {r}'s parameters differ from rank 0's: the "
                "ranks train apart (is the gradient synchronized?)",
                figures={"rank": r, "parameter": "parameters", "quantity": "param",
                         "step": step})
    return None


def _trajectory(many: list[dict[str, Any]], one: list[dict[str, Any]], nproc: int) -> BaselineCheck:

    if many[0].get("equivalence") is None or one[0].get("equivalence") is None:
        why = many[0].get("equivalence_skipped") or one[0].get("equivalence_skipped")
        return BaselineCheck(name=N_VS_ONE, status="skipped", detail=str(why))
    steps = len(one[0]["losses"])
    global_loss = [sum(res["losses"][i] for res in many) / len(many) for i in range(steps)]
    single = one[0]["losses"]
    differ: dict[str, dict[str, Any]] = {}
    loss_abs = max(abs(a - b) for a, b in zip(global_loss, single))
    loss_rel = max(abs(a - b) / max(abs(b), 1e-300) for a, b in zip(global_loss, single))
    loss_ok = all(abs(a - b) <= LOSS_TOLERANCE["atol"] + LOSS_TOLERANCE["rtol"] * abs(b)
                  for a, b in zip(global_loss, single))
    differ["loss"] = {"max_abs": loss_abs, "max_rel": loss_rel, "within": loss_ok}
    params_ok = True
    for i, (a, b) in enumerate(zip(many[0]["params"], one[0]["params"]), start=1):
        for name in b:
            abs_d, rel_d = _max_diff(a[name], b[name])
            ok = torch.allclose(a[name].double(), b[name].double(),
                                rtol=PARAM_TOLERANCE["rtol"], atol=PARAM_TOLERANCE["atol"])
            params_ok = params_ok and ok
            seen = differ.setdefault(name, {"max_abs": 0.0, "max_rel": 0.0, "within": True,
                                            "step": 0})
            if abs_d > seen["max_abs"]:
                seen.update(max_abs=abs_d, max_rel=rel_d, step=i)
            seen["within"] = seen["within"] and ok
    figures = {"steps": steps, "ranks": nproc, "accumulation": {
        f"{nproc} ranks": many[0]["equivalence"], "1 rank": one[0]["equivalence"]},
        "loss_tolerance": LOSS_TOLERANCE, "param_tolerance": PARAM_TOLERANCE,
        "differences": differ}
    worst = max((k for k in differ if k != "loss"), key=lambda k: differ[k]["max_rel"],
                default="loss")
    summary = ", ".join(f"{k} {v['max_abs']:.2g}" for k, v in differ.items())
    # the program's equivalence_config says how one rank matches N (not always N-fold)
    alone = ", ".join(f"{k}={v!r}" for k, v in one[0]["equivalence"].items()) or "no changes"
    like = f"1 rank with the program's equivalence settings ({alone})"
    if loss_ok and params_ok:
        return BaselineCheck(
            name=N_VS_ONE, status="passed",
            detail=f"{nproc} ranks train like {like} over "
            f"{steps} steps within tolerance (loss rtol {LOSS_TOLERANCE['rtol']:g}, parameters "
            f"rtol {PARAM_TOLERANCE['rtol']:g}); max |Δ|: {summary}",
            figures=figures)
    out = [k for k, v in differ.items() if not v["within"]]
    first = _first_apart(global_loss, single, many[0]["params"], one[0]["params"])
    figures["first_step"] = first
    # (a trial: ranks that each skipped other samples read other global batches from
    # step 1, and the message said only where the worst difference was, at step 12)
    since = (f"; beyond tolerance from step {first} on" + (
        ": already in the first step, so the global batch or the start differs (does each "
        "rank read its shard of the batch one rank reads whole?), not only a later sync"
        if first == 1 else "") if first is not None else "")
    return BaselineCheck(
        name=N_VS_ONE, status="failed",
        detail=f"{nproc} ranks do not train like {like}: "
        f"{', '.join(out)} beyond tolerance (worst parameter {worst}: max |Δ| "
        f"{differ[worst]['max_abs']:.3g}, relative {differ[worst]['max_rel']:.3g}, at step "
        f"{differ[worst].get('step', '-')}); global loss max |Δ| {loss_abs:.3g}{since}",
        figures=figures)


def _first_apart(global_loss: list[float], single: list[float], many: list[dict[str, Any]],
                 one: list[dict[str, Any]]) -> int | None:
    """The first step whose loss (the mean over ranks) or parameters are beyond
    tolerance of one rank's (None: none is)."""
    for step, (a, b) in enumerate(zip(global_loss, single), start=1):
        loss_apart = abs(a - b) > LOSS_TOLERANCE["atol"] + LOSS_TOLERANCE["rtol"] * abs(b)
        params = many[step - 1] if step - 1 < len(many) else {}
        alone = one[step - 1] if step - 1 < len(one) else {}
        if loss_apart or any(not torch.allclose(
                params[n].double(), alone[n].double(), rtol=PARAM_TOLERANCE["rtol"],
                atol=PARAM_TOLERANCE["atol"]) for n in alone if n in params):
            return step
    return None


# -- the rank side (under torch.distributed.run) -------------------------------

def _backend(config: dict[str, Any]) -> str:
    chosen = os.environ.get("RESUMECHECK_BACKEND")
    if chosen:
        return chosen
    device = str(config.get("device", ""))
    return "nccl" if device.startswith("cuda") and torch.cuda.is_available() else "gloo"


def _module(built: Any) -> torch.nn.Module:
    """The module whose forward and backward the program trains through: the
    ``params`` component (else the program's ``model``), or, when that is the
    module a DDP wrapper holds, the wrapper (an attribute of the program):
    a backward through the bare module would skip the wrapper's sync."""
    comp = built.component("params")
    declared = comp.obj if comp is not None and isinstance(comp.obj, torch.nn.Module) else None
    model = getattr(built.program, "model", None)
    if declared is None:
        if isinstance(model, torch.nn.Module):
            return model
        raise RuntimeError("the program has no nn.Module 'params' component and no .model")
    for value in vars(built.program).values():
        if isinstance(value, DistributedDataParallel) and value.module is declared:
            return value
    return declared


def _full(t: torch.Tensor) -> torch.Tensor:
    full = getattr(t, "full_tensor", None)  # a DTensor (FSDP): gather its shards
    return (full() if callable(full) else t).detach().cpu().clone()


def _name(name: str) -> str:
    return name.removeprefix("module.")  # DDP's wrapper prefix


def _params(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {_name(n): _full(p) for n, p in model.named_parameters()}


def _split(batch: Any, n: int, i: int) -> Any:
    if isinstance(batch, torch.Tensor):
        return batch.chunk(n)[i]
    return type(batch)(_split(b, n, i) for b in batch)


def _run(target: Any, config: dict[str, Any], steps: int, keep: bool) -> dict[str, Any]:

    launch_global_streams()
    built = target.build(config)
    model = _module(built)
    losses, params, records = [], [], []
    for i in range(1, steps + 1):
        out = built.step(i)
        loss = out.loss
        value = float(loss.detach().double()) if isinstance(loss, torch.Tensor) else float(loss)
        now = _params(model)
        losses.append(value)
        records.append((value, digest(now)))
        if keep:
            params.append(now)
    return {"losses": losses, "params": params, "records": records}


def _rank(spec: dict[str, Any]) -> dict[str, Any]:
    import torch.distributed as dist


    rank, world = dist.get_rank(), dist.get_world_size()
    target = load_target(spec["target"])
    config = dict(spec["config"])
    result: dict[str, Any] = {"rank": rank, "world_size": world, "batch_size": spec["batch_size"]}
    # 1. the tiny batch, float64, through the program's own sync
    _STAGE[:] = [SYNC_CHECK, "building the program with float64 as torch's default dtype"]
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        launch_global_streams()
        built = target.build(config)
    finally:
        torch.set_default_dtype(previous)
    program = built.program
    model = _module(built)
    result["init"] = digest(_params(model))
    result["dtype"] = str(next(model.parameters()).dtype).removeprefix("torch.")
    result["sharded"] = any(callable(getattr(p, "full_tensor", None)) for p in model.parameters())
    if callable(getattr(program, "tiny_batch", None)) and callable(
            getattr(program, "batch_loss", None)):
        _STAGE[1] = "the tiny batch's gradient in float64 (tiny_batch, batch_loss, backward)"
        batch = program.tiny_batch(spec["batch_size"])
        model.eval()  # dropout off
        loss = program.batch_loss(model, _split(batch, world, rank))
        loss.backward()  # the program's DDP / FSDP wrapper synchronizes here
        result["grads"] = {_name(n): _full(p.grad) for n, p in model.named_parameters()
                           if p.grad is not None}
    else:
        result["grads"] = None
    equivalence = getattr(program, "equivalence_config", None)
    del built, program, model
    # 2. determinism at N ranks, with the run's own settings
    if spec["determinism"]:
        _STAGE[:] = ["determinism", "the two uninterrupted runs with the run's settings"]
        result["determinism"] = [_run(target, config, spec["steps"], keep=False)["records"]
                                 for _ in range(2)]
    # 3. the same global batches: N ranks, or 1 rank with N-fold accumulation
    if not callable(equivalence):
        result["equivalence"] = None
        result["equivalence_skipped"] = (
            "the program has no equivalence_config(world_size, nproc): the settings under "
            "which one rank trains on the same global batches as N (accumulation scaled, "
            "per-rank randomness off)")
    else:
        _STAGE[:] = [N_VS_ONE, "the run with the settings of equivalence_config"]
        settings = dict(equivalence(world, spec["nproc"]))
        run = _run(target, {**config, **settings}, spec["steps"], keep=True)
        result.update(equivalence=settings, losses=run["losses"], params=run["params"])
    return result


def _where(exc: BaseException) -> str:
    """The innermost frame of the program's own code (not torch's, nor ours) that
    the exception passed through."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if "-packages" not in f.filename
           and not f.filename.startswith(os.path.dirname(__file__))]
    if not (own or frames):
        return ""
    frame = (own or frames)[-1]
    return f" (at {frame.filename}:{frame.lineno}, in {frame.name})"


_STAGE: list[str] = []
"""In a rank: the check whose work is running, and that work in words (a
failure names both)."""

SYNC_CHECK = "synchronized gradient"


def _save_whole(result: dict[str, Any], out: Path) -> None:
    """Write a rank's result under another name, then rename it: the launcher
    kills the other ranks when one fails, maybe in the middle of a write, and
    the parent must never read half a file (a clean clone's suite: EOFError)."""
    partial = out.with_name(out.name + ".partial")
    torch.save(result, partial)
    os.replace(partial, out)


def run_rank(spec_path: str, body: Callable[[dict[str, Any]], dict[str, Any]]) -> int:
    """One rank under the launcher: initialise the process group, run ``body(spec)``
    and write what it returns (or its error) to ``rank{r}.pt`` beside the spec."""
    import torch.distributed as dist

    spec = json.loads(Path(spec_path).read_text())
    torch.set_num_threads(spec["threads"])
    dist.init_process_group(_backend(spec["config"]))
    rank = dist.get_rank()
    out = Path(spec_path).parent / f"rank{rank}.pt"
    try:
        result = body(spec)
    except Exception as exc:  # reported by the parent as a failed launch
        check, during = _STAGE if len(_STAGE) == 2 else (None, None)
        said = (f"rank {rank}" + (f", in {during}" if during else "")
                + f": {type(exc).__name__}: {exc}{_where(exc)}")
        _save_whole({"rank": rank, "error": said, "check": check}, out)
        os._exit(1)  # peers may wait in a collective: do not tear the group down politely
    _save_whole(result, out)
    dist.barrier()
    dist.destroy_process_group()
    return 0


def rank_main(spec_path: str) -> int:
    """One rank of the distributed baseline."""
    return run_rank(spec_path, _rank)


if __name__ == "__main__":
    sys.exit(rank_main(sys.argv[1]))
