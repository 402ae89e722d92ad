"""A chain of continuations (a -> b -> c), each starting with a copy of all the history before
it: every session keeps only what it added, whatever order the import meets them in. The list
form (Claude Code's ``continued-in``) trimmed ``b`` before comparing ``c`` with it when ``b``
came first, so ``c`` kept ``a``'s history and ``b``'s again: every hit in it twice."""

from __future__ import annotations

import itertools

import pytest

from langchain_session_recall.importers.records import ImportSession, without_copied_history
from langchain_session_recall.importers.report import ImportReport


def _said(*texts: str) -> list[tuple[str, dict[str, str]]]:
    return [(f"k{i}-{t}", {"role": "user", "content": t}) for i, t in enumerate(texts)]


def _chain() -> list[ImportSession]:
    a = ImportSession("a", "x", _said("one", "two"))
    b = ImportSession("b", "x", _said("one", "two", "three"), parent_session_id="a")
    c = ImportSession("c", "x", _said("one", "two", "three", "four"), parent_session_id="b")
    return [a, b, c]


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
def test_each_session_keeps_what_it_added(order: tuple[int, ...]) -> None:
    chain = _chain()
    kept = without_copied_history([chain[i] for i in order], lambda _: [], ImportReport("x"))
    added = {s.id: [m["content"] for _, m in s.messages] for s in kept}
    assert added == {"a": ["one", "two"], "b": ["three"], "c": ["four"]}


def test_a_parent_imported_before_is_read_with_its_lineage() -> None:
    # b was stored without the copy of a it started with; c, imported later (a sync that
    # finds its file only now), copied all of a and b: it is compared with that whole history
    from langchain_session_recall import SessionStore
    from langchain_session_recall.importers.base import stored_history, write_sessions

    store = SessionStore(":memory:")
    a, b, c = _chain()
    report = ImportReport("x")
    write_sessions(store, without_copied_history([a, b], stored_history(store), report), report)
    assert [m.content for m in store.get_messages("b")] == ["three"]
    [kept] = without_copied_history([c], stored_history(store), report)
    assert [m["content"] for _, m in kept.messages] == ["four"]
