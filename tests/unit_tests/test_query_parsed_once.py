"""Issue 33: a query is parsed once per call and carried (the tool checks it, the retriever
decides lexical or hybrid, the pipeline searches it: one parse serves all three)."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

import langchain_session_recall.core.query as query_module
from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.core.query import parse_query
from langchain_session_recall.search.request import SearchRequest
from langchain_session_recall.tool import create_session_search_tool


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The texts ``parse_query`` is called with, wherever the package imported it from."""
    seen: list[str] = []
    original = query_module.parse_query

    def counting(text: str) -> query_module.ParsedQuery:
        seen.append(text)
        return original(text)

    for name, module in list(sys.modules.items()):
        if (
            name.startswith("langchain_session_recall")
            and getattr(module, "parse_query", None) is original
        ):
            monkeypatch.setattr(module, "parse_query", counting)
    yield seen


@pytest.fixture
def store() -> SessionStore:
    store = SessionStore(":memory:")
    store.add_session("s1", title="CORS", user_id="u")
    store.add_messages("s1", [{"role": "user", "content": "fixed the CORS error in nginx"}])
    return store


@pytest.mark.parametrize("query", ["how did we fix the CORS error?", "nothing like it"])
def test_a_tool_call_parses_its_query_once(
    store: SessionStore, parses: list[str], query: str
) -> None:
    tool = create_session_search_tool(store, user_id="u")
    tool.invoke({"query": query})
    assert parses == [query]


def test_a_hybrid_search_parses_its_query_once(store: SessionStore, parses: list[str]) -> None:
    store.enable_embeddings(DeterministicFakeEmbedding(size=8))
    store.embed_missing()
    retriever = SessionRecallRetriever(store=store)
    assert retriever.search_mode("CORS error") == "hybrid"
    parses.clear()
    retriever.invoke("CORS error")
    assert parses == ["CORS error"]


def test_a_carried_parse_is_used_and_a_stale_one_dropped() -> None:
    parsed = parse_query("CORS error")
    request = SearchRequest("CORS error", parsed=parsed)
    assert request.parse() is parsed
    changed = dataclasses.replace(request, query="nginx")
    assert changed.parsed is None
    assert [t.tokens for t in changed.parse().relaxed] == [("nginx",)]
    assert SearchRequest("other", parsed=parsed).parsed is None


@pytest.mark.parametrize("rerank", [False, True])
def test_a_search_prepares_its_request_once_at_the_top(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch, rerank: bool
) -> None:
    """The retriever prepares the request (query read, prefixes completed by the store) once,
    and everything below takes what it prepared: the store lists a prefix's completions once,
    also when a reranker widens the search."""
    from langchain_core.documents import BaseDocumentCompressor, Document

    class Reverse(BaseDocumentCompressor):
        def compress_documents(self, documents, query, callbacks=None):  # type: ignore[no-untyped-def]
            return list(reversed(documents))

    prepared, listed = [], []
    prepare, completions = SearchRequest.prepare, store.prefix_completions

    def counting_prepare(self: SearchRequest, complete: query_module.Completions) -> object:
        prepared.append(self.query)
        return prepare(self, complete)

    def counting_completions(prefix: str, limit: int) -> object:
        listed.append(prefix)
        return completions(prefix, limit)

    monkeypatch.setattr(SearchRequest, "prepare", counting_prepare)
    monkeypatch.setattr(store, "prefix_completions", counting_completions)
    retriever = SessionRecallRetriever(store=store, reranker=Reverse() if rerank else None, k=1)
    docs = retriever.invoke("ngin* error")
    assert [d.id for d in docs] == ["s1"] and isinstance(docs[0], Document)
    assert prepared == ["ngin* error"]
    assert listed == ["ngin"]
