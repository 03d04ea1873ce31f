"""Calls of ``hash()`` on a string or bytes in the program's own code.

``hash()`` of a str or bytes follows the interpreter's hash seed
(PYTHONHASHSEED), which a new interpreter draws anew: an order or a choice
made from it (documents sorted by ``hash(name)``, a shard picked by
``hash(path) % n``) changes at a real restart. Every in-process restart
shares this interpreter's seed, and so those values: the check cannot see
them change (trial 149: a data order sorted by ``hash()`` of a string passed
every in-process door). ``watching`` stands in for ``builtins.hash`` while
the reference runs in-process and notes where the program's own code (its
namespaces, ``module_state.program_spaces``) calls it on such a value. Only
explicit calls are seen, and not those of a ``__hash__`` (a key's hash
decides no order but a set's, which the report's caveat names): a set
iterated, or a dict built from one, is not seen here.
"""

from __future__ import annotations

import builtins
import contextlib
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["hash_calls_notice", "watching"]

_AT_MOST = 3
"""Places noted (the notice names the first few)."""


def _seeded(value: Any, depth: int = 0) -> bool:
    """Whether ``hash(value)`` follows the hash seed: a str or bytes, or a
    tuple or frozenset that holds one."""
    if isinstance(value, (str, bytes)):
        return True
    if depth < 3 and isinstance(value, (tuple, frozenset)):
        return any(_seeded(v, depth + 1) for v in value)
    return False


@contextlib.contextmanager
def watching(spaces: Sequence[Mapping[str, Any]], into: list[str]) -> Iterator[None]:
    """While inside, note in ``into`` (``file.py:68 in _batch``, each once, at
    most a few) where code of ``spaces`` calls ``hash()`` on a value whose
    hash follows the seed."""
    ids = {id(space) for space in spaces}
    plain = builtins.hash
    if not ids:
        yield
        return

    def watched_hash(value: Any, /) -> int:
        if len(into) < _AT_MOST and _seeded(value):
            frame = sys._getframe(1)
            code = frame.f_code
            if id(frame.f_globals) in ids and code.co_name != "__hash__":
                where = f"{Path(code.co_filename).name}:{frame.f_lineno} in {code.co_name}"
                if where not in into:
                    into.append(where)
        return plain(value)

    builtins.hash = watched_hash
    try:
        yield
    finally:
        builtins.hash = plain


def hash_calls_notice(calls: Sequence[str], command: str | None) -> str | None:
    """The WARNING where the program's code called ``hash()`` on a string or
    bytes in-process (None: it did not). ``command``: the check with
    ``--isolation process``."""
    if not calls:
        return None
    return (f"your program calls hash() on a string or bytes ({'; '.join(calls)}): its value "
            "follows PYTHONHASHSEED, which every in-process restart shares and a real restart (a "
            "new interpreter) draws anew, so where an order, a split or a choice is made from it "
            "(items sorted by hash(name), a shard picked by hash(path) % n), this check cannot "
            "see a real restart make it otherwise (a value used only as a key within one run "
            "is harmless; for a stable one use hashlib or zlib.crc32). Check it with "
            "--isolation process, each restart a new interpreter under another hash seed"
            + (f": {command}" if command else ""))
