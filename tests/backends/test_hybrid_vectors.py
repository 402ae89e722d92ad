"""Passage vectors a hybrid search cannot use (issue 32, item 13), on both backends: a NaN or an
infinity, a vector of another size, a stored value that is not a vector, and a model reopened
with another size. Each is refused at write time (the message kept, the window left to the
backfill, a warning) or skipped and reported at search time (the other sessions still
scored), ``check()`` finds it, and a model of another size is an ``EmbeddingMismatchError``,
never a ``ValueError`` from NumPy."""

from __future__ import annotations

import logging
import math
import struct
from collections.abc import Sequence
from pathlib import Path

import pytest
from hybrid_support import DIM, ConceptEmbeddings, Fault, FaultyEmbeddings, SizedEmbeddings
from langchain_core.documents import Document
from store_targets import StoreFactory

from langchain_session_recall import SessionRecallRetriever
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.backends.vectors import statements as vs
from langchain_session_recall.errors import EmbeddingMismatchError
from langchain_session_recall.models import SearchFilters

CORPUS = {
    "office": ("Dinner with my colleagues from the office went well", "Glad it was fun"),
    "puppy": ("I adopted a puppy last week", "What breed is the puppy?"),
    "linker": ("The build fails with E4512 from the toolchain", "Clean the cache and retry"),
    "violin": ("I started learning the violin", "Practice scales every day"),
}
QUESTION = "what did I do with my workmates?"  # "workmates": the office session, by meaning only


def _fill(store: SessionBackend) -> None:
    for n, (sid, (user, assistant)) in enumerate(CORPUS.items()):
        store.add_session(sid, started_at=1683554160.0 + n * 86_400.0)
        store.add_messages(
            sid, [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
        )


def _ids(docs: Sequence[Document]) -> list[str]:
    return [d.metadata["session_id"] for d in docs]


def _dense_of(docs: Sequence[Document]) -> dict[str, float]:
    return {d.metadata["session_id"]: d.metadata["signals"]["dense"] for d in docs}


def _store_vector(store: SessionBackend, session_id: str, value: object) -> None:
    """Another client writes ``value`` as the stored vector of ``session_id``'s window."""
    p = store.dialect.param
    with store._write() as conn:
        conn.execute(
            f"UPDATE passage_vectors SET embedding = {p('v')} WHERE session_id = {p('sid')}",
            {"v": value, "sid": session_id},
        )


def _problems(store: SessionBackend) -> str:
    result = store.check()
    assert "passage vectors" in result.checked
    return " | ".join(result.problems)


@pytest.mark.parametrize("fault", ["nan", "inf", "short"])
def test_a_spoilt_vector_is_refused_at_write_time_and_the_others_still_score(
    store_factory: StoreFactory, fault: Fault, caplog: pytest.LogCaptureFixture
) -> None:
    model = FaultyEmbeddings("puppy", fault)
    store = store_factory.open()
    store.enable_embeddings(model)
    with caplog.at_level(logging.WARNING):
        _fill(store)
    docs = SessionRecallRetriever(store=store, k=4).invoke(QUESTION)  # no ValueError
    assert _ids(docs)[0] == "office"
    assert _dense_of(docs)["office"] == pytest.approx(1.0)  # not every dense score 0
    assert [m.content for m in store.get_messages("puppy")] == list(CORPUS["puppy"])
    assert "1 passage vector(s)" in caplog.text and "refused" in caplog.text
    if fault == "short":
        assert f"of {DIM // 2} dimensions, not the store's {DIM}" in caplog.text
    assert "1 passage window(s) have no vector" in _problems(store)
    # the window waits for the backfill: once the model is mended it gets its vector
    model.word = None
    assert store.embed_missing() == 1
    assert store.embed_missing() == 0
    assert store.check().ok
    pets = SessionRecallRetriever(store=store, k=1, dense_weight=1.0).invoke("my pet")
    assert _ids(pets) == ["puppy"] and pets[0].metadata["signals"]["lexical"] == 0.0


def test_a_backfill_does_not_lose_the_windows_after_a_refused_one(
    store_factory: StoreFactory,
) -> None:
    model = FaultyEmbeddings("beta", "nan")  # the windows holding message 2 are refused
    store = store_factory.open()
    store.enable_embeddings(model, window=(2, 1))
    store.add_session("s")
    words = ["alpha", "beta", "gamma", "delta", "epsilon"]
    store.add_messages("s", [{"role": "user", "content": w} for w in words])
    store.add_messages("s", [{"role": "user", "content": "zeta"}])  # a write after the refusal
    with store._read() as conn:
        rows = conn.execute(
            "SELECT message_ids, length(embedding) FROM passage_vectors ORDER BY start_id"
        ).fetchall()
    assert [(r[0], int(r[1]) > 0) for r in rows] == [
        ("[1,2]", False),
        ("[2,3]", False),
        ("[3,4]", True),
        ("[4,5]", True),
        ("[5,6]", True),
    ]
    model.word = None
    assert store.embed_missing() == 2
    assert store.check().ok


@pytest.mark.parametrize("fault", ["nan", "short", "not bytes"])
def test_a_stored_vector_that_cannot_be_read_is_skipped_reported_and_embedded_again(
    store_factory: StoreFactory, fault: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = store_factory.open()
    store.enable_embeddings(ConceptEmbeddings())
    _fill(store)
    spoilt: object = {
        "nan": struct.pack(f"<{DIM}f", math.nan, *([0.1] * (DIM - 1))),
        "short": struct.pack("<3f", 0.1, 0.2, 0.3),
        "not bytes": b"\x00\x01\x02",  # a corrupt value: not a whole number of floats
    }[fault]
    _store_vector(store, "puppy", spoilt)
    reader = store_factory.open(read_only=True)
    with caplog.at_level(logging.WARNING):
        docs = SessionRecallRetriever(store=reader, embeddings=ConceptEmbeddings(), k=4).invoke(
            QUESTION
        )
    assert _ids(docs)[0] == "office" and _dense_of(docs)["office"] == pytest.approx(1.0)
    assert "1 passage vector(s) cannot be read" in caplog.text
    index = reader.vectors or store.vectors
    assert index is not None
    found = index.search(
        ConceptEmbeddings().embed_query("workmates"), filters=SearchFilters(), limit=4
    )
    assert found.skipped == 1 and "puppy" not in found.hits and "office" in found.hits
    alone = index.search(
        ConceptEmbeddings().embed_query("workmates"),
        filters=SearchFilters(exclude_session_ids=("puppy",)),
        limit=4,
    )
    assert alone.skipped == 0  # the count is of the windows this search could not score
    problems = _problems(reader)
    assert "1 passage vector(s) cannot be read" in problems
    what = {"nan": "1 not finite", "short": f"1 not of {DIM} dimensions"}
    assert what.get(fault, f"1 not of {DIM} dimensions") in problems
    assert store.embed_missing() == 1  # the backfill embeds its window again
    assert store.check().ok


def test_a_stored_value_that_is_not_bytes_is_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # SQLite keeps whatever another client writes in a BLOB column, text too
    store_factory = StoreFactory("sqlite", tmp_path)
    store = store_factory.open()
    store.enable_embeddings(ConceptEmbeddings())
    _fill(store)
    _store_vector(store, "violin", "not a vector")
    reader = store_factory.open(read_only=True)
    with caplog.at_level(logging.WARNING):
        docs = SessionRecallRetriever(store=reader, embeddings=ConceptEmbeddings(), k=4).invoke(
            QUESTION
        )
    assert _ids(docs)[0] == "office"
    assert "1 not a byte string" in caplog.text and "1 not a byte string" in _problems(reader)
    assert store.embed_missing() == 1
    assert store.check().ok


def test_a_question_vector_that_is_not_finite_ranks_by_words_alone(
    store_factory: StoreFactory, caplog: pytest.LogCaptureFixture
) -> None:
    model = FaultyEmbeddings(None, "nan")
    store = store_factory.open()
    store.enable_embeddings(model)
    _fill(store)
    model.word = "puppy"  # this question's vector holds a NaN
    hybrid = SessionRecallRetriever(store=store, k=4)
    lexical = SessionRecallRetriever(store=store, k=4, dense_weight=0.0)
    with caplog.at_level(logging.WARNING):
        docs = hybrid.invoke("the puppy breed")
    assert "not finite" in caplog.text
    assert _ids(docs) == _ids(lexical.invoke("the puppy breed"))


def test_a_model_that_states_another_size_is_refused_when_opened(
    store_factory: StoreFactory,
) -> None:
    # OpenAIEmbeddings(dimensions=64) then (dimensions=32): the same model name, another size
    store = store_factory.open()
    store.enable_embeddings(SizedEmbeddings(64))
    _fill(store)
    assert store.stats()["vectors"]["dimensions"] == 64
    again = store_factory.open()
    with pytest.raises(EmbeddingMismatchError, match=r"64 dimensions\).*32 dimensions\)"):
        again.enable_embeddings(SizedEmbeddings(32))
    with pytest.raises(EmbeddingMismatchError, match="32 dimensions"):
        SessionRecallRetriever(store=store, embeddings=SizedEmbeddings(32)).invoke(QUESTION)
    reader = store_factory.open(read_only=True)
    with pytest.raises(EmbeddingMismatchError, match="reindex"):
        SessionRecallRetriever(store=reader, embeddings=SizedEmbeddings(32)).invoke(QUESTION)
    again.enable_embeddings(SizedEmbeddings(32), reindex=True)
    assert again.embed_missing() == 4
    assert again.stats()["vectors"]["dimensions"] == 32
    assert _ids(SessionRecallRetriever(store=again, k=1).invoke("workmates")) == ["office"]


def test_a_model_whose_size_changed_unsaid_is_a_mismatch_not_a_value_error(
    store_factory: StoreFactory, caplog: pytest.LogCaptureFixture
) -> None:
    # a model that does not state its size makes vectors of another one after a reopen
    store = store_factory.open()
    store.enable_embeddings(ConceptEmbeddings())
    _fill(store)
    resized = ConceptEmbeddings(dim=32)
    again = store_factory.open()
    again.enable_embeddings(resized)  # it cannot be told before the model makes a vector
    with pytest.raises(EmbeddingMismatchError, match=r"32 dimensions.*vectors of 64"):
        SessionRecallRetriever(store=again, k=2).invoke(QUESTION)
    again.add_session("new")
    with caplog.at_level(logging.WARNING):
        again.add_messages("new", [{"role": "user", "content": "my coworkers at lunch"}])
    assert [m.content for m in again.get_messages("new")] == ["my coworkers at lunch"]
    assert "of 32 dimensions, not the store's 64" in caplog.text and "reindex" in caplog.text
    # the store's own vectors are untouched: the model as it was still searches them
    docs = SessionRecallRetriever(store=store, k=4).invoke(QUESTION)
    assert _ids(docs)[0] == "office" and _dense_of(docs)["office"] == pytest.approx(1.0)


def test_a_store_written_before_the_size_was_recorded_keeps_working(
    store_factory: StoreFactory,
) -> None:
    store = store_factory.open()
    store.enable_embeddings(SizedEmbeddings(DIM))
    _fill(store)
    with store._write() as conn:  # as an older version left it: model and windows only
        conn.execute(vs.delete_meta(store.dialect), {"key": vs.META_DIM})
    reader = store_factory.open(read_only=True)
    assert reader.stats()["vectors"]["dimensions"] == DIM  # told by its vectors
    assert reader.check().ok
    docs = SessionRecallRetriever(store=reader, embeddings=SizedEmbeddings(DIM), k=1).invoke(
        QUESTION
    )
    assert _ids(docs) == ["office"]
    with pytest.raises(EmbeddingMismatchError, match=r"64 dimensions\).*32 dimensions\)"):
        SessionRecallRetriever(store=reader, embeddings=SizedEmbeddings(32)).invoke(QUESTION)
    with pytest.raises(EmbeddingMismatchError, match=r"64 dimensions\).*32 dimensions\)"):
        store_factory.open().enable_embeddings(SizedEmbeddings(32))
    writer = store_factory.open()
    writer.enable_embeddings(SizedEmbeddings(DIM))  # the same model: the size is recorded now
    with writer._read() as conn:
        assert vs.read_meta(conn, writer.dialect, vs.META_DIM) == str(DIM)
