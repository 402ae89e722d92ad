"""Delegation-chain resolution (pure): child session -> root session.

Sessions link to a parent through ``parent_session_id``: sub-agent runs, context-compression
continuations, branches. Search returns the root of each chain. Stored data can be broken
(missing parents, cycles), so resolution never loops and never fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

__all__ = ["chain_order", "cycle_of", "lineage_path", "oldest", "resolve_root", "resolve_roots"]

CycleRoot = Callable[[Sequence[str]], str]
"""Picks the root of a parent cycle among its members."""


def oldest(members: Iterable[str], started_at: Mapping[str, float]) -> str:
    """The member that started first, then the smallest id: the root of a cycle (pure).

    Example:
        >>> oldest(["a", "b", "c"], {"a": 300.0, "b": 100.0, "c": 100.0})
        'b'
    """
    return min(members, key=lambda sid: (started_at.get(sid, float("inf")), sid))


def cycle_of(session_id: str, parents: Mapping[str, str | None]) -> list[str]:
    """The members of the parent cycle ``session_id`` belongs to, from it on; ``[]`` when
    walking up from it never comes back to it (pure).

    Example:
        >>> cycle_of("a", {"a": "b", "b": "a"}), cycle_of("c", {"c": "a", "a": "b", "b": "a"})
        (['a', 'b'], [])
    """
    path = [session_id]
    seen = {session_id}
    while (parent := parents.get(path[-1])) is not None and parent in parents:
        if parent == session_id:
            return path
        if parent in seen:
            return []
        path.append(parent)
        seen.add(parent)
    return []


def resolve_root(
    session_id: str, parents: Mapping[str, str | None], *, cycle_root: CycleRoot = min
) -> str:
    """Root of ``session_id``'s chain given a ``{session: parent}`` map of known sessions.

    A parent absent from ``parents`` (deleted, or outside the caller's scope) ends the walk at
    the last known session. A cycle (written by another client: the stores refuse one) ends
    at ``cycle_root(members)``, so every member of a cycle resolves to the same root: the
    smallest id by default; the stores pass their oldest member
    (:meth:`~langchain_session_recall.backends.base.SessionBackend.first_started`), which
    recent mode lists as the cycle's root.

    Example:
        >>> resolve_root("c", {"a": None, "b": "a", "c": "b"})
        'a'
        >>> resolve_root("x", {"x": "y", "y": "x"})
        'x'
    """
    path: list[str] = []
    seen: set[str] = set()
    current = session_id
    while True:
        path.append(current)
        seen.add(current)
        parent = parents.get(current)
        if parent is None or parent not in parents:
            return current
        if parent in seen:
            cycle = path[path.index(parent) :]
            return cycle_root(cycle)
        current = parent


def resolve_roots(
    session_ids: Iterable[str], parents: Mapping[str, str | None], *, cycle_root: CycleRoot = min
) -> dict[str, str]:
    """``{session_id: root}`` for every id (see :func:`resolve_root`)."""
    roots: dict[str, str] = {}
    for sid in session_ids:
        if sid not in roots:
            roots[sid] = resolve_root(sid, parents, cycle_root=cycle_root)
    return roots


def lineage_path(session_id: str, parents: Mapping[str, str | None]) -> list[str]:
    """The session, its parent, ... up to the root, given a ``{session: parent}`` map.

    Stops at a parent absent from ``parents`` and before a session it has already listed.

    Example:
        >>> lineage_path("c", {"a": None, "b": "a", "c": "b"})
        ['c', 'b', 'a']
    """
    out = [session_id]
    seen = {session_id}
    while (parent := parents.get(out[-1])) is not None and parent in parents and parent not in seen:
        out.append(parent)
        seen.add(parent)
    return out


def chain_order(root: str, pairs: Iterable[tuple[str, str | None]]) -> list[str]:
    """The root, then its descendants breadth first (siblings by id), from ``(id, parent)`` pairs.

    Example:
        >>> chain_order("r", [("b", "r"), ("r", None), ("a", "r"), ("c", "a")])
        ['r', 'a', 'b', 'c']
    """
    children: dict[str, list[str]] = {}
    for sid, parent in pairs:
        if sid != root and parent is not None:
            children.setdefault(parent, []).append(sid)
    out, seen = [root], {root}
    for current in out:  # grows while iterating: a breadth-first walk
        for child in sorted(children.get(current, ())):
            if child not in seen:
                seen.add(child)
                out.append(child)
    return out
