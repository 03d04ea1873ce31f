"""An interrupt can land inside a cleanup and make it fail in its turn.

Python's ``shutil.rmtree`` closes a directory's descriptor, then notes that it
did: an interrupt landing between the two makes its ``finally`` close the
descriptor again, and the OSError (EBADF) stands in for the interrupt. A
stress run of tests/test_faults_signals.py's SIGTERM-in-a-gc-callback case
(the signal raised again once the check had finished, as it removed its
scratch directory) printed "unexpected OSError ... a bug in resumecheck" and
exited 2 about one time in five under load. What ended the command is the
interrupt: it is said so, with its exit status.
"""

from __future__ import annotations

import errno
import os
import signal

import pytest


class _Terminated(KeyboardInterrupt):
    """A signal raised as an interrupt, as the command raises SIGTERM."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _rmtree_cut_short(interrupt: KeyboardInterrupt):
    """rmtree as an interrupt after its close leaves it: the second close fails."""
    def rmtree(path, ignore_errors=False, onerror=None):
        try:
            raise interrupt
        finally:
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
    return rmtree


def test_an_interrupt_inside_the_scratch_removal_comes_out_as_itself(monkeypatch):
    from resumecheck import interrupt

    monkeypatch.setattr(interrupt.shutil, "rmtree", _rmtree_cut_short(_Terminated(15)))
    with pytest.raises(KeyboardInterrupt) as raised:
        with interrupt.scratch_directory("cut-short-") as path:
            assert os.path.isdir(path)
    assert raised.value.signum == 15
    monkeypatch.undo()
    interrupt.remove_tree(path)
    assert not os.path.exists(path)


def test_a_failure_of_its_own_in_the_removal_is_not_taken_for_an_interrupt(monkeypatch):
    from resumecheck import interrupt

    def rmtree(path, ignore_errors=False, onerror=None):
        raise OSError(errno.EIO, "input/output error")

    monkeypatch.setattr(interrupt.shutil, "rmtree", rmtree)
    with pytest.raises(OSError, match="input/output error"):
        interrupt.remove_tree("/nonexistent/cut-short")
    assert interrupt.interrupt_behind(OSError(errno.EIO, "x")) is None


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_the_command_says_it_was_interrupted_not_that_the_cleanup_failed(
        monkeypatch, capsys, signum, code):
    from resumecheck import cli

    def run(args):
        try:
            cli._raise_for(signum)  # as the command's signal handler raises it
        finally:
            os.close(-1)  # a cleanup the interrupt cut short fails in its turn (EBADF)

    monkeypatch.setattr(cli, "_run", run)
    assert cli.main(["run", "resumecheck.tiny:TARGET"]) == code
    err = capsys.readouterr().err
    assert f"interrupted by {signal.Signals(signum).name}: nothing was judged" in err, err
    assert "OSError" not in err and "a bug in resumecheck" not in err, err


def test_a_scratch_directory_nothing_writes_in_is_removed_without_waiting(monkeypatch):
    """The wait for a child still writing is for a directory made again; one
    that stays gone is left at once (a change here waited 0.3 s at the end
    of every check)."""
    from resumecheck import interrupt

    def sleep(seconds):
        raise AssertionError(f"waited {seconds} s for a directory nothing writes in")

    with interrupt.scratch_directory("cut-short-") as path:
        with open(os.path.join(path, "a-file"), "w") as fh:
            fh.write("x")
        monkeypatch.setattr(interrupt.time, "sleep", sleep)
    assert not os.path.exists(path)


def test_an_interrupt_inside_the_removal_still_leaves_nothing_behind(monkeypatch):
    """The stress run again: the interrupt came out as itself, and the
    scratch directory it cut the removal of was left in TMPDIR."""
    from resumecheck import interrupt

    real = interrupt.shutil.rmtree
    calls = []

    def rmtree(path, ignore_errors=False, onerror=None):
        calls.append(path)
        if len(calls) == 1:  # the first removal is cut short
            _rmtree_cut_short(_Terminated(15))(path)
        real(path, ignore_errors=ignore_errors)

    monkeypatch.setattr(interrupt.shutil, "rmtree", rmtree)
    with pytest.raises(KeyboardInterrupt):
        with interrupt.scratch_directory("cut-short-") as path:
            pass
    assert not os.path.exists(path)
