"""Delegation-chain resolution (pure): child session -> root session.

Sessions link to a parent through ``parent_session_id``: sub-agent runs, context-compression
continuations, branches. Search returns the root of each chain. Stored data can be broken
(missing parents, cycles), so resolution never loops and never fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["chain_order", "lineage_path", "resolve_root", "resolve_roots"]


def resolve_root(session_id: str, parents: Mapping[str, str | None]) -> str:
    """Root of ``session_id``'s chain given a ``{session: parent}`` map of known sessions.

    A parent absent from ``parents`` (deleted, or outside the caller's scope) ends the walk at
    the last known session. A cycle ends at its smallest id, so every member of a cycle
    resolves to the same root.

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
            return min(cycle)
        current = parent


def resolve_roots(session_ids: Iterable[str], parents: Mapping[str, str | None]) -> dict[str, str]:
    """``{session_id: root}`` for every id, memoizing shared ancestors."""
    roots: dict[str, str] = {}
    for sid in session_ids:
        if sid not in roots:
            roots[sid] = resolve_root(sid, parents)
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
