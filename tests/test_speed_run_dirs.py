"""Run directories are emptied and used again, not removed and made anew
(removing a directory cost 2-3 ms here, ten times a sweep), and nothing of a
run reaches the next one that uses its directory."""

from __future__ import annotations

import os

import torch

from resumecheck.capture import forget_captures_under, load_checkpoint
from resumecheck.interrupt import RunDirectories


def test_a_directory_is_emptied_and_used_again_by_the_next_run(tmp_path):
    forgotten = []
    dirs = RunDirectories(str(tmp_path), forgotten.append)
    with dirs("run-") as first:
        (open(os.path.join(first, "a.pt"), "w")).write("x")
        os.makedirs(os.path.join(first, "own.program3", "deep"))
        os.symlink("/", os.path.join(first, "link"))  # (removed, never followed)
    assert os.listdir(first) == [] and forgotten == [first]
    with dirs("run-") as second:
        assert second == first
        with dirs("run-") as third:  # (a run inside a run, or another thread's: its own)
            assert third != first
    assert sorted(os.listdir(tmp_path)) == sorted(os.path.basename(p) for p in (first, third))


def test_a_forked_child_does_not_take_its_parents_directories(tmp_path):
    dirs = RunDirectories(str(tmp_path), lambda path: None)
    with dirs("run-") as parents:
        pass
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        with dirs("run-") as childs:
            os.write(write, childs.encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    childs = os.read(read, 4096).decode()
    os.close(read)
    assert childs and childs != parents


def test_a_capture_kept_in_memory_is_forgotten_with_its_directory(tmp_path):
    from resumecheck import capture as capture_module

    dirs = RunDirectories(str(tmp_path), forget_captures_under)
    state = {"format": "x", "components": {"model": {"w": torch.ones(2)}}}
    with dirs("run-") as work:
        path = os.path.join(work, "drop-rng-3.end.pt")
        assert capture_module._CACHE.put(path, state, copy=True, unwritten=True)
        assert load_checkpoint(path, read_only=True)["components"]["model"]["w"].sum() == 2
    with dirs("run-") as again:
        assert again == work
        assert capture_module._CACHE.get(path) is None  # not the earlier run's state
