"""Runs of import keys: many ledger entries in one row (pure).

An import's keys mostly name a place in a file, ``<file or thread>:<line>``, and a batch of
them comes in the file's order with consecutive message ids. The ledger keeps such a batch as
one *run* (``import_runs``: the keys' prefix, the first key's number, the gaps to the others,
the first message's id) instead of a row per message (``import_ledger``), which was about a
fifth of a Codex import's write time and nearly a third of its store's size. A key of any other
shape goes to ``import_ledger`` as before; a key whose message id does not follow the one
before starts a new run.

Example:
    >>> runs, single = split_into_runs(["t:3", "t:7", "t:8", "odd"], [10, 11, 12, 13])
    >>> runs, single
    ([Run(prefix='t', first=3, gaps='4,1', message_id=10)], [('odd', 13)])
    >>> run_keys(runs[0])
    ['t:3', 't:7', 't:8']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "Run",
    "key_numbers",
    "keyed",
    "numbered",
    "parse_keys",
    "run_keys",
    "run_numbers",
    "split_into_runs",
]

_MAX_DIGITS = 15
"""Longest number a run holds (below 2**53: exact in every column type and in JSON)."""


@dataclass(frozen=True, slots=True)
class Run:
    """Keys ``prefix:first``, ``prefix:first+gap1``, ... whose messages have consecutive ids
    from ``message_id`` (``None``: the messages were forgotten)."""

    prefix: str
    first: int
    gaps: str
    """The differences between each number and the one before, comma-separated (``""``: a
    run of one key)."""
    message_id: int | None

    @property
    def size(self) -> int:
        """How many keys the run holds."""
        return 2 + self.gaps.count(",") if self.gaps else 1


def numbered(key: str) -> tuple[str, int] | None:
    """``(prefix, number)`` of a key ``<prefix>:<number>`` written the one way a number is
    (no sign, no leading zero, at most 15 digits), else ``None``.

    Example:
        >>> numbered("a:b:12"), numbered("x:012"), numbered("x:"), numbered("12")
        (('a:b', 12), None, None, None)
    """
    prefix, colon, digits = key.rpartition(":")
    if (
        not colon
        or not digits.isdigit()
        or not digits.isascii()
        or len(digits) > _MAX_DIGITS
        or (digits[0] == "0" and len(digits) > 1)
    ):
        return None
    return prefix, int(digits)


def parse_keys(keys: Iterable[str]) -> dict[str, tuple[str, int] | None]:
    """Each distinct key's ``(prefix, number)``, or ``None`` (see :func:`numbered`): parsed
    once for both the lookup of a batch's keys and the runs it writes.

    Example:
        >>> parse_keys(["t:1", "odd", "t:1"])
        {'t:1': ('t', 1), 'odd': None}
    """
    return {key: numbered(key) for key in keys}


def split_into_runs(
    keys: Sequence[str],
    message_ids: Sequence[int],
    parsed: Mapping[str, tuple[str, int] | None] | None = None,
) -> tuple[list[Run], list[tuple[str, int]]]:
    """The keys of a batch and their messages' ids, in the batch's order, as runs (each a
    stretch of keys of one prefix with rising numbers and consecutive ids) and the
    ``(key, message id)`` pairs of keys of no run's shape. ``parsed``: the keys already
    parsed (:func:`parse_keys`).

    Example:
        >>> runs, _ = split_into_runs(["a:1", "a:2", "b:1", "a:3"], [5, 6, 7, 9])
        >>> [(r.prefix, r.first, r.gaps, r.message_id) for r in runs]
        [('a', 1, '1', 5), ('b', 1, '', 7), ('a', 3, '', 9)]
    """
    if parsed is None:
        parsed = parse_keys(keys)
    runs: list[Run] = []
    single: list[tuple[str, int]] = []
    prefix: str | None = None
    first = last = last_id = start_id = 0
    gaps: list[str] = []

    def close() -> None:
        if prefix is not None:
            runs.append(Run(prefix, first, ",".join(gaps), start_id))

    for key, mid in zip(keys, message_ids, strict=True):
        parts = parsed[key]
        if parts is None:
            single.append((key, mid))
            continue
        p, n = parts
        if p == prefix and n > last and mid == last_id + 1:
            gaps.append(str(n - last))
        else:
            close()
            prefix, first, start_id, gaps = p, n, mid, []
        last, last_id = n, mid
    close()
    return runs, single


def run_numbers(first: int, gaps: str) -> list[int]:
    """The numbers of a run's keys.

    Example:
        >>> run_numbers(3, "4,1"), run_numbers(9, "")
        ([3, 7, 8], [9])
    """
    numbers = [first]
    if gaps:
        for gap in gaps.split(","):
            numbers.append(numbers[-1] + int(gap))
    return numbers


def run_keys(run: Run) -> list[str]:
    """The keys a run holds, in order."""
    return [f"{run.prefix}:{n}" for n in run_numbers(run.first, run.gaps)]


def key_numbers(parsed: Mapping[str, tuple[str, int] | None]) -> dict[str, set[int]]:
    """The numbers asked about under each prefix, for the keys of a run's shape among the
    keys ``parsed`` (:func:`parse_keys`).

    Example:
        >>> key_numbers(parse_keys(["t:1", "t:4", "odd", "u:2"]))
        {'t': {1, 4}, 'u': {2}}
    """
    asked: dict[str, set[int]] = {}
    for parts in parsed.values():
        if parts is not None:
            asked.setdefault(parts[0], set()).add(parts[1])
    return asked


def keyed(rows: Iterable[tuple[str, int, str]], asked: dict[str, set[int]] | None) -> set[str]:
    """The keys held by runs given as ``(prefix, first, gaps)`` rows: all of them, or with
    ``asked`` (from :func:`key_numbers`) only those asked about.

    Example:
        >>> sorted(keyed([("t", 3, "4,1")], {"t": {7, 9}})), sorted(keyed([("t", 3, "1")], None))
        (['t:7'], ['t:3', 't:4'])
    """
    found: set[str] = set()
    for prefix, first, gaps in rows:
        numbers = run_numbers(int(first), str(gaps))
        wanted = None if asked is None else asked.get(str(prefix), set())
        found.update(f"{prefix}:{n}" for n in numbers if wanted is None or n in wanted)
    return found
