"""Hybrid recall (issue 25) on both backends: vectors written at write time, the blend, and
every rule of the lexical search (tenants, sources, dates, chains, the live thread) holding
for dense candidates too. The model is ``hybrid_support.ConceptEmbeddings``: "workmates" and
"colleagues" share a dimension, so the paraphrase is near in vector space and absent from the
full-text index."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import pytest
from hybrid_support import ConceptEmbeddings, OtherModel
from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from store_targets import StoreFactory

from langchain_session_recall import SessionRecallRetriever, SessionRecorder
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.errors import EmbeddingMismatchError, NoVectorsError
from langchain_session_recall.importers import import_jsonl

MAY_2023 = 1683554160.0  # Monday 8 May 2023
DAY = 86_400.0

CORPUS = {
    "office": ("Dinner with my colleagues from the office went well", "Glad it was fun"),
    "puppy": ("I adopted a puppy last week", "What breed is the puppy?"),
    "linker": ("The build fails with E4512 from the toolchain", "Clean the cache and retry"),
    "violin": ("I started learning the violin", "Practice scales every day"),
}


def _fill(store: SessionBackend, **extra: dict[str, object]) -> None:
    for n, (sid, (user, assistant)) in enumerate(CORPUS.items()):
        store.add_session(sid, started_at=MAY_2023 + n * 40 * DAY, **extra.get(sid, {}))  # type: ignore[arg-type]
        store.add_messages(
            sid, [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
        )


def _hybrid_store(store_factory: StoreFactory, model: Embeddings | None = None) -> SessionBackend:
    store = store_factory.open()
    store.enable_embeddings(model or ConceptEmbeddings())
    return store


def _ids(docs: Sequence[Document]) -> list[str]:
    return [d.metadata["session_id"] for d in docs]


def _windows(store: SessionBackend) -> list[tuple[str, str]]:
    with store._read() as conn:
        rows = conn.execute(
            "SELECT session_id, message_ids FROM passage_vectors ORDER BY session_id, start_id"
        ).fetchall()
    return [(r[0], r[1]) for r in rows]


def test_a_paraphrase_is_found_by_the_dense_signal_only(store_factory: StoreFactory) -> None:
    store = _hybrid_store(store_factory)
    _fill(store)
    lexical = SessionRecallRetriever(store=store, k=3, dense_weight=0.0)
    hybrid = SessionRecallRetriever(store=store, k=3)
    assert "office" not in _ids(lexical.invoke("what did I do with my workmates?"))
    docs = hybrid.invoke("what did I do with my workmates?")
    assert _ids(docs)[0] == "office"
    signals = docs[0].metadata["signals"]
    assert signals["lexical"] == 0.0 and signals["dense"] == pytest.approx(1.0)
    assert docs[0].metadata["score"] == pytest.approx(signals["lexical"] + signals["dense"])
    assert "colleagues" in docs[0].page_content


def test_an_exact_term_stays_ahead_of_a_closer_paraphrase(store_factory: StoreFactory) -> None:
    store = _hybrid_store(store_factory)
    _fill(store)
    docs = SessionRecallRetriever(store=store, k=3).invoke("workmates E4512")
    assert _ids(docs)[:2] == ["linker", "office"]
    assert docs[0].metadata["signals"]["lexical"] == 1.0
    assert docs[1].metadata["signals"]["dense"] > docs[0].metadata["signals"]["dense"]


def test_lexical_figures_are_unchanged_without_a_model_or_at_weight_zero(
    store_factory: StoreFactory,
) -> None:
    plain = store_factory.open("plain")
    _fill(plain)
    hybrid = _hybrid_store(store_factory)
    _fill(hybrid)
    for query in ("the puppy breed", "E4512 toolchain", "violin scales", "office dinner"):
        a = SessionRecallRetriever(store=plain, k=4).invoke(query)
        b = SessionRecallRetriever(store=hybrid, k=4, dense_weight=0.0).invoke(query)
        assert [(d.metadata["session_id"], d.metadata["score"]) for d in a] == [
            (d.metadata["session_id"], d.metadata["score"]) for d in b
        ]
        assert all(d.metadata["signals"] is None for d in a + b)


def test_vectors_are_written_with_the_messages_and_only_once(store_factory: StoreFactory) -> None:
    model = ConceptEmbeddings()
    store = _hybrid_store(store_factory, model)
    store.add_session("s")
    store.add_messages("s", [{"role": "user", "content": f"m{i}"} for i in range(5)])
    assert _windows(store) == [("s", "[1,2,3]"), ("s", "[3,4,5]")]
    assert model.calls == [2]
    store.add_messages("s", [{"role": "assistant", "content": "m5"}])  # joins a new tail window
    assert _windows(store)[-1] == ("s", "[5,6]")
    assert model.calls == [2, 1]
    assert store.embed_missing() == 0  # nothing left to do
    assert model.calls == [2, 1]


def test_a_bulk_block_embeds_once_when_it_ends_in_batches(store_factory: StoreFactory) -> None:
    model = ConceptEmbeddings()
    store = _hybrid_store(store_factory, model)
    store.vectors.batch_size = 4  # type: ignore[union-attr]
    with store.transaction():
        for n in range(5):
            store.add_session(f"s{n}")
            store.add_messages(f"s{n}", [{"role": "user", "content": f"hello {n}"}])
        assert model.calls == []  # never inside the transaction
    assert model.calls == [4, 1]
    assert len(_windows(store)) == 5


def test_a_failing_model_loses_no_message_and_backfill_adds_the_vectors(
    store_factory: StoreFactory, caplog: pytest.LogCaptureFixture
) -> None:
    broken = ConceptEmbeddings(fail=True)
    store = _hybrid_store(store_factory, broken)
    store.add_session("s")
    with caplog.at_level(logging.WARNING):
        store.add_messages("s", [{"role": "user", "content": "colleagues at dinner"}])
    assert [m.content for m in store.get_messages("s")] == ["colleagues at dinner"]
    assert "embed_missing()" in caplog.text
    assert _windows(store) == []
    broken.fail = False
    seen: list[tuple[int, int]] = []
    assert store.embed_missing(progress=lambda done, total: seen.append((done, total))) == 1
    assert seen == [(1, 1)]
    assert _ids(SessionRecallRetriever(store=store).invoke("workmates")) == ["s"]


def test_backfill_of_an_existing_store(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    _fill(store)
    model = ConceptEmbeddings()
    store.enable_embeddings(model)
    assert _windows(store) == []
    assert store.embed_missing() == 4
    assert store.embed_missing() == 0
    assert _ids(SessionRecallRetriever(store=store, k=1).invoke("my workmates")) == ["office"]


def test_another_model_is_refused_clearly_or_reindexes_on_request(
    store_factory: StoreFactory,
) -> None:
    store = _hybrid_store(store_factory)
    _fill(store)
    with pytest.raises(EmbeddingMismatchError, match=r"concepts-v1.*not of .*concepts-v2"):
        SessionRecallRetriever(store=store, embeddings=OtherModel()).invoke("workmates")
    with pytest.raises(EmbeddingMismatchError, match="reindex"):
        store.enable_embeddings(OtherModel())
    with pytest.raises(EmbeddingMismatchError, match="windows 3/1"):
        store.enable_embeddings(ConceptEmbeddings(), window=(6, 1))
    other = OtherModel()
    store.enable_embeddings(other, reindex=True)
    assert _windows(store) == []
    assert store.embed_missing() == 4
    assert _ids(SessionRecallRetriever(store=store, k=1).invoke("workmates")) == ["office"]


def test_a_search_model_on_a_store_without_vectors_says_what_to_do(
    store_factory: StoreFactory,
) -> None:
    store = store_factory.open()
    _fill(store)
    with pytest.raises(NoVectorsError, match="embed_missing"):
        SessionRecallRetriever(store=store, embeddings=ConceptEmbeddings()).invoke("workmates")


def test_a_read_only_store_is_searched_with_its_vectors(store_factory: StoreFactory) -> None:
    store = _hybrid_store(store_factory)
    _fill(store)
    reader = store_factory.open(read_only=True)
    retriever = SessionRecallRetriever(store=reader, embeddings=ConceptEmbeddings(), k=1)
    assert _ids(retriever.invoke("workmates")) == ["office"]


def test_tenants_sources_and_dates_bind_dense_candidates(store_factory: StoreFactory) -> None:
    store = _hybrid_store(store_factory)
    _fill(store, office={"user_id": "bob", "source": "cron"})
    query = "what did I do with my workmates?"
    for kwargs in (
        {"user_id": "ana"},
        {"exclude_sources": ("tool", "cron")},
    ):
        docs = SessionRecallRetriever(store=store, k=4, **kwargs).invoke(query)  # type: ignore[arg-type]
        assert "office" not in _ids(docs)
    assert _ids(SessionRecallRetriever(store=store, k=1, user_id="bob").invoke(query)) == ["office"]
    after = SessionRecallRetriever(store=store, k=4).invoke(query, after=MAY_2023 + DAY)
    assert "office" not in _ids(after)
    # a role filter matches messages of a role: a window mixes roles, so no dense candidate
    roles = SessionRecallRetriever(store=store, k=4, role_filter="user").invoke(query)
    assert "office" not in _ids(roles)


def test_the_live_thread_and_chains_hold_for_dense_candidates(store_factory: StoreFactory) -> None:
    store = _hybrid_store(store_factory)
    _fill(store)
    store.add_session("office-2", parent_session_id="office", started_at=MAY_2023 + DAY)
    store.add_messages("office-2", [{"role": "user", "content": "my coworkers again"}])
    retriever = SessionRecallRetriever(store=store, k=4)
    docs = retriever.invoke("workmates")
    assert _ids(docs)[0] == "office"  # the child's window counts for its root
    assert "office-2" not in _ids(docs)
    live = retriever.invoke("workmates", current_session_id="office-2")
    assert "office" not in _ids(live)


def test_a_time_hint_weighs_dense_candidates(store_factory: StoreFactory) -> None:
    store = _hybrid_store(store_factory)
    for n, month in enumerate((MAY_2023, MAY_2023 + 60 * DAY)):
        store.add_session(f"s{n}", started_at=month)
        store.add_messages(f"s{n}", [{"role": "user", "content": "colleagues"}])
    retriever = SessionRecallRetriever(store=store, k=2, now=MAY_2023 + 90 * DAY)
    assert _ids(retriever.invoke("workmates in July 2023")) == ["s1", "s0"]
    assert _ids(retriever.invoke("workmates in May 2023")) == ["s0", "s1"]


def test_an_explicit_query_stays_lexical(store_factory: StoreFactory) -> None:
    store = _hybrid_store(store_factory)
    _fill(store)
    docs = SessionRecallRetriever(store=store, k=4).invoke('"adopted a puppy"')
    assert _ids(docs) == ["puppy"]
    assert docs[0].metadata["signals"] is None


def test_forgetting_a_session_drops_its_vectors(store_factory: StoreFactory) -> None:
    store = _hybrid_store(store_factory)
    _fill(store)
    store.delete_sessions(["office"])
    assert "office" not in {sid for sid, _ in _windows(store)}
    assert "office" not in _ids(SessionRecallRetriever(store=store, k=4).invoke("workmates"))


class _Reverse(BaseDocumentCompressor):
    """A stand-in reranker: reverses what it is given and records it."""

    seen: list[list[str]]

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        self.seen.append([d.metadata["session_id"] for d in documents])
        return list(reversed(documents))


def test_a_reranker_reorders_the_top_n(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    _fill(store)
    reranker = _Reverse(seen=[])
    plain = SessionRecallRetriever(store=store, k=4).invoke("the puppy violin E4512 office")
    docs = SessionRecallRetriever(store=store, k=2, reranker=reranker, rerank_top_n=4).invoke(
        "the puppy violin E4512 office"
    )
    assert reranker.seen == [_ids(plain)]
    assert _ids(docs) == _ids(plain)[::-1][:2]


def test_the_recorder_and_the_importers_write_vectors(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    model = ConceptEmbeddings()
    store = _hybrid_store(store_factory, model)
    chat = GenericFakeChatModel(messages=iter([AIMessage("Say hi to your coworkers")]))
    recorder = SessionRecorder(store, session_id="live")
    chat.invoke([HumanMessage("I am off to lunch")], config={"callbacks": [recorder]})
    assert [sid for sid, _ in _windows(store)] == ["live"]
    chats = tmp_path / "chats"
    chats.mkdir()
    (chats / "imported.jsonl").write_text(
        '{"role": "user", "content": "my colleagues liked the talk"}\n'
        '{"role": "assistant", "content": "good"}\n'
    )
    import_jsonl(store, chats)
    assert [sid for sid, _ in _windows(store)] == ["imported", "live"]
    docs = SessionRecallRetriever(store=store, k=2).invoke("workmates", current_session_id="live")
    assert _ids(docs) == ["imported"]


def test_several_window_layouts_are_written_and_searched_together(
    store_factory: StoreFactory,
) -> None:
    model = ConceptEmbeddings()
    store = store_factory.open()
    store.enable_embeddings(model, window=[(2, 1), (3, 1)])
    store.add_session("s")
    store.add_messages("s", [{"role": "user", "content": f"m{i}"} for i in range(4)])
    with store._read() as conn:
        rows = conn.execute(
            "SELECT layout, message_ids FROM passage_vectors ORDER BY layout, start_id"
        ).fetchall()
    assert [(r[0], r[1]) for r in rows] == [
        ("2/1", "[1,2]"),
        ("2/1", "[2,3]"),
        ("2/1", "[3,4]"),
        ("3/1", "[1,2,3]"),
        ("3/1", "[3,4]"),
    ]
    assert model.calls == [5]  # both layouts in one batch
    _fill(store)
    docs = SessionRecallRetriever(store=store, k=1).invoke("my workmates")
    assert _ids(docs) == ["office"] and docs[0].metadata["signals"]["dense"] == pytest.approx(1.0)
    with pytest.raises(EmbeddingMismatchError, match=r"windows 2/1\+3/1"):
        store.enable_embeddings(model)  # the default layout, 3/1 alone
    reader = SessionRecallRetriever(store=store_factory.open(read_only=True), embeddings=model)
    assert _ids(reader.invoke("my workmates"))[0] == "office"


def test_a_combination_of_models_is_one_model_to_the_store(store_factory: StoreFactory) -> None:
    from langchain_session_recall.backends.vectors.combined import CombinedEmbeddings

    concepts, other = ConceptEmbeddings(), OtherModel()
    both = CombinedEmbeddings([concepts, other], [0.6, 0.4])
    store = _hybrid_store(store_factory, both)
    _fill(store)
    assert concepts.calls and other.calls == concepts.calls  # each window embedded by both
    docs = SessionRecallRetriever(store=store, k=3).invoke("what did I do with my workmates?")
    assert _ids(docs)[0] == "office" and docs[0].metadata["signals"]["lexical"] == 0.0
    assert (concepts.queries, other.queries) == (1, 1)
    with pytest.raises(EmbeddingMismatchError, match=r"concepts-v1\*0.6\+"):
        SessionRecallRetriever(store=store, embeddings=concepts).invoke("workmates")


def test_one_layout_each_embeds_each_layout_with_its_own_model(
    store_factory: StoreFactory,
) -> None:
    from langchain_session_recall.backends.vectors.combined import CombinedEmbeddings
    from langchain_session_recall.errors import InvalidArgumentError

    concepts, other = ConceptEmbeddings(), OtherModel()
    both = CombinedEmbeddings([concepts, other], one_layout_each=True)
    store = store_factory.open()
    with pytest.raises(InvalidArgumentError, match="one layout each, need as many"):
        store.enable_embeddings(both)  # 3/1 alone: one layout for two models
    store.enable_embeddings(both, window=[(2, 1), (3, 1)])
    store.add_session("s")
    store.add_messages("s", [{"role": "user", "content": f"m{i}"} for i in range(4)])
    assert (concepts.calls, other.calls) == ([3], [2])  # 2/1: 3 windows; 3/1: 2 windows
    _fill(store)
    docs = SessionRecallRetriever(store=store, k=1).invoke("my workmates")
    assert _ids(docs) == ["office"] and docs[0].metadata["signals"]["dense"] == pytest.approx(1.0)


def test_stats_count_the_vectors_and_name_their_model(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    assert store.stats()["vectors"] is None  # a lexical store has none
    _fill(store, office={"user_id": "ana"})
    store.enable_embeddings(ConceptEmbeddings())
    assert store.stats()["vectors"] == {
        "windows": 0,
        "model": store.vectors.identity if store.vectors else None,
        "window": "3/1",
        "dimensions": None,  # learnt from the first vectors the model makes
    }
    assert store.embed_missing() == 4
    figures = store.stats()["vectors"]
    assert figures is not None and figures["windows"] == 4
    assert figures["dimensions"] == 64
    assert figures["model"] and "ConceptEmbeddings" in figures["model"]
    assert store.stats(user_id="ana")["vectors"]["windows"] == 1
    assert store.stats(user_id="nobody")["vectors"]["windows"] == 0


async def test_the_async_backfill_embeds_what_is_missing(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    _fill(store)
    store.enable_embeddings(ConceptEmbeddings())
    seen: list[tuple[int, int]] = []
    assert await store.aembed_missing(progress=lambda done, total: seen.append((done, total))) == 4
    assert await store.aembed_missing() == 0
    assert seen and seen[-1] == (4, 4)
    assert _ids(await SessionRecallRetriever(store=store, k=1).ainvoke("my workmates")) == [
        "office"
    ]


def test_a_cache_in_front_of_the_model_is_that_model(store_factory: StoreFactory) -> None:
    # LangChain's CacheBackedEmbeddings with query_embedding_cache: a repeated question is not
    # embedded again, and the store sees the model behind the cache (no mismatch).
    from langchain_classic.embeddings import CacheBackedEmbeddings
    from langchain_core.stores import InMemoryByteStore

    from langchain_session_recall.backends.vectors.identity import embedding_identity

    model = ConceptEmbeddings()
    store = _hybrid_store(store_factory, model)
    _fill(store)
    cached = CacheBackedEmbeddings.from_bytes_store(
        model,
        InMemoryByteStore(),
        namespace="concepts-v1",
        query_embedding_cache=True,
        key_encoder="sha256",
    )
    assert embedding_identity(cached) == embedding_identity(model)
    retriever = SessionRecallRetriever(store=store, k=2, embeddings=cached)
    first = retriever.invoke("what did I do with my workmates?")
    asked = model.queries
    again = retriever.invoke("what did I do with my workmates?")
    assert _ids(first)[0] == "office"
    assert [(d.page_content, d.metadata) for d in again] == [
        (d.page_content, d.metadata) for d in first
    ]
    assert model.queries == asked == 1  # the second search took the vector from the cache
    plain = SessionRecallRetriever(store=store, k=2, embeddings=model)
    assert [d.metadata for d in plain.invoke("what did I do with my workmates?")] == [
        d.metadata for d in first
    ]


@pytest.mark.parametrize(
    ("query", "options"),
    [
        ("what did I do with my workmates?", {"role_filter": "user"}),  # windows mix roles
        ("NOT violin", {}),  # only NOT terms: the recent sessions that never mention them
        ("?", {}),  # nothing to search
    ],
)
def test_a_search_that_can_use_no_dense_candidate_never_embeds_its_question(
    store_factory: StoreFactory, query: str, options: dict[str, str]
) -> None:
    model = ConceptEmbeddings()
    store = _hybrid_store(store_factory, model)
    _fill(store)
    hybrid = SessionRecallRetriever(store=store, k=4, embeddings=model)
    lexical = SessionRecallRetriever(store=store, k=4, dense_weight=0.0)
    got = hybrid.invoke(query, **options)
    assert model.queries == 0  # no embedding waited for and thrown away
    assert [(d.page_content, d.metadata) for d in got] == [
        (d.page_content, d.metadata) for d in lexical.invoke(query, **options)
    ]
    assert model.queries == 0


def test_a_backfill_reports_progress_in_steps_from_the_first_session(
    store_factory: StoreFactory,
) -> None:
    """Issue 34 item 6: a store of fewer than 50 sessions reported once, at the end (85 s of
    nothing on screen); a backfill with ``progress`` moves at least 100 steps, or a session
    a step."""
    store = store_factory.open()
    _fill(store)
    store.enable_embeddings(ConceptEmbeddings())
    seen: list[tuple[int, int]] = []
    assert store.embed_missing(progress=lambda done, total: seen.append((done, total))) == 4
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
