"""State a program keeps at module level survives an in-process restart and
not a real one. A trial's program cached each epoch's order at module level,
drawn from torch's global stream when the epoch was first reached: a real
restart drew the resumed epoch's order again, from another point of the
stream, while every in-process restart found it cached, so the in-process
check, fuzz and the pytest plugin called a checkpoint that loses the order
equivalent. In-process, a check now stops when the uninterrupted run changed
such state, naming it and the command that judges the program in fresh
interpreters; with --isolation process it is judged (`module_state`)."""

from __future__ import annotations

import random
import sys
import types
from pathlib import Path

import numpy as np

import pytest
import torch

from resumecheck import ModuleStateChanged, verify
from resumecheck.cli import main
from resumecheck.module_state import changed, program_spaces, snapshot

SPEC = "fixtures.trust.cached_order:"


def test_an_order_cached_at_module_level_stops_the_in_process_check_naming_the_cache():
    with pytest.raises(ModuleStateChanged) as info:
        verify(SPEC + "BUGGY", drop="none", noise_seeds=0)
    assert info.value.changed == ["fixtures.trust.cached_order.epoch_order (a cache: 0 -> 2 entries)"]
    assert info.value.reproduce == ("resumecheck run fixtures.trust.cached_order:BUGGY --steps 10 "
                                    "--resume-at 7 --drop none --noise-seeds 0 "
                                    "--isolation process --threads 1")
    assert "a restart in this interpreter would keep it" in str(info.value)


@pytest.mark.parametrize("command", ["run", "fuzz"])
def test_the_commands_refuse_with_exit_3_and_say_what_to_run(capsys, command):
    extra = ["--noise-seeds", "0"] if command == "run" else ["--max-examples", "2", "--quiet"]
    assert main([command, SPEC + "BUGGY", *extra]) == 3
    err = capsys.readouterr().err
    assert "fixtures.trust.cached_order.epoch_order (a cache" in err
    assert "Traceback" not in err
    assert f"resumecheck {command} fixtures.trust.cached_order:BUGGY --steps 10 " in err
    assert "--isolation process" in err


@pytest.mark.process
def test_in_fresh_interpreters_the_lost_order_is_caught_on_the_data():
    report = verify(SPEC + "BUGGY", drop="none", noise_seeds=0, isolation="process")
    own = report.full_resume
    assert own.verdict == "diverged" and own.first_divergent_step == 8
    assert own.first_divergent_quantity.startswith("data")


def test_its_twin_that_caches_nothing_is_judged_in_process():
    report = verify("fixtures.trust.own_order:CORRECT", drop="none", noise_seeds=0)
    assert report.equivalent, report.render()


# -- what a snapshot sees, on modules built here ---------------------------------


def _module(name: str = "prog", **values) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = f"/home/user/project/{name}.py"  # (a program's own file)
    module.__dict__.update(values)
    return module


def test_each_kind_of_module_state_a_run_changes_is_named(monkeypatch):
    class Counts:
        built = 0

    Counts.__module__ = "prog"
    holder = types.SimpleNamespace(position=0)
    model = torch.nn.Linear(2, 1)
    module = _module(STEP=0, LOG=[], SEEN={}, WEIGHTS=torch.zeros(3),
                     Counts=Counts, holder=holder, DATA=list(range(1000)), torch=torch,
                     MODEL=model, OPT=torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
                     GEN=torch.Generator().manual_seed(0), RNG=np.random.default_rng(0),
                     PY=random.Random(0))
    exec("import functools\n@functools.lru_cache(maxsize=None)\n"
         "def cached(epoch):\n    return epoch\n", vars(module))  # (defined in the module)
    monkeypatch.setitem(sys.modules, "prog", module)  # (where its class Counts is found)
    before = snapshot([module])
    module.cached(1)
    torch.rand(1, generator=module.GEN), module.RNG.random(), module.PY.random()
    model(torch.ones(1, 2)).sum().backward()
    module.OPT.step()
    module.STEP = 5
    module.LOG.append(0.5)
    module.SEEN["a"] = 1
    module.WEIGHTS.add_(1)
    Counts.built += 1
    holder.position = 3
    assert list(changed(before, snapshot([module])).values()) == [
        "prog.Counts.built (0 -> 1)",
        "prog.GEN (a random generator, drawn from)",
        "prog.LOG (0 -> 1 items)",
        "prog.MODEL (a model, trained in place)",
        "prog.OPT (an optimizer, stepped in place)",
        "prog.PY (a random generator, drawn from)",
        "prog.RNG (a random generator, drawn from)",
        "prog.SEEN (0 -> 1 items)",
        "prog.STEP (0 -> 5)",
        "prog.WEIGHTS (a tensor, changed in place)",
        "prog.cached (a cache: 0 -> 1 entries)",
        "prog.holder.position (0 -> 3)",
    ]


def test_what_a_run_only_reads_is_not_named():
    module = _module(DATA=list(range(1000)), TABLE={"a": 1}, X=torch.ones(4),
                     helper=lambda x: x, torch=torch, NAME="run",
                     GEN=torch.Generator().manual_seed(0), RNG=np.random.default_rng(0))
    before = snapshot([module])
    _ = module.DATA[3], module.TABLE["a"], module.X.sum(), module.helper(1)
    assert list(changed(before, snapshot([module])).values()) == []


def test_only_the_programs_own_modules_are_looked_at():
    from fixtures.trust import cached_order
    from resumecheck import tiny

    mine = {s["__name__"] for s in program_spaces(cached_order.CachesTheOrder)}
    assert mine == {"fixtures.trust.cached_order", "fixtures.trust.order_script"}
    assert program_spaces(tiny.TinyProgram) == []  # (resumecheck's own: not a user's program)


def test_a_generator_a_declared_rng_component_holds_is_judged_there_not_named():
    from resumecheck import RNGState

    gen = torch.Generator().manual_seed(0)
    module = _module(GEN=gen, OTHER=torch.Generator().manual_seed(1))
    before = snapshot([module])
    RNGState({"loader": gen})  # (what the program's components() declares)
    torch.rand(1, generator=gen), torch.rand(1, generator=module.OTHER)
    assert list(changed(before, snapshot([module])).values()) == [
        "prog.OTHER (a random generator, drawn from)"]


_MEMOS = """
def memoize(fn):
    cache = {}

    def wrapper(epoch):
        if epoch not in cache:
            cache[epoch] = fn(epoch)
        return cache[epoch]
    return wrapper


@memoize
def order(epoch):
    return epoch


def defaulted(epoch, _cache={}):
    return _cache.setdefault(epoch, epoch)
"""


def test_the_shapes_a_trial_found_missed_are_named(monkeypatch):
    # a hand-written memo, a mutable default, a nested dict, two levels of
    # namespaces, a small numpy array, a tensor written through .data, an object
    # of a class from another of the program's modules, a singleton's new
    # attribute, a global made on first use
    helper = _module("helper")
    exec("class Store:\n    def __init__(self):\n        self.orders = {}\n", vars(helper))
    monkeypatch.setitem(sys.modules, "helper", helper)
    single = helper.Store()
    prog = _module(STATE={"orders": {}},
                   DEEP=types.SimpleNamespace(data=types.SimpleNamespace(orders={})),
                   ARRAY=np.zeros(8), T=torch.zeros(4), STORE=helper.Store(), ONE=single)
    exec(_MEMOS, vars(prog))  # (defined in the module)
    monkeypatch.setitem(sys.modules, "prog", prog)
    before = snapshot([prog])
    prog.order(1), prog.defaulted(1)
    prog.STATE["orders"][1] = 0
    prog.DEEP.data.orders[1] = 0
    prog.ARRAY[0] = 1.0
    prog.T.data[0] = 1.0
    prog.STORE.orders[1] = 0
    single._epoch = 1
    prog._ORDERS = {}
    assert list(changed(before, snapshot([prog])).values()) == [
        "prog.ARRAY (an array, changed in place)",
        "prog.DEEP.data.orders (0 -> 1 items)",
        "prog.ONE._epoch (created)",
        "prog.STATE (1 items, changed)",
        "prog.STORE.orders (0 -> 1 items)",
        "prog.T (a tensor, changed in place)",
        "prog._ORDERS (created)",
        "prog.defaulted (what the function keeps between calls changed)",
        "prog.order (what the function keeps between calls changed)",
    ]


def test_a_helper_module_shadowed_by_another_of_the_same_name_is_still_reached(monkeypatch):
    # (a trial: two targets' directories each with a helper.py; sys.modules
    # named the first one's, so the second program's own helper was never looked at)
    first, mine = _module("helper"), _module("helper")
    first.__file__, mine.__file__ = "/p/one/helper.py", "/p/two/helper.py"
    monkeypatch.setitem(sys.modules, "helper", first)
    train = _module("train", helper=mine)
    train.__file__ = "/p/two/train.py"
    exec("def build(settings):\n    return None\n", vars(train))
    assert [s["__file__"] for s in program_spaces(train.build)] == [
        "/p/two/helper.py", "/p/two/train.py"]


_MORE = """
import array
import functools
import threading

import numpy as np
import torch


def cached(epoch):
    memo = cached.__dict__.setdefault("memo", {})
    return memo.setdefault(epoch, epoch)


def _order(store, epoch):
    return store.setdefault(epoch, epoch)


partial_order = functools.partial(_order, {})
LOCAL = threading.local()
LOCAL.orders = {}


class Cache:
    def __init__(self):
        self.orders = {}

    def order(self, epoch):
        return self.orders.setdefault(epoch, epoch)


CACHES = [Cache()]
order_for = Cache().order
SLOTS = {"orders": {0: None, 1: None}}
LISTS = {"orders": [None, None]}
ARRAYS = {"orders": np.zeros((3, 4))}
ENCODER = torch.nn.Linear(2, 2)
ENCODER.memo = {}
BUFFER = array.array("l", [0, 0, 0])
"""


def test_the_shapes_a_second_trial_found_missed_are_named(monkeypatch):
    # (the second trial's list: a function attribute, a threading.local, a list
    # holding an object holding a dict, a partial's dict, dict slots filled with
    # the count unchanged, list slots, an array inside a dict, a dict attribute of
    # a module-level nn.Module, an array.array, only a bound method kept)
    prog = _module()
    exec(_MORE, vars(prog))
    monkeypatch.setitem(sys.modules, "prog", prog)
    before = snapshot([prog])
    prog.cached(1), prog.partial_order(1), prog.order_for(1)
    prog.LOCAL.orders[1] = 1
    prog.CACHES[0].orders[1] = 1
    prog.SLOTS["orders"][1] = 1
    prog.LISTS["orders"][1] = 1
    prog.ARRAYS["orders"][0, 0] = 1.0
    prog.ENCODER.memo[1] = 1
    prog.BUFFER[0] = 1
    assert list(changed(before, snapshot([prog])).values()) == [
        "prog.ARRAYS (1 items, changed)",
        "prog.BUFFER (an array, changed in place)",
        "prog.CACHES (1 items, changed)",
        "prog.ENCODER (a model, trained in place)",
        "prog.LISTS (1 items, changed)",
        "prog.LOCAL (changed)",
        "prog.LOCAL.orders (0 -> 1 items)",
        "prog.SLOTS (1 items, changed)",
        "prog.cached (what the function keeps between calls changed)",
        "prog.order_for (what the function keeps between calls changed)",
        "prog.partial_order (what the function keeps between calls changed)",
    ]


class _Unconfigured:
    """A proxy whose every attribute raises until it is configured."""

    def __getattr__(self, name):
        raise RuntimeError(f"backend not configured: {name}")


class _WeirdDict:
    @property
    def __dict__(self):  # noqa: PLE0302 (the shape under test)
        raise RuntimeError("no __dict__ here")


def test_looking_never_runs_or_breaks_the_programs_objects(monkeypatch):
    # (the second trial: a proxy raising in __getattr__ made the check report
    # "importing ... raised RuntimeError", and a MagicMock recorded a call)
    from unittest import mock

    tracker = mock.MagicMock()
    weights = torch.arange(4.0)
    prog = _module(PROXY=_Unconfigured(), WEIRD=_WeirdDict(), TRACKER=tracker, W=weights)
    monkeypatch.setitem(sys.modules, "prog", prog)
    before = snapshot([prog])
    weights.clamp_(0, 10)  # (in place, values unchanged: nothing a restart undoes)
    assert changed(before, snapshot([prog])) == {}
    assert tracker.mock_calls == []


def test_a_cache_already_filled_when_a_check_begins_is_named_as_such(tmp_path):
    # (a trial: a test used the program first, warming its cache, and the check
    # that followed passed a lost checkpoint; the engine did not import this
    # program, so what its import left is not known)
    import importlib.util

    source = Path(__file__).parents[1] / "fixtures" / "trust" / "cached_order.py"
    (tmp_path / "warmed_program.py").write_text(source.read_text())
    spec = importlib.util.spec_from_file_location("warmed_program", tmp_path / "warmed_program.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.epoch_order(0)  # (the user's own test ran the program first)
    with pytest.raises(ModuleStateChanged) as info:
        verify(module.BUGGY, drop="none", noise_seeds=0)
    assert info.value.changed == [
        "warmed_program.epoch_order (a cache: 1 entries before this check began (filled "
        "earlier in this interpreter), 2 after)"]


def test_a_global_whose_comparison_raises_is_not_named_and_breaks_nothing():
    class Touchy(str):
        def __eq__(self, other):
            raise TypeError("not comparable")

        __hash__ = str.__hash__

    prog = _module(MODE=Touchy("train"))
    before = snapshot([prog])
    prog.MODE = Touchy("train")  # (an equal value, another object: compared with its ==)
    assert changed(before, snapshot([prog])) == {}


def test_a_process_that_judges_no_module_state_does_not_fingerprint_its_imports(
        monkeypatch, tmp_path):
    # (a process-isolated segment and a rank: the checking process judges; the
    # fingerprint cost each segment 10-20 ms)
    from resumecheck import module_state

    (tmp_path / "imported_here.py").write_text("CACHE = {}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = __import__("imported_here")
    monkeypatch.setattr(module_state, "_AT_IMPORT", {})
    monkeypatch.setattr(module_state, "_NOTING", [True])
    module_state.ignore_imports()
    module_state.note_import(module)
    assert id(vars(module)) not in module_state._AT_IMPORT
    monkeypatch.setattr(module_state, "_NOTING", [True])
    module_state.note_import(module)
    assert id(vars(module)) in module_state._AT_IMPORT
    monkeypatch.delitem(sys.modules, "imported_here")


_LIBRARY_FUNCTIONS = """
import torch
from torch.utils.checkpoint import checkpoint

LAYER = torch.nn.Linear(2, 2)


@torch.no_grad()
def encode(x, _memo={}):  # a memo behind a library's decorator
    return _memo.setdefault(float(x.sum()), x * 2)
"""


def test_what_an_installed_function_keeps_is_not_named_but_a_memo_it_wraps_is(monkeypatch):
    # (a trial: `from torch.utils.checkpoint import checkpoint` stopped a correct
    # program in-process: torch marks the function it wraps on its first call)
    prog = _module()
    exec(_LIBRARY_FUNCTIONS, vars(prog))
    monkeypatch.setitem(sys.modules, "prog", prog)
    before = snapshot([prog])
    x = torch.ones(1, 2, requires_grad=True)
    prog.checkpoint(prog.LAYER, x, use_reentrant=False).sum().backward()
    assert list(changed(before, snapshot([prog])).values()) == []
    prog.encode(torch.ones(2))
    assert list(changed(before, snapshot([prog])).values()) == [
        "prog.encode (what the function keeps between calls changed)"]


def test_a_training_module_the_program_class_reaches_through_its_closure_is_watched():
    """Trial 178: `make_program(name)` imported the training module inside a
    function; its module-level cache, filled by the steps, passed in-process
    as EQUIVALENT (a real restart starts without it)."""
    import sys

    for name in ("fixtures.trust.closure_wrapper", "fixtures.trust.cached_graphs"):
        sys.modules.pop(name, None)  # (the cache as a new import has it)
    with pytest.raises(ModuleStateChanged) as info:
        verify("fixtures.trust.closure_wrapper:TARGET", drop="none", noise_seeds=0)
    assert info.value.changed == ["fixtures.trust.cached_graphs.CACHE (0 -> 5 items)"], \
        info.value.changed


def test_a_check_is_not_refused_for_module_state_only_another_programs_check_moved():
    """Trial 255: one wrapper module held a correct script's target and a
    copy's, whose word dropout drew from a module-level generator; after the
    copy's check (refused in-process, rightly), the script's was refused for
    the copy's generator, which its code never names."""
    copy, script = "fixtures.trust.shared_wrapper:COPY", "fixtures.trust.shared_wrapper:SCRIPT"
    fast = {"drop": "none", "noise_seeds": 0, "check_determinism": False}
    with pytest.raises(ModuleStateChanged, match="shared_wrapper_copy.AUG_RNG"):
        verify(copy, **fast)
    assert verify(script, **fast).outcome == "EQUIVALENT"
    # the copy's own check is still refused: its code names its generator
    with pytest.raises(ModuleStateChanged, match="shared_wrapper_copy.AUG_RNG"):
        verify(copy, **fast)
