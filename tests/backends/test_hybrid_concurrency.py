"""A hybrid search embeds its question while the lexical search runs (issue 25, latency), on
both backends: the same Documents as the sequential search, the embedding really overlapping
the lexical stage (shown by a lexical stage that waits for the embedding to have started, not
by a clock), errors raised as before, no worker left running once a search has returned or
raised, and the async twin on ``aembed_query``."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hybrid_support import ConceptEmbeddings
from langchain_core.documents import Document
from store_targets import StoreFactory

import langchain_session_recall.retriever as retriever_module
from langchain_session_recall import SessionRecallRetriever
from langchain_session_recall.backends import SessionBackend

QUERIES = (
    "what did I do with my workmates?",
    "E4512 toolchain",
    "a new pet",
    "learning an instrument in June 2023",
    '"adopted a puppy"',
    "?",
)
WAIT = 10.0  # seconds; only a broken overlap ever waits this long


class RecordingModel(ConceptEmbeddings):
    """Records the thread each question is embedded in, signals when an embedding starts
    and may hold it (``hold``) or fail it (``fail_queries``)."""

    def __init__(self, *, fail_queries: bool = False) -> None:
        super().__init__()
        self.fail_queries = fail_queries
        self.started = threading.Event()
        self.hold = threading.Event()
        self.hold.set()
        self.threads: list[str] = []
        self.finished = 0
        self.async_calls = 0

    def embed_query(self, text: str) -> list[float]:
        self.threads.append(threading.current_thread().name)
        self.started.set()
        try:
            assert self.hold.wait(WAIT), "the embedding was held too long"
            if self.fail_queries:
                raise ConnectionError("embedding service unreachable")
            return super().embed_query(text)
        finally:
            self.finished += 1

    async def aembed_query(self, text: str) -> list[float]:
        self.async_calls += 1
        return await super().aembed_query(text)  # LangChain's default: embed_query, executor


def _fill(store: SessionBackend) -> None:
    corpus = {
        "office": "Dinner with my colleagues from the office went well",
        "puppy": "I adopted a puppy last week",
        "linker": "The build fails with E4512 from the toolchain",
        "violin": "I started learning the violin",
    }
    for n, (sid, text) in enumerate(corpus.items()):
        store.add_session(sid, started_at=1683554160.0 + n * 40 * 86_400.0)
        store.add_messages(
            sid, [{"role": "user", "content": text}, {"role": "assistant", "content": "I see"}]
        )


@pytest.fixture
def store(store_factory: StoreFactory) -> SessionBackend:
    store = store_factory.open()
    store.enable_embeddings(RecordingModel())  # the identity the searches use
    _fill(store)
    return store


def _seen(docs: list[Document]) -> list[tuple[Any, ...]]:
    return [(d.id, d.page_content, d.metadata) for d in docs]


def _workers() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("session-recall-embed")]


@pytest.fixture(autouse=True)
def _no_worker_left() -> Iterator[None]:
    yield
    assert _workers() == []


def _retriever(
    store: SessionBackend, model: RecordingModel, **fields: Any
) -> SessionRecallRetriever:
    return SessionRecallRetriever(
        store=store, k=3, embeddings=model, now=1683554160.0 + 200 * 86_400.0, **fields
    )


def _lexical_waits_for_the_embedding(
    store: SessionBackend, model: RecordingModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lexical stage goes on only once the question's embedding has started: a search
    that embeds after its lexical stage never ends it (the wait fails)."""
    original: Callable[..., Any] = store.match_messages

    def waiting(*args: Any, **kwargs: Any) -> Any:
        assert model.started.wait(WAIT), "the lexical search ran before the embedding began"
        return original(*args, **kwargs)

    monkeypatch.setattr(store, "match_messages", waiting)


def test_results_are_those_of_the_sequential_search(store: SessionBackend) -> None:
    model = RecordingModel()
    concurrent = _retriever(store, model)
    sequential = _retriever(store, model, embed_concurrently=False)
    for query in QUERIES:
        assert _seen(concurrent.invoke(query)) == _seen(sequential.invoke(query)), query
    assert any(_seen(concurrent.invoke(q)) for q in QUERIES)


async def test_the_async_search_gives_the_same_results_through_aembed_query(
    store: SessionBackend,
) -> None:
    model = RecordingModel()
    retriever = _retriever(store, model)
    for query in QUERIES:
        assert _seen(await retriever.ainvoke(query)) == _seen(retriever.invoke(query)), query
    # each started with its search, but "?": nothing to search, no embedding
    assert model.async_calls == len([q for q in QUERIES if q != "?"])


def test_the_question_is_embedded_while_the_lexical_search_runs(
    store: SessionBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = RecordingModel()
    _lexical_waits_for_the_embedding(store, model, monkeypatch)
    docs = _retriever(store, model).invoke("what did I do with my workmates?")
    assert docs[0].id == "office"
    assert model.threads[0].startswith("session-recall-embed")


async def test_the_async_search_embeds_while_the_lexical_search_runs(
    store: SessionBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = RecordingModel()
    _lexical_waits_for_the_embedding(store, model, monkeypatch)
    docs = await _retriever(store, model).ainvoke("what did I do with my workmates?")
    assert docs[0].id == "office"
    assert model.async_calls == 1


def test_without_concurrency_the_searching_thread_embeds_after_the_lexical_stage(
    store: SessionBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = RecordingModel()
    order: list[str] = []
    original: Callable[..., Any] = store.match_messages

    def recording(*args: Any, **kwargs: Any) -> Any:
        order.append("lexical" if model.finished == 0 else "lexical after the embedding")
        return original(*args, **kwargs)

    monkeypatch.setattr(store, "match_messages", recording)
    _retriever(store, model, embed_concurrently=False).invoke("workmates")
    assert model.threads == [threading.current_thread().name]
    assert set(order) == {"lexical"}


def test_a_failing_model_fails_the_search_as_before(store: SessionBackend) -> None:
    for concurrently in (True, False):
        model = RecordingModel(fail_queries=True)
        retriever = _retriever(store, model, embed_concurrently=concurrently)
        with pytest.raises(ConnectionError, match="unreachable"):
            retriever.invoke("what did I do with my workmates?")
        # a strict query that matched never asks for the vector: its lexical result stands
        assert [d.id for d in retriever.invoke('"adopted a puppy"')] == ["puppy"]


async def test_a_failing_model_fails_the_async_search(store: SessionBackend) -> None:
    model = RecordingModel(fail_queries=True)
    with pytest.raises(ConnectionError, match="unreachable"):
        await _retriever(store, model).ainvoke("what did I do with my workmates?")


def _lexical_fails_while_embedding(
    store: SessionBackend, monkeypatch: pytest.MonkeyPatch
) -> RecordingModel:
    """A model whose embedding ends only after the lexical stage has failed."""
    model = RecordingModel()
    model.hold.clear()

    def broken(*args: Any, **kwargs: Any) -> Any:
        assert model.started.wait(WAIT)
        threading.Timer(0.05, model.hold.set).start()  # the embedding ends after the error
        raise RuntimeError("disk I/O error")

    monkeypatch.setattr(store, "match_messages", broken)
    return model


def test_a_failing_lexical_search_returns_only_once_the_embedding_has_ended(
    store: SessionBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _lexical_fails_while_embedding(store, monkeypatch)
    with pytest.raises(RuntimeError, match="disk I/O"):
        _retriever(store, model).invoke("what did I do with my workmates?")
    assert model.finished == 1  # and the autouse fixture: no worker thread left


async def test_a_failing_async_lexical_search_awaits_the_embedding(
    store: SessionBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _lexical_fails_while_embedding(store, monkeypatch)
    with pytest.raises(RuntimeError, match="disk I/O"):
        await _retriever(store, model).ainvoke("what did I do with my workmates?")
    assert model.finished == 1


async def test_a_cancelled_async_search_cancels_its_embedding(
    store: SessionBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate, searched = threading.Event(), []
    index = retriever_module.search_index

    def held(*args: Any) -> Any:
        """The search thread held where it starts reading the store, until after the
        cancellation (where CI once closed the store under it: a segmentation fault)."""
        searched.append("entered")
        try:
            assert gate.wait(WAIT)
            return index(*args)
        finally:
            searched.append("left")

    monkeypatch.setattr(retriever_module, "search_index", held)

    class Hanging(RecordingModel):
        cancelled = False

        async def aembed_query(self, text: str) -> list[float]:
            self.started.set()
            try:
                await asyncio.sleep(WAIT)
            except asyncio.CancelledError:
                self.cancelled = True
                raise
            return self.embed_query(text)

    model = Hanging()
    search = asyncio.ensure_future(_retriever(store, model).ainvoke("workmates"))
    await asyncio.wait_for(asyncio.to_thread(model.started.wait, WAIT), WAIT)
    search.cancel()
    asyncio.get_running_loop().call_later(0.05, gate.set)
    with pytest.raises(asyncio.CancelledError):
        await search
    assert model.cancelled
    # the search thread (it uses the store, which its caller may close now) has ended
    assert searched == ["entered", "left"]


async def test_async_searches_never_wait_on_a_full_default_executor(store: SessionBackend) -> None:
    """LangChain's default ``aembed_query`` runs in the loop's executor: a search waiting in
    that executor for its question's vector, queued behind it, would never end."""
    loop = asyncio.get_running_loop()
    small = ThreadPoolExecutor(1)
    loop.set_default_executor(small)
    model = RecordingModel()
    retriever = _retriever(store, model)
    results = await asyncio.wait_for(
        asyncio.gather(*(retriever.ainvoke("my workmates") for _ in range(4))), WAIT
    )
    assert all(docs[0].id == "office" for docs in results)
    assert model.async_calls == 4


async def test_async_searches_reuse_the_store_s_connections(store: SessionBackend) -> None:
    """SQLite opens a connection per thread and keeps it until the store closes: the async
    searches' threads live on, so their connections are opened once per thread of the pool,
    not once a search."""
    from langchain_session_recall.search.question_vector import _search_pool

    opened = getattr(store, "_all_conns", None)
    if opened is None:
        pytest.skip("PostgreSQL draws its connections from a pool")
    retriever = _retriever(store, RecordingModel())
    before = len(opened)
    threads = _search_pool()._max_workers
    for _ in range(2 * threads + 1):
        assert (await retriever.ainvoke("my workmates"))[0].id == "office"
    assert len(opened) - before <= threads
