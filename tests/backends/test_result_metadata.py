"""Issue 33 (a typed metadata schema): every result's metadata is exactly what its TypedDict
says, key for key and type for type, in both modes and on both backends; ``metadata_of`` reads
it back and refuses metadata that is not a result's."""

from __future__ import annotations

import time
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import pytest
from langchain_core.documents import Document

from langchain_session_recall import (
    RecentMetadata,
    SearchMetadata,
    SessionBackend,
    SessionRecallRetriever,
    metadata_of,
)
from langchain_session_recall.recall.model import RECALL_KEY

NOW = time.time()


@pytest.fixture
def filled(store: SessionBackend) -> SessionBackend:
    store.add_session("s1", title="CORS in nginx", started_at=NOW - 3 * 86400, model="m")
    store.add_messages(
        "s1",
        [
            {"role": "user", "content": "the CORS error in nginx is back"},
            {"role": "assistant", "content": "add the Access-Control-Allow-Origin header"},
        ],
    )
    store.add_session("s2", parent_session_id="s1", started_at=NOW - 3 * 86400 + 60)
    store.add_messages("s2", [{"role": "tool", "tool_name": "sh", "content": "nginx -s reload"}])
    store.add_session("s3", title="pytest fixtures", started_at=NOW - 400 * 86400)
    store.add_messages("s3", [{"role": "user", "content": "a flaky pytest fixture"}])
    return store


def _conforms(value: Any, hint: Any) -> bool:
    """Whether ``value`` is of type ``hint`` (the types a metadata schema uses)."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is Any:
        return True
    if hint is None or hint is type(None):
        return value is None
    if origin in (Union, types.UnionType):
        return any(_conforms(value, a) for a in args)
    if origin is Literal:
        return value in args
    if origin is list:
        return isinstance(value, list) and all(_conforms(v, args[0]) for v in value)
    if origin is dict:
        return isinstance(value, dict) and all(
            _conforms(k, args[0]) and _conforms(v, args[1]) for k, v in value.items()
        )
    if typing.is_typeddict(hint):
        return isinstance(value, dict) and _fits(hint, value)
    if hint is float:
        return isinstance(value, float)
    return isinstance(value, hint) and not (hint is int and isinstance(value, bool))


def _fits(schema: Any, metadata: dict[str, Any]) -> bool:
    hints = get_type_hints(schema)
    assert set(metadata) == set(hints)  # no key missing, none unknown
    return all(
        _conforms(metadata[k], hints[k]) or pytest.fail(f"{k}={metadata[k]!r}") for k in hints
    )


def _valid(schema: Any, metadata: dict[str, Any]) -> None:
    assert _fits(schema, metadata)  # each value of its type


@pytest.mark.parametrize("query", ["cors nginx last week", "nginx reload", "pytset fixture"])
def test_search_metadata_is_the_schema(filled: SessionBackend, query: str) -> None:
    docs = SessionRecallRetriever(store=filled, k=3).invoke(query)
    assert docs
    for doc in docs:
        _valid(SearchMetadata, doc.metadata)
        meta = metadata_of(doc)
        assert meta is not None and meta["mode"] == "search"
        assert meta["recall"] is doc.metadata[RECALL_KEY]


def test_the_schema_carries_a_time_hint(filled: SessionBackend) -> None:
    [doc] = SessionRecallRetriever(store=filled, k=1).invoke("cors last week")
    hint = doc.metadata["time_hint"]
    assert hint is not None and hint["text"] == "last week" and hint["start"] < hint["end"] < NOW


def test_recent_metadata_is_the_schema(filled: SessionBackend) -> None:
    docs = SessionRecallRetriever(store=filled, k=3).invoke("")
    assert [d.metadata["session_id"] for d in docs] == ["s1", "s3"]
    for doc in docs:
        _valid(RecentMetadata, doc.metadata)
        meta = metadata_of(doc)
        assert meta is not None and meta["mode"] == "recent"


def test_metadata_of_refuses_what_is_not_a_result(filled: SessionBackend) -> None:
    assert metadata_of(Document("made elsewhere", metadata={"source": "web"})) is None
    [doc] = SessionRecallRetriever(store=filled, k=1).invoke("nginx")
    partial = {k: v for k, v in doc.metadata.items() if k != "matched_terms"}
    assert metadata_of(partial) is None  # a key removed: not read as a result
    summarized = {**doc.metadata, "summary_status": "summarized"}
    assert metadata_of(summarized) == summarized  # keys the summarizer adds are kept
