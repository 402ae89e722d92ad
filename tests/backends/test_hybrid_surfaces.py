"""Issue 34 item 3: the command line and the MCP server search with the store's vectors, on both
backends. ``search``/``mcp`` take ``--embeddings``; without it they use the model the vectors
were made with when it loads here, say which search ran (``lexical``/``hybrid``), never load a
model for a store without vectors, and fall back to lexical, saying so, when the stored model
cannot be loaded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from cli_support import run_cli
from hybrid_support import ConceptEmbeddings, SizedEmbeddings
from store_targets import StoreFactory

import langchain_session_recall.backends.vectors.spec as spec
import langchain_session_recall.mcp_server as mcp_server
from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.cli import EXIT_OK, EXIT_USAGE
from langchain_session_recall.mcp_server import create_mcp_server

MODEL = "hybrid_support:ConceptEmbeddings"
PARAPHRASE = "what did I do with my workmates?"  # the session says "colleagues"
CORPUS = {
    "office": "Dinner with my colleagues from the office went well",
    "puppy": "I adopted a puppy last week",
    "violin": "I started learning the violin",
}


def _fill(store: SessionBackend) -> None:
    for sid, text in CORPUS.items():
        store.add_session(sid)
        store.add_messages(sid, [{"role": "user", "content": text}])


def _db(store_factory: StoreFactory, model: Any = None) -> str:
    """A store of the corpus, with vectors of ``model`` when given; its ``--db`` value."""
    store = store_factory.open()
    if model is not None:
        store.enable_embeddings(model)
    _fill(store)
    store.close()
    return store_factory.target().db


def _ids(out: str) -> list[str]:
    return [r["metadata"]["session_id"] for r in json.loads(out)]


@pytest.fixture
def no_model_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if any model is loaded (by name or from the store's identity)."""

    def refuse(*args: Any) -> Any:
        raise AssertionError(f"a model was loaded: {args}")

    monkeypatch.setattr(spec, "load_embeddings", refuse)
    monkeypatch.setattr(spec, "_stored_model", refuse)


def test_a_store_without_vectors_is_searched_lexically_and_loads_no_model(
    store_factory: StoreFactory, no_model_loads: None
) -> None:
    db = _db(store_factory)
    text = run_cli("search", "puppy", "--db", db)
    assert text.code == EXIT_OK, text.err
    assert "1 matching session (lexical search)" in text.out
    found = run_cli("search", "puppy", "--db", db, "--json")
    assert [r["metadata"]["search_mode"] for r in json.loads(found.out)] == ["lexical"]
    # a model named for a store without vectors: refused before it is loaded
    named = run_cli("search", "puppy", "--db", db, "--embeddings", MODEL)
    assert named.code == EXIT_USAGE
    assert "holds no passage vectors" in named.err and "session-recall embed" in named.err


@pytest.fixture
def loadable_test_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test models loadable from a store's identity, as the bundled ones are."""
    monkeypatch.setattr(spec, "LOADABLE_FROM_STORE", (*spec.LOADABLE_FROM_STORE, "hybrid_support"))


def test_a_store_never_chooses_a_module_to_import(
    store_factory: StoreFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "imported"
    (tmp_path / "planted_models.py").write_text(
        "import pathlib\n"
        f"pathlib.Path({str(marker)!r}).write_text('imported')\n"
        "from hybrid_support import ConceptEmbeddings as Planted\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    db = _db(store_factory, ConceptEmbeddings())
    store = store_factory.open()
    store.close()
    # the recorded identity is the store's data: whoever wrote the file chose it
    monkeypatch.setattr(
        type(store), "stored_embedding_model", lambda self: "planted_models.Planted:concepts-v1"
    )
    result = run_cli("search", "puppy", "--db", db)
    assert result.code == EXIT_OK, result.err
    assert "(lexical search)" in result.out
    assert "not a bundled model" in result.err and "--embeddings" in result.err
    assert not marker.exists()


def test_the_stored_model_is_used_without_being_named(
    store_factory: StoreFactory, loadable_test_models: None
) -> None:
    db = _db(store_factory, ConceptEmbeddings())
    hybrid = run_cli("search", PARAPHRASE, "--db", db, "-k", "1")
    assert hybrid.code == EXIT_OK, hybrid.err
    assert "(hybrid search)" in hybrid.out and "colleagues" in hybrid.out
    found = json.loads(run_cli("search", PARAPHRASE, "--db", db, "-k", "1", "--json").out)
    assert found[0]["metadata"]["session_id"] == "office"
    assert found[0]["metadata"]["search_mode"] == "hybrid"
    # named, the same; "none" searches lexically (the paraphrase is not in the index)
    named = run_cli("search", PARAPHRASE, "--db", db, "-k", "1", "--json", "--embeddings", MODEL)
    assert _ids(named.out) == ["office"]
    lexical = run_cli("search", PARAPHRASE, "--db", db, "--embeddings", "none", "--json")
    assert "office" not in _ids(lexical.out)
    assert {r["metadata"]["search_mode"] for r in json.loads(lexical.out)} <= {"lexical"}
    # a search that stays lexical with a model (a role filter: windows mix roles) says so
    roles = run_cli("search", "puppy", "--db", db, "--role", "user")
    assert "(lexical search)" in roles.out


def test_a_stored_model_that_cannot_be_loaded_falls_back_to_lexical_and_says_so(
    store_factory: StoreFactory, loadable_test_models: None
) -> None:
    db = _db(store_factory, SizedEmbeddings(64))  # its class needs an argument
    result = run_cli("search", "puppy", "--db", db)
    assert result.code == EXIT_OK
    assert "(lexical search)" in result.out
    assert "hybrid search off" in result.err and "hybrid_support.SizedEmbeddings" in result.err
    assert "--embeddings" in result.err


def test_another_model_than_the_stores_is_refused(store_factory: StoreFactory) -> None:
    db = _db(store_factory, ConceptEmbeddings())
    result = run_cli("search", "puppy", "--db", db, "--embeddings", "hybrid_support:OtherModel")
    assert result.code == EXIT_USAGE
    assert "concepts-v2" in result.err and "concepts-v1" in result.err


def _served_search(
    monkeypatch: pytest.MonkeyPatch, db: str, arguments: dict[str, Any], **options: Any
) -> dict[str, Any]:
    """``serve(db, **options)`` as the CLI runs it, with one ``session_search`` call made
    where it would start serving: the call's JSON."""
    replies: list[dict[str, Any]] = []

    class Serving:
        def __init__(self, server: Any) -> None:
            self.server = server

        def run(self, transport: str) -> None:
            replies.append(anyio.run(_search, self.server, arguments))

    built = create_mcp_server  # the real one (a second serve() in a test would wrap a wrapper)
    monkeypatch.setattr(mcp_server, "create_mcp_server", lambda *a, **kw: Serving(built(*a, **kw)))
    mcp_server.serve(db, read_only=True, **options)
    [reply] = replies
    return reply


async def _search(server: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    from mcp.shared.memory import create_connected_server_and_client_session

    async with create_connected_server_and_client_session(server) as client:
        result = await client.call_tool("session_search", arguments)
    assert result.isError is False, result
    data: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
    return data


def test_the_mcp_server_searches_with_the_stored_model_and_says_so(
    store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch, loadable_test_models: None
) -> None:
    db = _db(store_factory, ConceptEmbeddings())
    hybrid = _served_search(monkeypatch, db, {"query": PARAPHRASE, "limit": 1})
    assert hybrid["search_mode"] == "hybrid"
    assert [r["session_id"] for r in hybrid["results"]] == ["office"]
    lexical = _served_search(monkeypatch, db, {"query": PARAPHRASE}, embeddings="none")
    assert lexical["search_mode"] == "lexical"
    assert "office" not in [r["session_id"] for r in lexical["results"]]


def test_the_mcp_server_loads_no_model_for_a_store_without_vectors(
    store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch, no_model_loads: None
) -> None:
    db = _db(store_factory)
    found = _served_search(monkeypatch, db, {"query": "puppy"})
    assert found["search_mode"] == "lexical" and found["count"] == 1


def test_the_store_names_its_vectors_model_only_when_it_holds_vectors(
    store_factory: StoreFactory,
) -> None:
    store = store_factory.open()
    _fill(store)
    assert store.stored_embedding_model() is None
    store.enable_embeddings(ConceptEmbeddings())  # the model recorded, no vector yet
    assert store.stored_embedding_model() is None
    assert store.embed_missing() == 3
    assert store.stored_embedding_model() == "hybrid_support.ConceptEmbeddings:concepts-v1"


def test_a_hybrid_cli_search_keeps_the_requests_filters(
    store_factory: StoreFactory, loadable_test_models: None
) -> None:
    """The CLI hands its request to the retriever as it is (no field copied one by one): what
    it leaves out stays out of a hybrid search, as of a lexical one."""
    db = _db(store_factory, ConceptEmbeddings())
    args = ("search", PARAPHRASE, "--db", db, "-k", "3", "--json", "--embeddings", MODEL)
    both = json.loads(run_cli(*args).out)
    assert both[0]["metadata"]["session_id"] == "office"
    assert {r["metadata"]["search_mode"] for r in both} == {"hybrid"}
    left_out = run_cli(*args, "--exclude-session", "office")
    assert left_out.code in (EXIT_OK, 1), left_out.err
    assert "office" not in _ids(left_out.out or "[]")
    later = run_cli(*args, "--after", "2999-01-01")
    assert _ids(later.out or "[]") == []
