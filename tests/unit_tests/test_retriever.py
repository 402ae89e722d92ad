"""SessionRecallRetriever on the embedded demo sessions and on purpose-built stores."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.recall.transcript import EARLIER_MARKER

CORS = "20261103_091512_a1b2c3"
FTS_PARENT = "20261110_134002_5ea7c1"
FTS_CHILD = "20261110_134115_d31e98"
DJANGO_ROOT = "20261114_100027_d1a9e0"
CHINESE = "20261118_153009_c4e5f6"
TOOL_SESSION = "20261112_170533_70015e"


def _ids(docs: list) -> list[str]:  # type: ignore[type-arg]
    return [d.metadata["session_id"] for d in docs]


def test_natural_question_finds_the_session(demo_store: SessionStore) -> None:
    docs = SessionRecallRetriever(store=demo_store).invoke("how did we fix the CORS error?")
    assert _ids(docs)[0] == CORS
    meta = docs[0].metadata
    assert meta["mode"] == "search" and meta["query_reading"] == "natural"
    assert meta["match_count"] >= 1 and meta["score"] > 0
    assert meta["when"].endswith("UTC") and meta["source"] == "cli"
    assert docs[0].page_content.startswith("[USER]: ")


def test_hidden_tool_source_is_never_returned(demo_store: SessionStore) -> None:
    docs = SessionRecallRetriever(store=demo_store, k=5).invoke("CORS nginx")
    assert TOOL_SESSION not in _ids(docs)
    everything = SessionRecallRetriever(store=demo_store, k=5, exclude_sources=()).invoke(
        "CORS nginx"
    )
    assert TOOL_SESSION in _ids(everything)


def test_child_hit_collapses_to_root_with_whole_chain(demo_store: SessionStore) -> None:
    (doc,) = SessionRecallRetriever(store=demo_store, k=1).invoke("hyperfine")
    assert doc.metadata["session_id"] == FTS_PARENT
    assert doc.metadata["matched_session_ids"] == [FTS_CHILD]
    assert f"--- session {FTS_CHILD} ---" in doc.page_content
    assert "Elasticsearch" in doc.page_content  # the root's own messages are there too


def test_compression_continuation_collapses_to_root(demo_store: SessionStore) -> None:
    docs = SessionRecallRetriever(store=demo_store).invoke("pgcrypto")
    assert _ids(docs) == [DJANGO_ROOT]


def test_current_session_chain_is_excluded(demo_store: SessionStore) -> None:
    retriever = SessionRecallRetriever(store=demo_store, current_session_id=FTS_CHILD)
    assert FTS_PARENT not in _ids(retriever.invoke("hyperfine Elasticsearch FTS5"))
    # per call, and from the run config, as an agent runtime passes it
    plain = SessionRecallRetriever(store=demo_store)
    assert _ids(plain.invoke("pgcrypto", current_session_id=DJANGO_ROOT)) == []
    assert plain.invoke("pgcrypto", config={"configurable": {"session_id": DJANGO_ROOT}}) == []


def test_k_default_per_call_and_cap(demo_store: SessionStore) -> None:
    retriever = SessionRecallRetriever(store=demo_store)
    assert len(retriever.invoke("docker OR nginx OR postgres OR backup OR API")) == 3
    assert len(retriever.invoke("docker OR nginx OR postgres OR backup OR API", k=1)) == 1
    assert len(retriever.invoke("docker OR nginx OR postgres OR backup OR API", k=5)) == 5
    capped = SessionRecallRetriever(store=demo_store, k=4, max_k=4)
    assert len(capped.invoke("docker OR nginx OR postgres OR backup OR API")) == 4
    # beyond 1..max_k: refused, not clamped nor empty (issue 34 item 7; tests/backends)
    with pytest.raises(ValueError, match="more than 5"):
        retriever.invoke("docker", k=50)
    with pytest.raises(ValueError, match="ask for 1 to 5"):
        retriever.invoke("docker", k=0)
    with pytest.raises(ValidationError, match="more than 4"):
        SessionRecallRetriever(store=demo_store, k=9, max_k=4)


def test_strict_reading_falls_back_to_relaxed(demo_store: SessionStore) -> None:
    retriever = SessionRecallRetriever(store=demo_store)
    strict = retriever.invoke('"cursor pagination"')
    assert strict and strict[0].metadata["query_reading"] == "strict"
    relaxed = retriever.invoke('"pgbouncer zanzibar"')
    assert relaxed and relaxed[0].metadata["query_reading"] == "relaxed"
    assert "20261105_112048_f00d42" in _ids(relaxed)


def test_cjk_two_character_words(demo_store: SessionStore) -> None:
    retriever = SessionRecallRetriever(store=demo_store)
    for query in ("服务端", "部署", "迁移", "youer"):
        assert _ids(retriever.invoke(query))[:1] == [CHINESE], query


def test_role_filter(demo_store: SessionStore) -> None:
    by_user = SessionRecallRetriever(store=demo_store, role_filter="user").invoke("superuser")
    assert by_user == []  # that word only appears in tool output
    by_tool = SessionRecallRetriever(store=demo_store).invoke("superuser", role_filter=["tool"])
    assert _ids(by_tool) == ["20261105_112048_f00d42"]


def test_tenant_scope(demo_store: SessionStore) -> None:
    alice = SessionRecallRetriever(store=demo_store, user_id="alice", k=5)
    assert "20261106_080419_b0b001" not in _ids(alice.invoke("nginx"))
    bob = SessionRecallRetriever(store=demo_store, user_id="bob", k=5)
    assert _ids(bob.invoke("nginx")) == ["20261106_080419_b0b001"]
    assert all(d.metadata["user_id"] == "bob" for d in bob.invoke(""))


def test_date_filters(demo_store: SessionStore) -> None:
    retriever = SessionRecallRetriever(store=demo_store)
    assert retriever.invoke("CORS", after="2026-11-04") == []
    assert _ids(retriever.invoke("CORS", after="2026-11-03", before="2026-11-04")) == [CORS]


def test_empty_query_browses_recent_sessions(demo_store: SessionStore) -> None:
    docs = SessionRecallRetriever(store=demo_store).invoke("   ")
    assert len(docs) == 3
    assert all(d.metadata["mode"] == "recent" for d in docs)
    starts = [d.metadata["started_at"] for d in docs]
    assert starts == sorted(starts, reverse=True)
    assert all(d.metadata["preview"] in d.page_content for d in docs)


def test_long_transcript_is_windowed_around_the_match(store: SessionStore) -> None:
    store.add_session("long")
    filler = [{"role": "user", "content": f"filler message {i} " + "x" * 200} for i in range(400)]
    store.add_messages("long", [*filler, {"role": "user", "content": "the quokka bug"}, *filler])
    (doc,) = SessionRecallRetriever(store=store, max_chars=2000).invoke("quokka")
    assert doc.metadata["truncated"] is True
    assert doc.page_content.startswith(EARLIER_MARKER)
    assert "quokka" in doc.page_content
    assert len(doc.page_content) <= 2000 + 100


def test_message_ids_option(demo_store: SessionStore) -> None:
    (doc,) = SessionRecallRetriever(store=demo_store, k=1, show_message_ids=True).invoke(
        "pgbouncer"
    )
    first = doc.metadata["matched_message_ids"][0]
    assert f"#{first}]" in doc.page_content


def test_unknown_fields_and_options_are_rejected(demo_store: SessionStore) -> None:
    with pytest.raises(ValidationError):
        SessionRecallRetriever(store=demo_store, top_k=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unknown search option"):
        SessionRecallRetriever(store=demo_store).invoke("x", limit=2)


async def test_async_matches_sync(demo_store: SessionStore) -> None:
    retriever = SessionRecallRetriever(store=demo_store)
    sync_docs = retriever.invoke("pgbouncer")
    async_docs = await retriever.ainvoke("pgbouncer")
    assert _ids(async_docs) == _ids(sync_docs)
    one = await retriever.ainvoke("docker OR nginx OR postgres", k=1, role_filter="user")
    assert len(one) == 1
    excluded = await retriever.ainvoke(
        "pgcrypto", config={"configurable": {"session_id": DJANGO_ROOT}}
    )
    assert excluded == []


def test_a_short_window_holds_a_match_deep_in_a_long_message(store: SessionStore) -> None:
    """The window is centred on the matched word, not on the start of its message."""
    filler = "lorem ipsum dolor sit amet " * 150  # ~4000 characters on each side
    store.add_session("long", title="A long log")
    store.add_messages("long", [{"role": "user", "content": "the config file"}])
    store.add_messages("long", [{"role": "tool", "content": "ok"}])
    text = f"{filler} the culprit was zeppelin_timeout=30 in the config {filler}"
    store.add_messages("long", [{"role": "assistant", "content": text}])
    for query in ("zeppelin_timeout", "what was the zeppelin timeout?", "zepelin"):
        (doc,) = SessionRecallRetriever(store=store, max_chars=300).invoke(query)
        assert "zeppelin_timeout=30" in doc.page_content, query
        assert doc.metadata["truncated"] is True


def test_the_window_of_the_demo_pgbouncer_session_holds_pool_mode(demo_store: SessionStore) -> None:
    (doc,) = SessionRecallRetriever(store=demo_store, k=1, max_chars=300).invoke("pool_mode")
    assert "pool_mode" in doc.page_content
