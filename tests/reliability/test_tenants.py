"""Tenants: a search scoped to one ``user_id`` never shows another user's session.

Neither as a result, nor inside a transcript, nor through a delegation chain that crosses
users (alice's session delegating to bob's sub-agent delegating back to alice), nor in the
recent list, the metadata or the CLI's output. Both backends: on SQLite each generated forest
gets a fresh in-memory store; on PostgreSQL the test's database is emptied between forests
(and a share of the examples is run, ``reliability_support.examples``).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reliability.reliability_support import RELIABILITY_SETTINGS, count, examples
from store_targets import StoreFactory

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.cli import main as cli_main
from langchain_session_recall.tool import create_session_search_tool

USERS = ("alice", "bob", None)


def _marker(i: int) -> str:
    return f"m{i}z"  # one token per session, found only in that session's messages


@st.composite
def forests(draw: st.DrawFn) -> list[tuple[str | None, int | None]]:
    """Sessions as ``(user, parent index)``; parents come first, users mix freely."""
    n = draw(st.integers(2, 12))
    out: list[tuple[str | None, int | None]] = []
    for i in range(n):
        user = draw(st.sampled_from(USERS))
        parent = draw(st.one_of(st.none(), st.integers(0, i - 1))) if i else None
        out.append((user, parent))
    return out


def empty_stores(factory: StoreFactory) -> Callable[[], SessionBackend]:
    """A fresh, empty store per call: SQLite in memory; on PostgreSQL the test's store with
    every row deleted by another client (a schema per example would cost more than the test)."""
    if factory.backend == "sqlite":
        return lambda: SessionStore(":memory:")
    store = factory.open()
    target = factory.target()

    def emptied() -> SessionBackend:
        with target.sql() as sql, sql.transaction():
            for table in ("messages", "summary_cache", "import_ledger", "import_runs", "sessions"):
                sql.execute(f"DELETE FROM {table}")
        assert store.all_session_ids() == []
        return store

    return emptied


def build(forest: list[tuple[str | None, int | None]], store: SessionBackend) -> SessionBackend:
    for i, (user, parent) in enumerate(forest):
        store.add_session(
            f"sess-{i}",
            user_id=user,
            parent_session_id=None if parent is None else f"sess-{parent}",
            source="subagent" if parent is not None else "cli",
            started_at=1_790_000_000.0 + i,
        )
        store.add_messages(
            f"sess-{i}",
            [
                {"role": "user", "content": f"common question {_marker(i)}"},
                {"role": "assistant", "content": f"common answer {_marker(i)}"},
            ],
        )
    return store


def assert_scoped(
    forest: list[tuple[str | None, int | None]], store: SessionBackend, user: str, query: str
) -> int:
    owner = {f"sess-{i}": u for i, (u, _) in enumerate(forest)}
    foreign = [_marker(i) for i, (u, _) in enumerate(forest) if u != user]
    retriever = SessionRecallRetriever(store=store, user_id=user, k=20, max_k=20)
    docs = retriever.invoke(query)
    for doc in docs:
        meta = doc.metadata
        assert owner[meta["session_id"]] == user
        assert meta["user_id"] == user
        assert all(owner[s] == user for s in meta.get("matched_session_ids", ()))
        leaked = [m for m in foreign if m in doc.page_content]
        assert not leaked, f"{user}'s result {meta['session_id']} shows {leaked}"
    return len(docs)


@pytest.mark.slow  # generated forests of sessions, each searched, browsed and shown per user
def test_scoped_search_recent_and_transcripts_never_cross_users(
    store_factory: StoreFactory,
) -> None:
    backend = store_factory.backend
    fresh = empty_stores(store_factory)

    @settings(RELIABILITY_SETTINGS, max_examples=examples(300, backend))
    @given(forest=forests(), pick=st.integers(0, 11), current=st.integers(0, 11))
    def check(forest: list[tuple[str | None, int | None]], pick: int, current: int) -> None:
        count("tenants.cases", backend=backend)
        store = build(forest, fresh())
        marker = _marker(pick % len(forest))
        for user in ("alice", "bob"):
            for query in ("common", marker, f"common OR {marker}", ""):
                checked = assert_scoped(forest, store, user, query)
                count("tenants.documents_checked", checked, backend=backend)
            # with the current session set to someone else's, nothing leaks either
            retriever = SessionRecallRetriever(
                store=store, user_id=user, current_session_id=f"sess-{current % len(forest)}"
            )
            for doc in retriever.invoke("common"):
                assert doc.metadata["user_id"] == user
            owned = {f"sess-{i}" for i, (u, _) in enumerate(forest) if u == user}
            recent = store.recent_sessions(limit=50, exclude_sources=(), user_id=user)
            assert {r.id for r in recent} <= owned
            count("tenants.searches", 5, backend=backend)
        if backend == "sqlite":
            store.close()

    check()


def test_a_delegation_chain_that_crosses_users(store_factory: StoreFactory) -> None:
    """alice -> bob (sub-agent) -> alice: each user sees only their own sessions' messages."""
    backend = store_factory.backend
    target = store_factory.target()
    with target.open() as store:
        store.add_session("a-root", user_id="alice", title="alice plans")
        store.add_session("b-sub", user_id="bob", parent_session_id="a-root", source="subagent")
        store.add_session("a-sub", user_id="alice", parent_session_id="b-sub", source="subagent")
        store.add_session("b-root", user_id="bob", title="bob's own")
        store.add_session("a-under-b", user_id="alice", parent_session_id="b-root")
        for sid, text in [
            ("a-root", "rollout plan alpharoot"),
            ("b-sub", "rollout secret bobsub"),
            ("a-sub", "rollout detail alphasub"),
            ("b-root", "rollout bobroot"),
            ("a-under-b", "rollout alphaunder"),
        ]:
            store.add_messages(sid, [{"role": "user", "content": text}])

        alice = SessionRecallRetriever(store=store, user_id="alice", k=5)
        docs = alice.invoke("rollout")
        assert {d.metadata["session_id"] for d in docs} == {"a-root", "a-sub", "a-under-b"}
        text = "\n".join(d.page_content for d in docs)
        assert "bobsub" not in text and "bobroot" not in text
        assert alice.invoke("bobsub") == [] and alice.invoke("bobroot") == []

        bob = SessionRecallRetriever(store=store, user_id="bob", k=5)
        docs = bob.invoke("rollout")
        assert {d.metadata["session_id"] for d in docs} == {"b-sub", "b-root"}
        text = "\n".join(d.page_content for d in docs)
        assert "alpha" not in text

        # unscoped: the whole chain, as one document per root
        everyone = SessionRecallRetriever(store=store, k=5).invoke("rollout")
        assert {d.metadata["session_id"] for d in everyone} == {"a-root", "b-root"}

        # hostile user ids match nobody
        for user in ("alice' OR '1'='1", "%", "*", "alice\x00", ""):
            assert SessionRecallRetriever(store=store, user_id=user).invoke("rollout") == []
    count("tenants.documents_checked", 9, backend=backend)

    alice_only, bob_only = {"a-root", "a-sub", "a-under-b"}, {"b-sub", "b-root"}
    with target.open(read_only=True) as store:
        for user, expected, foreign in (
            ("alice", alice_only, ("bobsub", "bobroot")),
            ("bob", bob_only, ("alpharoot", "alphasub", "alphaunder")),
        ):
            tool = create_session_search_tool(store, user_id=user)
            for args in ({"query": "rollout", "limit": 5}, {"query": "", "limit": 5}):
                call = {"name": "session_search", "args": args, "id": "c1", "type": "tool_call"}
                other = "b-root" if user == "alice" else "a-root"
                message = tool.invoke(call, config={"configurable": {"session_id": other}})
                payload = json.loads(message.content)
                assert payload["success"] is True
                assert payload["results"]
                assert {r["session_id"] for r in payload["results"]} <= expected
                text = json.dumps(payload)
                assert not [word for word in foreign if word in text]
                count("tenants.tool_calls", backend=backend)

    for user, expected in (("alice", alice_only), ("bob", bob_only)):
        out = io.StringIO()
        code = cli_main(
            ["search", "rollout", "--db", target.db, "--read-only", "--user", user, "--json"],
            out=out,
        )
        assert code == 0
        payload = json.loads(out.getvalue())
        assert {p["metadata"]["session_id"] for p in payload} <= expected
        assert all(p["metadata"]["user_id"] == user for p in payload)
        count("tenants.cli_runs", backend=backend)


def test_a_user_id_holding_nul_is_refused_not_merged_into_another_user(
    store_factory: StoreFactory,
) -> None:
    """``"alice\x00"`` is not alice. PostgreSQL text cannot hold NUL: dropping it made the
    session alice's (a cross-tenant leak); both backends now refuse such an identifier."""
    store = store_factory.open()
    for field in ("user_id", "parent_session_id"):
        with pytest.raises(ValueError, match=f"{field} must not contain NUL"):
            store.add_session("mallory", **{field: "alice\x00"})
    with pytest.raises(ValueError, match="session_id must not contain NUL"):
        store.add_session("mallory\x00")
    assert store.get_session("mallory") is None
    store.add_session("alices", user_id="alice")
    store.add_messages("alices", [{"role": "user", "content": "rollout of alice"}])
    alice = SessionRecallRetriever(store=store, user_id="alice", k=5)
    assert [d.metadata["session_id"] for d in alice.invoke("rollout")] == ["alices"]
    assert [r.id for r in store.recent_sessions(user_id="alice")] == ["alices"]
