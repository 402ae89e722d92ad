"""The retriever reports LangSmith's standard retriever params (``LangSmithRetrieverParams``):
its name always, the embedding model's provider and name when a hybrid search would use one.
They are read from the model object's class and fields: nothing is loaded or embedded."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from langchain_classic.embeddings import CacheBackedEmbeddings
from langchain_classic.storage import InMemoryByteStore
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_openai import OpenAIEmbeddings

from langchain_session_recall import SessionRecallRetriever, SessionStore


class _NamedModel(Embeddings):
    """A model that states its name and fails if anything asks it for a vector."""

    model = "acme-embed-v2"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise AssertionError("reporting the params must not embed anything")

    def embed_query(self, text: str) -> list[float]:
        raise AssertionError("reporting the params must not embed anything")


class _RunMetadata(BaseCallbackHandler):
    """Keeps the metadata of each retriever run it sees start."""

    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []

    def on_retriever_start(
        self,
        serialized: dict[str, Any],
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self.runs.append(dict(metadata or {}))


def _store() -> SessionStore:
    store = SessionStore(":memory:")
    store.add_session("s1", title="CORS")
    store.add_messages("s1", [{"role": "user", "content": "CORS error in nginx"}])
    return store


def test_lexical_retriever_reports_its_name_only() -> None:
    params = SessionRecallRetriever(store=_store())._get_ls_params()
    assert params == {"ls_retriever_name": "session_recall"}


def test_the_name_reaches_the_traced_run() -> None:
    handler = _RunMetadata()
    docs = SessionRecallRetriever(store=_store()).invoke(
        "CORS", config={"callbacks": [handler], "metadata": {"caller": "test"}}
    )
    assert [d.id for d in docs] == ["s1"]
    assert handler.runs == [{"caller": "test", "ls_retriever_name": "session_recall"}]


def test_embedding_model_named_by_its_class_and_model_field() -> None:
    retriever = SessionRecallRetriever(store=_store(), embeddings=_NamedModel())
    assert retriever._get_ls_params() == {
        "ls_retriever_name": "session_recall",
        "ls_embedding_provider": "_NamedModel",
        "ls_embedding_model": "acme-embed-v2",
    }


def test_openai_embeddings_reported_without_a_call() -> None:
    model = OpenAIEmbeddings(model="text-embedding-3-small", api_key="sk-not-used")  # type: ignore[arg-type]
    params = SessionRecallRetriever(store=_store(), embeddings=model)._get_ls_params()
    assert params["ls_embedding_provider"] == "OpenAIEmbeddings"
    assert params["ls_embedding_model"] == "text-embedding-3-small"


def test_a_model_without_a_name_gives_its_provider_only() -> None:
    # a fake's ``size`` is how big its vectors are, not a model's name
    fake = DeterministicFakeEmbedding(size=8)
    params = SessionRecallRetriever(store=_store(), embeddings=fake)._get_ls_params()
    assert params == {
        "ls_retriever_name": "session_recall",
        "ls_embedding_provider": "DeterministicFakeEmbedding",
    }


def test_a_cache_is_reported_as_the_model_behind_it() -> None:
    cached = CacheBackedEmbeddings.from_bytes_store(
        _NamedModel(), InMemoryByteStore(), key_encoder="sha256"
    )
    params = SessionRecallRetriever(store=_store(), embeddings=cached)._get_ls_params()
    assert params["ls_embedding_provider"] == "_NamedModel"
    assert params["ls_embedding_model"] == "acme-embed-v2"


def test_the_stores_model_is_reported_when_the_retriever_has_none() -> None:
    store = SessionStore(":memory:", embeddings=_NamedModel())
    params = SessionRecallRetriever(store=store)._get_ls_params()
    assert params["ls_embedding_model"] == "acme-embed-v2"


def test_no_embedding_params_when_the_dense_part_is_off() -> None:
    # dense_weight=0: every search is lexical, the model is never asked
    retriever = SessionRecallRetriever(store=_store(), embeddings=_NamedModel(), dense_weight=0)
    assert retriever._get_ls_params() == {"ls_retriever_name": "session_recall"}


def test_embedding_params_reach_the_traced_run_of_a_browse() -> None:
    handler = _RunMetadata()
    retriever = SessionRecallRetriever(store=_store(), embeddings=_NamedModel())
    docs = retriever.invoke("", config={"callbacks": [handler]})  # browse: nothing embedded
    assert [d.id for d in docs] == ["s1"]
    assert handler.runs[0]["ls_embedding_provider"] == "_NamedModel"
    assert handler.runs[0]["ls_embedding_model"] == "acme-embed-v2"
