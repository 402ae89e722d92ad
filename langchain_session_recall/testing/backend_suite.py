"""The conformance suite of :class:`~langchain_session_recall.backends.base.SessionBackend`.

Every method of the contract, checked through the contract alone: writes and their errors,
transactions, read-only stores, the import ledger, reads and their order, lineage (cycles
included), recent sessions (filters, tenants, automation collapsed across pages), full-text
search (one hit per message, best first, ``limit``, hits complete at session level with
``per_session``, readings, filters, the automation budget, ``rank_window``), session headers,
vocabulary, forgetting (``delete_sessions`` and its async twin, ``sessions_to_forget``,
``release_forgotten``), the summary cache, statistics, ``check`` and ``optimize``. A backend
that passes it works under the retriever, the summarizer, the tool, the recorder, the importers
and the CLI.

Subclass :class:`SessionBackendTests` in a test module and give it an ``open_store`` fixture.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langchain_session_recall import errors
from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.core.query import parse_query
from langchain_session_recall.core.text import TOOL_CLIP_MARKER, TOOL_OUTPUT_KEEP
from langchain_session_recall.models import CachedSummary, MessageHit, SearchFilters

__all__ = ["SessionBackendTests", "StoreOpener", "set_parent_directly"]


class StoreOpener(Protocol):
    """Opens the test's store: an empty one on the first call, the same one again after."""

    def __call__(self, *, read_only: bool = False) -> SessionBackend: ...


def _say(
    store: SessionBackend, sid: str, *texts: str, role: str = "user", **session: Any
) -> list[int]:
    """Create (or update) session ``sid`` and add one ``role`` message per text, a second apart."""
    store.add_session(sid, **session)
    start = float(session.get("started_at") or 1000.0)
    return store.add_messages(
        sid, [{"role": role, "content": t, "timestamp": start + i} for i, t in enumerate(texts)]
    )


def _match(
    store: SessionBackend, text: str, reading: str = "relaxed", **kwargs: Any
) -> list[MessageHit]:
    return store.match_messages(parse_query(text), reading, **kwargs)  # type: ignore[arg-type]


def _sessions(hits: Sequence[MessageHit]) -> set[str]:
    return {h.session_id for h in hits}


def set_parent_directly(store: SessionBackend, child: str, parent: str) -> None:
    """Link ``child`` to ``parent`` as another client could, through the store's own SQL and
    past its cycle check (``add_session`` refuses a link that makes a cycle)."""
    p = store.dialect.param
    with store._write() as conn:
        conn.execute(
            f"UPDATE sessions SET parent_session_id = {p('parent')} WHERE id = {p('id')}",
            {"parent": parent, "id": child},
        )


def _assert_contract_order(hits: Sequence[MessageHit]) -> None:
    """Each message once, best first (relevance descending, then message id)."""
    ids = [h.message_id for h in hits]
    assert len(ids) == len(set(ids)), f"a message came back twice: {ids}"
    keys = [(-h.relevance, h.message_id) for h in hits]
    assert keys == sorted(keys), f"not best first: {[(h.message_id, h.relevance) for h in hits]}"
    assert all(h.relevance >= 0 for h in hits), "relevance is positive, higher is better"


class SessionBackendTests:
    """The :class:`~langchain_session_recall.backends.base.SessionBackend` contract as tests.

    Subclass it in a module pytest collects (the class name must start with ``Test``) and
    override :meth:`open_store`: a fixture returning a :class:`StoreOpener` that opens a store
    private to the test, empty the first time; ``open_store(read_only=True)`` opens the same
    store read-only. The suite closes what it opens; the fixture removes the store afterwards.
    :meth:`set_parent_directly` writes what another client could (a parent cycle); override it
    if your backend's rows are not reached through the shared SQL.

    Example:
        >>> import pytest
        >>> from langchain_session_recall import SessionStore
        >>> class TestMyStore(SessionBackendTests):
        ...     @pytest.fixture
        ...     def open_store(self, tmp_path):
        ...         def open_(*, read_only=False):
        ...             return SessionStore(tmp_path / "recall.db", read_only=read_only)
        ...         return open_
        >>> "test_match_messages_returns_each_message_once_best_first" in dir(TestMyStore)
        True
    """

    # ------------------------------------------------------------------ fixtures and hooks

    @pytest.fixture
    def open_store(self) -> StoreOpener:
        """Override: how to open this test's store (see the class docstring)."""
        raise NotImplementedError(
            f"{type(self).__name__} must override the open_store fixture: return a callable "
            "that opens a store private to the test (read_only=True: the same store, read-only)"
        )

    @pytest.fixture
    def store(self, open_store: StoreOpener) -> Iterator[SessionBackend]:
        """The test's store, open for writing; closed after the test."""
        store = open_store()
        try:
            yield store
        finally:
            store.close()

    def set_parent_directly(self, store: SessionBackend, child: str, parent: str) -> None:
        """Link ``child`` to ``parent`` as another client could, bypassing the store's cycle
        check; override it if your backend's rows are not reached through the shared SQL."""
        set_parent_directly(store, child, parent)

    # ------------------------------------------------------------------ opening and closing

    def test_is_a_session_backend_that_describes_itself(self, store: SessionBackend) -> None:
        assert isinstance(store, SessionBackend)
        assert store.read_only is False
        assert isinstance(store.describe(), str) and store.describe()
        assert type(store).__name__ in repr(store) and "read-write" in repr(store)
        assert isinstance(store.store_id, str) and store.store_id
        assert store.rank_window > 0

    def test_a_closed_store_refuses_reads_and_writes(self, open_store: StoreOpener) -> None:
        store = open_store()
        store.close()
        store.close()  # idempotent
        with pytest.raises(errors.SessionRecallError, match="closed"):
            store.get_session("s")
        with pytest.raises(errors.SessionRecallError, match="closed"):
            store.add_session("s")

    def test_a_closed_store_keeps_its_data_for_the_next_open(self, open_store: StoreOpener) -> None:
        with open_store() as store:
            _say(store, "s", "kept across opens")
        with pytest.raises(errors.SessionRecallError, match="closed"):
            store.get_messages("s")
        with open_store() as again:
            assert [m.content for m in again.get_messages("s")] == ["kept across opens"]
            assert again.store_id != store.store_id

    # ------------------------------------------------------------------ writing

    def test_add_session_creates_then_updates_only_the_given_fields(
        self, store: SessionBackend
    ) -> None:
        created = store.add_session(
            "s1", source="telegram", model="gpt", title="T", user_id="u1", started_at=5.0
        )
        assert (created.id, created.source, created.model, created.title) == (
            "s1",
            "telegram",
            "gpt",
            "T",
        )
        assert (created.user_id, created.started_at, created.parent_session_id) == ("u1", 5.0, None)
        assert (created.ended_at, created.end_reason, created.message_count) == (None, None, 0)
        assert store.get_session("s1") == created
        updated = store.add_session("s1", title="New title")  # no source given: kept
        assert (updated.title, updated.source, updated.model) == ("New title", "telegram", "gpt")
        assert (updated.user_id, updated.started_at) == ("u1", 5.0)
        store.add_session("p", started_at=1.0)
        assert store.add_session("s1", parent_session_id="p").parent_session_id == "p"
        assert store.add_session("s1", source="slack").source == "slack"
        assert store.get_session("nope") is None

    def test_add_session_with_source_cli_changes_the_source(self, store: SessionBackend) -> None:
        """``source="cli"`` given on purpose is a value like any other (it once counted as
        "not given", so a session could never be moved back to the default source)."""
        store.add_session("s1", source="telegram")
        assert store.add_session("s1").source == "telegram"
        assert store.add_session("s1", source="cli").source == "cli"
        assert store.get_session("s1").source == "cli"  # type: ignore[union-attr]

    def test_add_session_defaults(self, store: SessionBackend) -> None:
        before = time.time()
        session = store.add_session("s")
        assert session.source == "cli"
        assert before - 1.0 <= session.started_at <= time.time() + 1.0

    def test_add_messages_stores_dicts_and_langchain_messages(self, store: SessionBackend) -> None:
        store.add_session("s1")
        call = {"name": "ls", "args": {"path": "/"}, "id": "c1"}
        ids = store.add_messages(
            "s1",
            [
                HumanMessage("list files"),
                AIMessage("", tool_calls=[call]),
                ToolMessage("bin etc", tool_call_id="c1", name="ls"),
                {"role": "assistant", "content": "done", "timestamp": 4e9},
            ],
        )
        assert len(ids) == 4 and ids == sorted(ids) and len(set(ids)) == 4
        messages = store.get_messages("s1")
        assert [m.id for m in messages] == ids
        assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
        assert {m.session_id for m in messages} == {"s1"}
        assert messages[0].content == "list files"
        assert messages[1].tool_call_names == ["ls"]
        assert (messages[2].tool_name, messages[2].tool_call_id, messages[2].content) == (
            "ls",
            "c1",
            "bin etc",
        )
        assert (messages[3].content, messages[3].timestamp) == ("done", 4e9)
        assert store.get_session("s1").message_count == 4  # type: ignore[union-attr]
        (later,) = store.add_messages("s1", [{"role": "user", "content": "more", "timestamp": 5e9}])
        assert later > ids[-1]
        assert store.add_messages("s1", []) == []
        assert store.get_session("s1").message_count == 5  # type: ignore[union-attr]

    def test_a_batch_larger_than_one_insert_statement_keeps_order_and_ids(
        self, store: SessionBackend
    ) -> None:
        store.add_session("big")
        texts = [
            f"step {i} of the migration" + (" 部署脚本" if i % 3 == 0 else "") for i in range(257)
        ]
        ids = store.add_messages("big", [{"role": "user", "content": t} for t in texts])
        assert len(ids) == 257 and ids == sorted(ids) and len(set(ids)) == 257
        stored = store.get_messages("big")
        assert [m.id for m in stored] == ids
        assert [m.content for m in stored] == texts
        assert store.get_session("big").message_count == 257  # type: ignore[union-attr]
        found = {h.message_id for h in _match(store, "部署", limit=500)}
        assert found == {ids[i] for i in range(0, 257, 3)}

    def test_an_invalid_message_stores_nothing_of_its_batch(self, store: SessionBackend) -> None:
        store.add_session("s1")
        with pytest.raises(errors.InvalidMessageError, match="unknown message role"):
            store.add_messages(
                "s1", [{"role": "user", "content": "ok"}, {"role": "alien", "content": "x"}]
            )
        with pytest.raises(errors.InvalidMessageError, match="timestamp"):
            store.add_messages("s1", [{"role": "user", "content": "ok", "timestamp": "noon"}])
        assert store.get_messages("s1") == []
        assert store.get_session("s1").message_count == 0  # type: ignore[union-attr]

    def test_write_errors_are_ours_and_say_what_to_do(self, store: SessionBackend) -> None:
        with pytest.raises(errors.SessionNotFoundError, match="add_session"):
            store.add_messages("ghost", [{"role": "user", "content": "hi"}])
        with pytest.raises(errors.SessionNotFoundError, match="add_session"):
            store.add_messages("ghost", [])
        with pytest.raises(errors.SessionNotFoundError, match="parent session"):
            store.add_session("child", parent_session_id="ghost")
        assert store.get_session("child") is None
        with pytest.raises(errors.SessionNotFoundError):
            store.end_session("ghost")
        bad_sessions: list[dict[str, Any]] = [
            {"session_id": ""},
            {"session_id": "s", "source": ""},
            {"session_id": "s", "started_at": float("nan")},
            {"session_id": "s", "started_at": float("inf")},
            {"session_id": "s\x00"},
            {"session_id": "s", "user_id": "ana\x00"},
        ]
        for kwargs in bad_sessions:
            with pytest.raises(errors.InvalidSessionError):
                store.add_session(**kwargs)
        assert store.all_session_ids() == []
        store.add_session("a")
        store.add_session("b", parent_session_id="a")
        with pytest.raises(errors.LineageCycleError, match="cycle"):
            store.add_session("a", parent_session_id="b")
        with pytest.raises(errors.LineageCycleError, match="own parent"):
            store.add_session("a", parent_session_id="a")
        assert store.get_session("a").parent_session_id is None  # type: ignore[union-attr]
        for error in (
            errors.SessionNotFoundError,
            errors.InvalidSessionError,
            errors.LineageCycleError,
        ):
            assert issubclass(error, errors.SessionRecallError)

    def test_end_session(self, store: SessionBackend) -> None:
        store.add_session("s")
        store.end_session("s", end_reason="done", ended_at=9.0)
        ended = store.get_session("s")
        assert ended is not None and (ended.ended_at, ended.end_reason) == (9.0, "done")
        before = time.time()
        store.end_session("s")
        again = store.get_session("s")
        assert again is not None and again.end_reason == "done"  # kept when not given
        assert again.ended_at is not None and before - 1.0 <= again.ended_at <= time.time() + 1.0

    # ------------------------------------------------------------------ transactions

    def test_a_transaction_lands_whole_or_not_at_all(self, store: SessionBackend) -> None:
        with store.transaction() as tx:
            assert tx is store
            for n in range(3):
                store.add_session(f"s{n}", title=f"run {n}")
                assert store.get_session(f"s{n}") is not None  # reads see the block's writes
                store.add_messages(f"s{n}", [{"role": "user", "content": f"deploy number {n}"}])
        assert _sessions(_match(store, "deploy")) == {"s0", "s1", "s2"}
        with pytest.raises(RuntimeError, match="boom"), store.transaction():
            store.add_session("lost")
            store.add_messages("s0", [{"role": "user", "content": "never stored"}])
            raise RuntimeError("boom")
        assert store.get_session("lost") is None
        assert [m.content for m in store.get_messages("s0")] == ["deploy number 0"]
        assert _match(store, "never stored") == []

    def test_a_failed_write_inside_a_transaction_is_undone_alone(
        self, store: SessionBackend
    ) -> None:
        with store.transaction():
            store.add_session("keep")
            store.add_messages("keep", [{"role": "user", "content": "first"}])
            with pytest.raises(errors.InvalidMessageError):
                store.add_messages(
                    "keep",
                    [{"role": "user", "content": "half"}, {"role": "alien", "content": "x"}],
                )
            with pytest.raises(errors.SessionNotFoundError):
                store.add_messages("ghost", [{"role": "user", "content": "x"}])
            with store.transaction():  # nested blocks are savepoints
                store.add_messages("keep", [{"role": "user", "content": "second"}])
            store.add_messages("keep", [{"role": "user", "content": "third"}])
        assert [m.content for m in store.get_messages("keep")] == ["first", "second", "third"]
        assert store.get_session("keep").message_count == 3  # type: ignore[union-attr]

    def test_other_threads_see_a_transaction_when_it_ends(self, store: SessionBackend) -> None:
        store.add_session("s")
        seen: list[int] = []

        def read() -> None:
            seen.append(len(store.get_messages("s")))

        with store.transaction():
            store.add_messages("s", [{"role": "user", "content": "mine"}])
            reader = threading.Thread(target=read)
            reader.start()
            reader.join(timeout=30)
        read()
        assert seen == [0, 1]

    # ------------------------------------------------------------------ read-only stores

    def test_a_read_only_store_reads_and_refuses_every_write(
        self, store: SessionBackend, open_store: StoreOpener
    ) -> None:
        _say(store, "s", "keep this")
        store.put_cached_summary("k", session_id="s", summary="recap", model=None)
        before = {k: v for k, v in store.stats().items() if k != "size_bytes"}
        message = {"role": "user", "content": "x"}
        with open_store(read_only=True) as reader:
            assert reader.read_only and "read-only" in repr(reader)
            assert [m.content for m in reader.get_messages("s")] == ["keep this"]
            assert _sessions(_match(reader, "keep")) == {"s"}
            writes = {
                "add_session": lambda: reader.add_session("t"),
                "update a session": lambda: reader.add_session("s", title="changed"),
                "add_messages": lambda: reader.add_messages("s", [message]),
                "import_messages": lambda: reader.import_messages(
                    "s", [("k1", message)], source_kind="jsonl"
                ),
                "end_session": lambda: reader.end_session("s"),
                "put_cached_summary": lambda: reader.put_cached_summary(
                    "k2", session_id="s", summary="x", model=None
                ),
                "optimize": reader.optimize,
            }
            for name, write in writes.items():
                with pytest.raises(errors.ReadOnlyStoreError, match="read-only"):
                    write()
                    pytest.fail(f"{name} wrote to a read-only store")
            with pytest.raises(errors.ReadOnlyStoreError), reader.transaction():
                pass
            assert reader.check().ok
        after = {k: v for k, v in store.stats().items() if k != "size_bytes"}
        assert after == before
        assert store.get_session("s").title is None  # type: ignore[union-attr]

    # ------------------------------------------------------------------ the import ledger

    def test_import_messages_adds_each_external_key_once(self, store: SessionBackend) -> None:
        store.add_session("s1")
        store.add_session("s2")

        def said(text: str) -> dict[str, Any]:
            return {"role": "user", "content": text}

        pairs = [("k1", said("one")), ("k2", said("two")), ("k1", said("one again"))]
        assert len(store.import_messages("s1", pairs, source_kind="jsonl")) == 2
        assert [m.content for m in store.get_messages("s1")] == ["one", "two"]
        assert store.import_messages("s1", pairs, source_kind="jsonl") == []
        # a key of a kind is imported once in the whole store, into whichever session
        assert store.import_messages("s2", [("k2", said("two"))], source_kind="jsonl") == []
        assert len(store.import_messages("s2", [("k2", said("two"))], source_kind="other")) == 1
        assert store.imported_keys("jsonl", "s1") == {"k1", "k2"}
        assert store.imported_keys("jsonl", "s2") == set()
        assert store.imported_keys("other", "s2") == {"k2"}
        assert store.get_session("s1").message_count == 2  # type: ignore[union-attr]

    def test_import_messages_pages_through_a_large_ledger(self, store: SessionBackend) -> None:
        store.add_session("s")
        pairs = [
            (f"line-{i}", {"role": "user", "content": f"line {i}", "timestamp": float(i)})
            for i in range(1234)
        ]
        assert len(store.import_messages("s", pairs, source_kind="jsonl")) == 1234
        new = ("line-new", {"role": "user", "content": "new", "timestamp": 5000.0})
        assert len(store.import_messages("s", [*pairs, new], source_kind="jsonl")) == 1
        assert store.get_session("s").message_count == 1235  # type: ignore[union-attr]
        assert len(store.imported_keys("jsonl", "s")) == 1235

    def test_an_import_into_a_missing_session_writes_no_ledger_row(
        self, store: SessionBackend
    ) -> None:
        pairs = [("k1", {"role": "user", "content": "hi"})]
        with pytest.raises(errors.SessionNotFoundError):
            store.import_messages("ghost", pairs, source_kind="jsonl")
        store.add_session("s")
        assert len(store.import_messages("s", pairs, source_kind="jsonl")) == 1

    # ------------------------------------------------------------------ reading

    def test_messages_come_oldest_first_and_last_reads_the_tail(
        self, store: SessionBackend
    ) -> None:
        store.add_session("s")
        store.add_messages(
            "s",
            [
                {"role": "user", "content": f"m{i}", "timestamp": t}
                for i, t in enumerate([30.0, 10.0, 20.0])
            ],
        )
        assert [m.content for m in store.get_messages("s")] == ["m1", "m2", "m0"]
        assert [m.content for m in store.get_messages("s", last=2)] == ["m2", "m0"]
        assert [m.content for m in store.get_messages("s", last=10)] == ["m1", "m2", "m0"]
        assert store.get_messages("s", last=0) == [] and store.get_messages("s", last=-1) == []
        assert store.get_messages("ghost") == []

    def test_sessions_by_id_and_every_id_oldest_first(self, store: SessionBackend) -> None:
        store.add_session("b", started_at=2.0)
        store.add_session("a", started_at=2.0)
        store.add_session("c", started_at=1.0)
        assert store.all_session_ids() == ["c", "a", "b"]
        found = store.get_sessions(["a", "ghost", "a", "c"])
        assert set(found) == {"a", "c"} and found["a"] == store.get_session("a")
        assert store.get_sessions([]) == {}

    def test_chain_messages_clip_tool_output_in_time_order(self, store: SessionBackend) -> None:
        store.add_session("root", started_at=1.0)
        store.add_session("kid", parent_session_id="root", started_at=2.0)
        long_tool = "A" * 300 + "B" * 10_000 + "C" * 300
        store.add_messages("root", [{"role": "user", "content": "run it", "timestamp": 1.0}])
        store.add_messages(
            "kid",
            [
                {"role": "tool", "tool_name": "t", "content": long_tool, "timestamp": 2.0},
                {"role": "assistant", "content": "Z" * 5000, "timestamp": 3.0},
            ],
        )
        store.add_messages("root", [{"role": "assistant", "content": "done", "timestamp": 4.0}])
        chain = store.chain_messages("root")
        assert [m.session_id for m in chain] == ["root", "kid", "kid", "root"]
        keep = TOOL_OUTPUT_KEEP
        assert chain[1].content == "A" * keep + TOOL_CLIP_MARKER + "C" * keep
        assert chain[2].content == "Z" * 5000  # only tool output is clipped
        assert store.get_messages("kid")[0].content == long_tool  # and only here
        assert store.chain_messages("ghost") == []

    def test_chain_outline_and_messages_by_id_read_chain_messages(
        self, store: SessionBackend
    ) -> None:
        # A search reads a chain's order first, then the messages its window needs (issue 33).
        store.add_session("root", started_at=1.0, user_id="alice")
        store.add_session("kid", parent_session_id="root", started_at=2.0, user_id="alice")
        store.add_session("other", parent_session_id="root", started_at=2.0, user_id="bob")
        long_tool = "A" * 300 + "B" * 10_000 + "C" * 300
        store.add_messages("root", [{"role": "user", "content": "run it", "timestamp": 3.0}])
        store.add_messages("kid", [{"role": "tool", "content": long_tool, "timestamp": 2.0}])
        store.add_messages("other", [{"role": "user", "content": "bob's", "timestamp": 2.5}])
        for user in (None, "alice"):
            chain = store.chain_messages("root", user_id=user)
            order = store.chain_outline("root", user_id=user)
            assert order == [(m.id, m.session_id) for m in chain]
            by_id = store.chain_messages_by_id([mid for mid, _ in reversed(order)])
            assert sorted(by_id, key=lambda m: m.id) == sorted(chain, key=lambda m: m.id)
        assert [s for _, s in store.chain_outline("root", user_id="alice")] == ["kid", "root"]
        assert store.chain_outline("ghost") == [] and store.chain_messages_by_id([]) == []
        assert store.chain_messages_by_id([10_000]) == []  # gone: missing, no error

    def test_an_id_holding_nul_matches_nothing(self, store: SessionBackend) -> None:
        # Our ids never hold NUL (add_session refuses them); looking one up must neither find
        # another session ("a\x00" is not "a") nor fail the query.
        _say(store, "a", "hello", user_id="alice")
        store.add_session("kid", parent_session_id="a")
        assert store.get_session("a\x00") is None and store.get_messages("a\x00") == []
        assert store.get_sessions(["a\x00"]) == {} and store.parents_of(["kid\x00"]) == {}
        assert store.lineage("kid\x00") == ["kid\x00"] and store.root_of("kid\x00") == "kid\x00"
        assert store.chain("a\x00") == [] and store.chain("a", user_id="alice\x00") == []
        assert store.chain_messages("a\x00") == []
        assert store.recent_sessions(10, user_id="alice\x00") == []
        assert [r.id for r in store.recent_sessions(10, exclude_session_ids=["a\x00"])] == ["a"]

    # ------------------------------------------------------------------ lineage

    def test_lineage_chain_and_roots(self, store: SessionBackend) -> None:
        store.add_session("root", started_at=1.0)
        store.add_session("mid", parent_session_id="root", started_at=2.0)
        store.add_session("b-kid", parent_session_id="root", started_at=5.0)
        store.add_session("leaf", parent_session_id="mid", started_at=3.0)
        store.add_session("other", started_at=4.0)
        assert store.lineage("leaf") == ["leaf", "mid", "root"]
        assert store.root_of("leaf") == store.root_of("root") == "root"
        assert store.chain("root") == ["root", "b-kid", "mid", "leaf"]  # breadth first, by id
        assert store.chain("mid") == ["mid", "leaf"]
        assert store.parents_of(["leaf", "other"]) == {
            "leaf": "mid",
            "mid": "root",
            "root": None,
            "other": None,
        }
        assert store.first_started(["leaf", "mid", "other"]) == "mid"
        assert store.roots_of(["leaf", "other", "leaf", "ghost"]) == {
            "leaf": "root",
            "other": "other",
            "ghost": "ghost",
        }
        assert store.roots_of([]) == {}
        assert store.parents_of([]) == {} and store.chain("ghost") == []
        assert store.lineage("ghost") == ["ghost"] and store.root_of("ghost") == "ghost"

    def test_a_parent_cycle_written_by_another_client_has_one_root(
        self, store: SessionBackend
    ) -> None:
        for sid, started in (("c-alpha", 300.0), ("c-zulu", 100.0), ("c-mike", 200.0)):
            store.add_session(sid, started_at=started)
        store.add_session("below", started_at=400.0)
        store.add_session("below", parent_session_id="c-mike")
        self.set_parent_directly(store, "c-alpha", "c-zulu")
        self.set_parent_directly(store, "c-zulu", "c-mike")
        self.set_parent_directly(store, "c-mike", "c-alpha")
        members = ("c-alpha", "c-zulu", "c-mike", "below")
        assert {store.root_of(sid) for sid in members} == {"c-zulu"}  # its oldest member
        assert set(store.roots_of(members).values()) == {"c-zulu"}
        assert store.lineage("below") == ["below", "c-mike", "c-alpha", "c-zulu"]
        chain = store.chain("c-zulu")
        assert chain[0] == "c-zulu" and sorted(chain) == sorted(members)
        assert [r.id for r in store.recent_sessions(10)] == ["c-zulu"]
        assert store.recent_sessions(10, exclude_session_ids=["c-alpha"]) == []

    def test_a_session_that_is_its_own_parent_is_a_root(self, store: SessionBackend) -> None:
        store.add_session("selfish", started_at=10.0)
        self.set_parent_directly(store, "selfish", "selfish")
        assert store.root_of("selfish") == "selfish" and store.lineage("selfish") == ["selfish"]
        assert store.chain("selfish") == ["selfish"]
        assert [r.id for r in store.recent_sessions(10)] == ["selfish"]

    def test_a_child_older_than_its_parent_is_not_a_root(self, store: SessionBackend) -> None:
        store.add_session("parent", started_at=500.0)
        store.add_session("child", started_at=100.0)
        store.add_session("child", parent_session_id="parent")
        assert [r.id for r in store.recent_sessions(10)] == ["parent"]
        assert store.root_of("child") == "parent"

    # ------------------------------------------------------------------ recent sessions

    def test_recent_sessions_lists_roots_newest_first_with_a_preview(
        self, store: SessionBackend
    ) -> None:
        store.add_session("old", started_at=1.0, title="Old")
        store.add_messages(
            "old",
            [
                {"role": "system", "content": "sys", "timestamp": 1.0},
                {"role": "user", "content": "first  question\nhere", "timestamp": 2.0},
                {"role": "user", "content": "second", "timestamp": 3.0},
            ],
        )
        store.add_session("new", started_at=2.0, title="New", model="m")
        store.add_session("kid", parent_session_id="new", started_at=3.0)
        store.add_session("hidden", source="tool", started_at=4.0)
        recent = store.recent_sessions(10)
        assert [r.id for r in recent] == ["new", "old"]
        old = recent[1]
        assert (old.preview, old.title, old.message_count) == ("first question here", "Old", 3)
        assert (old.source, old.started_at, old.last_active) == ("cli", 1.0, 3.0)
        assert (recent[0].preview, recent[0].model, recent[0].last_active) == ("", "m", None)
        assert [r.id for r in store.recent_sessions(10, exclude_session_ids=["kid"])] == ["old"]
        assert store.recent_sessions(10, exclude_sources=())[0].id == "hidden"
        assert [r.id for r in store.recent_sessions(1)] == ["new"]
        assert store.recent_sessions(0) == [] and store.recent_sessions(-3) == []

    def test_recent_sessions_of_one_user_and_dates(self, store: SessionBackend) -> None:
        for n, (sid, user) in enumerate((("a", "ana"), ("b", "bob"), ("c", "ana"))):
            store.add_session(sid, user_id=user, started_at=10.0 * (n + 1))

        def ids(**kwargs: Any) -> list[str]:
            return [r.id for r in store.recent_sessions(10, **kwargs)]

        assert ids(user_id="ana") == ["c", "a"]
        assert ids(user_id="carol") == [] and ids(user_id="ana\x00") == []
        assert ids(after=20.0) == ["c", "b"] and ids(before=20.0) == ["a"]
        assert ids(after=10.0, before=30.0) == ["b", "a"]
        assert store.recent_sessions(10, user_id="ana")[0].user_id == "ana"

    def test_recent_sessions_list_each_automation_job_once(self, store: SessionBackend) -> None:
        def run(sid: str, text: str, started: float, **session: Any) -> None:
            store.add_session(sid, started_at=started, source="cron", **session)
            store.add_messages(sid, [{"role": "user", "content": text, "timestamp": started}])

        run("a1", "df -h", 1.0, title="Disk check")
        run("b1", "backup /home", 2.0, title="Backup")
        run("a2", "df -h", 3.0, title="Disk check")
        run("u1", "report a", 4.0)  # untitled: told apart by preview
        run("u2", "report b", 5.0)
        assert [r.id for r in store.recent_sessions(10, collapse_sources=("cron",))] == [
            "u2",
            "u1",
            "a2",
            "b1",
        ]
        assert len(store.recent_sessions(10)) == 5

    def test_many_newer_automation_runs_never_crowd_out_conversations(
        self, store: SessionBackend
    ) -> None:
        with store.transaction():
            _say(store, "cors", "CORS blocked /api/v2/orders", started_at=100.0)
            _say(store, "k8s", "ingress 502 after deploy", started_at=200.0)
            _say(store, "board", "Move card 12", started_at=500.0, source="kanban", title="Card")
            for n in range(60):  # more than a page of runs, newer than everything else
                _say(store, f"disk-{n}", "Run df -h", started_at=1000.0 + n, source="cron",
                     title="Nightly disk usage check")  # fmt: skip
        recent = store.recent_sessions(3, collapse_sources=("cron", "kanban"))
        assert [r.id for r in recent] == ["disk-59", "board", "k8s"]
        assert [r.id for r in store.recent_sessions(3)] == ["disk-59", "disk-58", "disk-57"]

    # ------------------------------------------------------------------ full-text search

    def test_match_messages_returns_each_message_once_best_first(
        self, store: SessionBackend
    ) -> None:
        # "部署" and the words beside it reach both the word index and the CJK bigram index
        (mixed,) = _say(store, "mixed", "部署 docker docker docker")
        _say(store, "plain", "docker once, in a longer message about many other things")
        (both,) = _say(store, "zh", "部署服务 with docker compose")
        for text in ("docker", "部署", "docker 部署"):
            hits = _match(store, text)
            _assert_contract_order(hits)
            assert hits, text
        assert {h.message_id for h in _match(store, "部署")} == {mixed, both}
        assert len(_match(store, "docker")) == 3

    def test_match_messages_returns_at_most_limit_hits_the_best_ones(
        self, store: SessionBackend
    ) -> None:
        for k in range(1, 6):  # the same length, more and more of the word: distinct relevance
            _say(store, f"s{k}", " ".join(["deploy"] * k + ["filler"] * (6 - k)))
        _say(store, "zh", "部署 deploy")
        every = _match(store, "deploy", limit=100)
        _assert_contract_order(every)
        assert len(every) == 6
        for limit in (1, 2, 5):
            hits = _match(store, "deploy", limit=limit)
            assert [h.message_id for h in hits] == [h.message_id for h in every[:limit]]
        for text in ("部署 OR deploy", "deploy 部署"):
            assert len(_match(store, text, limit=1)) == 1

    def test_per_session_hits_are_complete_at_session_level(self, store: SessionBackend) -> None:
        # a long session of short lines outranks (bm25 favours short messages) and outnumbers
        # the others: with a global limit alone it takes every hit
        with store.transaction():
            _say(store, "long", *[f"kafka poll {n}" for n in range(30)], started_at=100.0)
            for sid in ("a", "b", "c"):
                lag = "kafka lag grew while the consumers kept rebalancing"
                _say(store, sid, lag, f"kafka consumer {sid} restarted, lag down", started_at=200.0)
        _say(store, "zh", "部署 kafka 集群", started_at=300.0)  # the CJK index finds it too
        assert _sessions(_match(store, "kafka", limit=10)) == {"long"}
        hits = _match(store, "kafka", limit=10, per_session=1)
        _assert_contract_order(hits)
        assert _sessions(hits) == {"long", "a", "b", "c", "zh"}
        every = _match(store, "kafka", limit=None)
        for sid in ("a", "b", "c", "zh"):  # each session's best match, the best 10 overall
            best = [h.message_id for h in every if h.session_id == sid][:1]
            assert [h.message_id for h in hits if h.session_id == sid] == best, sid
        assert [h.message_id for h in hits if h.session_id == "long"] == [
            h.message_id for h in every[:10]
        ]
        two = _match(store, "kafka", limit=None, per_session=2)
        _assert_contract_order(two)
        assert sorted(h.session_id for h in two) == [
            "a",
            "a",
            "b",
            "b",
            "c",
            "c",
            "long",
            "long",
            "zh",
        ]
        assert len(_match(store, '"kafka lag"', "strict", limit=1, per_session=1)) == 3
        budgeted = _match(store, "kafka", limit=4, per_session=1, automation=("cli",))
        _assert_contract_order(budgeted)
        assert _sessions(budgeted) == {"long", "a", "b", "c", "zh"}

    def test_a_hit_says_where_the_message_is(self, store: SessionBackend) -> None:
        store.add_session("s", source="telegram", started_at=50.0)
        ids = store.add_messages(
            "s",
            [
                {"role": "user", "content": "hello there", "timestamp": 60.0},
                {"role": "assistant", "content": "the quokka answer", "timestamp": 61.0},
            ],
        )
        (hit,) = _match(store, "quokka")
        assert (hit.message_id, hit.session_id, hit.role, hit.source) == (
            ids[1],
            "s",
            "assistant",
            "telegram",
        )
        assert (hit.timestamp, hit.position, hit.session_started) == (61.0, 1, 50.0)
        assert hit.relevance > 0

    def test_readings_of_a_query(self, store: SessionBackend) -> None:
        for sid, text in (
            ("phrase", "the rolling restart finished cleanly"),
            ("scattered", "restart it later, rolling back first"),
            ("dash", "the pre-commit hook failed"),
            ("tf", "terraform plan output"),
            ("rust", "a rust crate only"),
            ("both", "rust and golang together"),
        ):
            _say(store, sid, text)

        def found(text: str, reading: str = "strict") -> set[str]:
            hits = _match(store, text, reading)
            _assert_contract_order(hits)
            return _sessions(hits)

        assert found('"rolling restart"') == {"phrase"}
        assert found('"rolling restart"', "relaxed") == {"phrase", "scattered"}
        assert found("pre-commit OR terraform") == {"dash", "tf"}
        assert found("rust NOT golang") == {"rust"}
        assert found("rust AND golang") == {"both"}
        assert found("rust golang") == {"both"}  # side by side: both words
        assert found("rust golang", "relaxed") == {"rust", "both"}  # any of them
        assert found("terra*") == {"tf"}
        assert found("pre-commit") == {"dash"}
        assert found("zzyzx") == set() and found("rust AND zzyzx") == set()

    def test_words_match_their_inflections_and_cjk_words_inside_a_run(
        self, store: SessionBackend
    ) -> None:
        _say(store, "paint", "I was painting the fence")
        _say(store, "zh", "请帮我修改youer服务端的配置")
        _say(store, "ja", "東京の天気はどうですか")
        _say(store, "en", "plain english only")
        assert _sessions(_match(store, "painted")) == {"paint"}
        for word, session in (("服务", "zh"), ("服务端", "zh"), ("youer", "zh"), ("天気", "ja")):
            assert _sessions(_match(store, word)) == {session}, word
        assert _sessions(_match(store, "服")) == {"zh"}  # a lone character: a prefix

    def test_match_messages_applies_every_filter(self, store: SessionBackend) -> None:
        store.add_session("ana-1", user_id="ana", started_at=100.0)
        store.add_messages(
            "ana-1",
            [
                {"role": "user", "content": "the rollout plan", "timestamp": 100.0},
                {"role": "assistant", "content": "rollout done", "timestamp": 101.0},
            ],
        )
        _say(store, "bob-1", "rollout for bob", user_id="bob", started_at=200.0)
        _say(store, "cron-1", "nightly rollout check", source="cron", started_at=300.0)

        def found(**filters: Any) -> set[str]:
            hits = _match(store, "rollout", filters=SearchFilters(**filters))
            _assert_contract_order(hits)
            return _sessions(hits)

        assert found() == {"ana-1", "bob-1", "cron-1"}
        assert {h.role for h in _match(store, "rollout", filters=SearchFilters(
            role_filter=("assistant",)))} == {"assistant"}  # fmt: skip
        assert found(role_filter=("assistant",)) == {"ana-1"}
        assert found(exclude_sources=("cron",)) == {"ana-1", "bob-1"}
        assert found(exclude_session_ids=("ana-1", "bob-1")) == {"cron-1"}
        assert found(user_id="bob") == {"bob-1"}
        assert found(after=200.0) == {"bob-1", "cron-1"}  # by session start
        assert found(before=200.0) == {"ana-1"}
        assert found(user_id="ana", role_filter=("user",), before=150.0) == {"ana-1"}
        # a value no stored text can equal (NUL) matches nothing, and never fails the query
        assert found(user_id="ana\x00") == set()
        assert found(role_filter=("user\x00",)) == set()
        assert found(role_filter=("user\x00", "user")) == {"ana-1", "bob-1", "cron-1"}
        assert found(exclude_sources=("cli\x00",)) == {"ana-1", "bob-1", "cron-1"}
        assert found(exclude_session_ids=("ana-1\x00",)) == {"ana-1", "bob-1", "cron-1"}

    def test_automation_runs_get_their_own_hit_budget(self, store: SessionBackend) -> None:
        for n in range(12):  # near-identical cron runs that outrank the session the user wants
            _say(store, f"cron-{n:02d}", "nightly backup backup backup finished", source="cron")
        _say(store, "chat", "how do we restore the backup from last week")
        everything = _match(store, "backup", limit=8)
        assert len(everything) == 8 and _sessions(everything) <= {
            f"cron-{n:02d}" for n in range(12)
        }
        budgeted = _match(store, "backup", limit=8, automation=("cron",))
        _assert_contract_order(budgeted)
        assert "chat" in _sessions(budgeted)
        assert [h.source for h in budgeted].count("cron") == 2  # a quarter of the limit
        few = _match(store, "restore", limit=8, automation=("cron",))
        assert [h.session_id for h in few] == ["chat"]

    def _deploys(self, store: SessionBackend) -> list[int]:
        """Ten sessions of two 'deploy' messages (20 matches), oldest first; their ids."""
        ids: list[int] = []
        with store.transaction():
            for i in range(10):
                store.add_session(f"s{i}", started_at=float(i))
                ids += store.add_messages(
                    f"s{i}",
                    [
                        {"role": "user", "content": "deploy the service", "timestamp": i + 0.1},
                        {"role": "assistant", "content": "deploy done", "timestamp": i + 0.2},
                    ],
                )
        return ids

    def test_a_rank_window_as_large_as_the_matches_ranks_them_all(
        self, store: SessionBackend
    ) -> None:
        ids = self._deploys(store)
        store.rank_window = 20
        assert sorted(h.message_id for h in _match(store, "deploy")) == sorted(ids)

    def test_a_common_word_is_ranked_over_its_newest_matches(self, store: SessionBackend) -> None:
        ids = self._deploys(store)
        store.rank_window = 5
        hits = _match(store, "deploy", limit=3)
        assert len(hits) == 3  # the best 3 of the newest 5 matches, never an older one
        assert {h.message_id for h in hits} <= set(sorted(ids)[-5:])

    def test_a_strict_reading_keeps_every_term_within_the_window(
        self, store: SessionBackend
    ) -> None:
        ids = self._deploys(store)
        store.rank_window = 1
        hits = _match(store, '"deploy the service"', "strict")
        assert [h.message_id for h in hits] == [ids[-2]]  # the newest message with the phrase

    def test_match_sessions_finds_headers_by_title_and_date(self, store: SessionBackend) -> None:
        store.add_session("trip", title="Trip planning", started_at=1683554160.0)  # 2023-05-08
        store.add_session("review", title="Budget review", started_at=1700000000.0, user_id="bob")
        store.add_session("trip-2", title="Trip back", started_at=1700000100.0, source="cron")

        def found(text: str, reading: str = "relaxed", **filters: Any) -> list[str]:
            hits = store.match_sessions(
                parse_query(text),
                reading,  # type: ignore[arg-type]
                filters=SearchFilters(**filters),
            )
            keys = [(-h.relevance, h.session_id) for h in hits]
            assert keys == sorted(keys) and len({h.session_id for h in hits}) == len(hits)
            return [h.session_id for h in hits]

        assert found("May 2023", "strict") == ["trip"]
        assert sorted(found("trip")) == ["trip", "trip-2"]
        assert found("budget") == ["review"]
        assert found("budget", user_id="bob") == ["review"] and found("budget", user_id="ana") == []
        assert found("trip", exclude_sources=("cron",)) == ["trip"]
        assert found("trip", exclude_session_ids=("trip",)) == ["trip-2"]
        assert found("trip", after=1690000000.0) == ["trip-2"]
        assert found("trip", before=1690000000.0) == ["trip"]
        assert found("trip", role_filter=("user",)) == []  # a header has no role
        assert len(store.match_sessions(parse_query("trip"), "relaxed", limit=1)) == 1
        (hit,) = store.match_sessions(parse_query("budget"), "relaxed")
        assert (hit.source, hit.started_at) == ("cli", 1700000000.0) and hit.relevance > 0
        store.add_session("trip", title="Boat")  # a new title is searched, the old one not
        assert found("boat") == ["trip"] and found("trip") == ["trip-2"]

    def test_vocabulary_lists_indexed_words_by_prefix_or_nothing(
        self, store: SessionBackend
    ) -> None:
        _say(store, "s", "kubernetes ingress kubectl", "kubernetes again")
        words = store.vocabulary("ku")
        assert all(word.startswith("ku") and count >= 1 for word, count in words)
        assert len(store.vocabulary("ku", limit=1)) <= 1
        assert store.vocabulary("zz") == []

    # ------------------------------------------------------------------ forgetting

    def _forgettable(self, store: SessionBackend) -> None:
        """``a`` with a sub-agent ``a.1`` (itself with ``a.1.1``) and a continuation ``a.2``;
        ``b`` alone; ``c``, an old cron run of bob's. A recap cached for ``a``, ``a.1``, ``b``."""
        spec: dict[str, dict[str, Any]] = {
            "a": {"text": "rollout kubectl 服务端", "title": "Quokka deploy", "user_id": "ana"},
            "a.1": {"text": "zebrafish notes", "parent_session_id": "a", "user_id": "ana"},
            "a.1.1": {"text": "deepest watercolor", "parent_session_id": "a.1"},
            "a.2": {"text": "continuation sourdough", "parent_session_id": "a", "user_id": "ana"},
            "b": {"text": "unrelated nginx", "title": "Other", "user_id": "ana"},
            "c": {"text": "nightly nginx report", "source": "cron", "user_id": "bob"},
        }
        for n, (sid, fields) in enumerate(spec.items()):
            started = 10.0 if sid == "c" else 100.0 + n
            _say(store, sid, fields.pop("text"), started_at=started, **fields)
        for sid in ("a", "a.1", "b"):
            store.put_cached_summary(f"k-{sid}", session_id=sid, summary="recap", model="m")

    def test_delete_sessions_forgets_a_chain_below_from_every_index(
        self, store: SessionBackend
    ) -> None:
        self._forgettable(store)
        assert store.delete_sessions(["a.1"]) == 2  # the sub-agent and its own sub-agent
        assert store.get_session("a.1.1") is None and store.get_messages("a.1") == []
        assert _match(store, "zebrafish") == [] and _match(store, "watercolor") == []
        assert store.all_session_ids() == ["c", "a", "a.2", "b"]
        # a recap of the chain above was made with the forgotten messages: it goes too
        assert store.get_cached_summary("k-a") is None and store.get_cached_summary("k-a.1") is None
        assert store.get_cached_summary("k-b") is not None
        assert store.delete_sessions(["a"]) == 2  # the root and its continuation
        for word in ("kubectl", "服务端", "sourdough"):
            assert _match(store, word) == [], word
        assert store.match_sessions(parse_query("quokka"), "relaxed") == []  # its title
        assert [r.id for r in store.recent_sessions(10, exclude_sources=())] == ["b", "c"]
        stats = store.stats()
        assert (stats["sessions"], stats["messages"]) == (2, 2)
        assert store.check().ok, store.check().problems

    def test_delete_sessions_counts_what_it_removed(
        self, store: SessionBackend, open_store: StoreOpener
    ) -> None:
        import asyncio

        self._forgettable(store)
        assert store.delete_sessions([]) == 0 and store.delete_sessions(["nope"]) == 0
        assert store.delete_sessions(["b", "b", "nope"]) == 1
        assert store.delete_sessions(["b"]) == 0
        with open_store(read_only=True) as reader:
            with pytest.raises(errors.ReadOnlyStoreError):
                reader.delete_sessions(["a"])
            with pytest.raises(errors.ReadOnlyStoreError):
                asyncio.run(reader.adelete_sessions(["a"]))
        assert store.stats()["sessions"] == 5
        assert asyncio.run(store.adelete_sessions(["a"])) == 4
        assert store.all_session_ids() == ["c"]

    def test_delete_sessions_of_a_user_keeps_what_is_not_theirs(
        self, store: SessionBackend
    ) -> None:
        self._forgettable(store)
        _say(store, "a.1.bob", "bob below ana", parent_session_id="a.1", user_id="bob")
        _say(store, "a.1.bob.ana", "ana below bob", parent_session_id="a.1.bob", user_id="ana")
        assert store.sessions_to_forget(["a"], user_id="ana") == ["a", "a.1", "a.2"]
        done = store.delete_sessions(["a", "c"], user_id="ana")
        assert done == 3 and done.sessions == ("a", "a.1", "a.2")
        assert set(done.kept) == {"a.1.1", "a.1.bob", "a.1.bob.ana"}
        assert store.get_session("c") is not None  # named, but bob's
        # what is kept hangs below its nearest ancestor left: none here, so roots
        assert store.get_session("a.1.1").parent_session_id is None  # type: ignore[union-attr]
        assert store.get_session("a.1.bob").parent_session_id is None  # type: ignore[union-attr]
        bob = store.get_session("a.1.bob.ana")
        assert bob is not None and bob.parent_session_id == "a.1.bob"
        assert [m.content for m in store.get_messages("a.1.bob")] == ["bob below ana"]
        assert _match(store, "zebrafish") == [] and _match(store, "watercolor") != []
        assert store.delete_sessions(["b"], user_id="ana").kept == ()
        assert store.check().ok, store.check().problems

    def test_sessions_to_forget_selects_without_deleting(self, store: SessionBackend) -> None:
        self._forgettable(store)
        chain_of_a = ["a", "a.1", "a.1.1", "a.2"]
        assert store.sessions_to_forget(["a"]) == chain_of_a
        assert store.sessions_to_forget(["a.1", "nope"]) == ["a.1", "a.1.1"]
        assert store.sessions_to_forget(before=50.0) == ["c"]
        assert store.sessions_to_forget(sources=["cron"]) == ["c"]
        assert store.sessions_to_forget(user_id="bob") == ["c"]
        # conditions narrow; with a user, only that user's part of the chain below goes
        assert store.sessions_to_forget(before=101.0) == ["c", *chain_of_a]
        assert store.sessions_to_forget(user_id="ana", before=101.0) == ["a", "a.1", "a.2"]
        assert store.sessions_to_forget(["a", "c"], user_id="bob") == ["c"]
        assert store.sessions_to_forget(["nope"]) == []
        with pytest.raises(ValueError, match="name sessions"):
            store.sessions_to_forget()
        assert store.stats()["sessions"] == 6

    def test_a_forgotten_import_is_not_repeated_until_released(self, store: SessionBackend) -> None:
        pairs = [(f"k{i}", {"role": "user", "content": f"line {i}"}) for i in range(3)]
        store.add_session("s")
        assert len(store.import_messages("s", pairs, source_kind="jsonl")) == 3
        assert store.delete_sessions(["s"]) == 1
        assert store.check().ok, store.check().problems  # the ledger names no message now
        store.add_session("s")
        assert store.import_messages("s", pairs, source_kind="jsonl") == []  # keys kept
        assert store.release_forgotten("other", "s") == 0
        assert store.release_forgotten("jsonl", "s") == 3
        assert len(store.import_messages("s", pairs, source_kind="jsonl")) == 3
        assert store.release_forgotten("jsonl", "s") == 0  # rows naming a message stay

    # ------------------------------------------------------------------ the summary cache

    def test_summary_cache(self, store: SessionBackend) -> None:
        store.add_session("s")
        assert store.get_cached_summary("k") is None
        store.put_cached_summary("k", session_id="s", summary="recap", model="m")
        assert store.get_cached_summary("k") == CachedSummary("recap", "summarized", "m")
        store.put_cached_summary(
            "k", session_id="s", summary="loop", model=None, status="rejected",
            reasons=("echo", "loop"),
        )  # fmt: skip
        assert store.get_cached_summary("k") == CachedSummary(
            "loop", "rejected", None, ("echo", "loop")
        )
        assert store.get_cached_summary("other") is None

    # ------------------------------------------------------------------ statistics and checks

    def test_stats(self, store: SessionBackend) -> None:
        empty = store.stats()
        assert (empty["sessions"], empty["root_sessions"], empty["messages"]) == (0, 0, 0)
        assert (empty["sources"], empty["first_started_at"], empty["last_started_at"]) == (
            {},
            None,
            None,
        )
        _say(store, "root", "hello", source="cli", started_at=10.0)
        store.add_session("kid", parent_session_id="root", source="subagent", started_at=20.0)
        store.add_messages(
            "kid", [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]
        )
        stats = store.stats()
        assert (stats["sessions"], stats["root_sessions"], stats["messages"]) == (2, 1, 3)
        assert stats["sources"] == {"cli": 1, "subagent": 1}
        assert (stats["first_started_at"], stats["last_started_at"]) == (10.0, 20.0)
        assert stats["size_bytes"] > 0 and stats["user_id"] is None
        assert (stats["store"], stats["backend"]) == (store.describe(), store.dialect.name)

    def test_stats_and_users_of_one_tenant(self, store: SessionBackend) -> None:
        assert store.count_users() == 0
        store.add_session("a1", user_id="ana", source="cli", started_at=10.0)
        store.add_session("a2", user_id="ana", source="telegram", parent_session_id="a1",
                          started_at=20.0)  # fmt: skip
        store.add_session("b1", user_id="bob", source="cli", started_at=5.0)
        store.add_session("n1", source="cli", started_at=1.0)  # nobody's
        store.add_messages("a1", [{"role": "user", "content": "one"}] * 2)
        store.add_messages("a2", [{"role": "user", "content": "two"}])
        store.add_messages("b1", [{"role": "user", "content": "three"}] * 4)
        ana = store.stats(user_id="ana")
        assert (ana["sessions"], ana["root_sessions"], ana["messages"]) == (2, 1, 3)
        assert ana["sources"] == {"cli": 1, "telegram": 1}
        assert (ana["first_started_at"], ana["last_started_at"], ana["user_id"]) == (
            10.0,
            20.0,
            "ana",
        )
        everyone = store.stats()
        assert (everyone["sessions"], everyone["messages"], everyone["user_id"]) == (4, 7, None)
        nobody = store.stats(user_id="carol")
        assert (nobody["sessions"], nobody["messages"], nobody["sources"]) == (0, 0, {})
        assert nobody["first_started_at"] is None
        assert (store.count_users(), store.count_users(up_to=1), store.count_users(up_to=5)) == (
            2,
            1,
            2,
        )

    def test_a_tenant_never_sees_another_users_sessions_in_a_chain(
        self, store: SessionBackend
    ) -> None:
        _say(store, "alice-1", "salary spreadsheet budget", user_id="alice", started_at=1.0)
        _say(store, "bob-sub", "budget numbers", user_id="bob", parent_session_id="alice-1",
             started_at=2.0)  # fmt: skip
        _say(store, "alice-2", "more budget", user_id="alice", parent_session_id="bob-sub",
             started_at=3.0)  # fmt: skip
        assert store.chain("alice-1") == ["alice-1", "bob-sub", "alice-2"]
        assert store.chain("alice-1", user_id="alice") == ["alice-1"]  # bob's cuts it off
        assert store.chain("alice-1", user_id="bob") == []  # not bob's root
        assert [m.session_id for m in store.chain_messages("alice-1", user_id="alice")] == [
            "alice-1"
        ]
        assert store.parents_of(["alice-2"], user_id="alice") == {"alice-2": "bob-sub"}
        assert store.root_of("alice-2", user_id="alice") == "alice-2"
        assert store.root_of("bob-sub", user_id="bob") == "bob-sub"
        assert store.root_of("alice-2") == "alice-1"
        assert store.roots_of(["alice-2"], user_id="alice") == {"alice-2": "alice-2"}
        assert store.roots_of(["alice-2"]) == {"alice-2": "alice-1"}
        assert [r.id for r in store.recent_sessions(10, user_id="alice")] == ["alice-1"]
        found = _match(store, "budget", filters=SearchFilters(user_id="alice"))
        assert _sessions(found) == {"alice-1", "alice-2"}

    def test_check_and_optimize(self, store: SessionBackend) -> None:
        report = store.check()
        assert report.ok and report.checked and report.problems == ()
        _say(store, "s", "kubernetes ingress", "服务端 配置")
        store.optimize()
        assert store.check().ok
        assert _sessions(_match(store, "ingress")) == {"s"}
        assert _sessions(_match(store, "服务")) == {"s"}
