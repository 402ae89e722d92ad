"""LangChain's standard retriever tests, on a temporary database of demo sessions."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.demo import build_demo_store

_DIR = tempfile.TemporaryDirectory(prefix="session-recall-standard-")
_STORE: SessionStore = build_demo_store(Path(_DIR.name) / "standard.db")


class TestSessionRecallRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[SessionRecallRetriever]:
        return SessionRecallRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"store": _STORE}

    @property
    def retriever_query_example(self) -> str:
        return "docker OR nginx OR postgres"


from langchain_tests.integration_tests import ToolsIntegrationTests  # noqa: E402
from langchain_tests.unit_tests import ToolsUnitTests  # noqa: E402

from langchain_session_recall.tool import SessionSearchTool, create_session_search_tool  # noqa: E402

_TOOL = create_session_search_tool(_STORE)


class TestSessionSearchToolUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> SessionSearchTool:
        return _TOOL

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "CORS error", "limit": 2}


class TestSessionSearchToolIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> SessionSearchTool:
        return _TOOL

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "CORS error", "limit": 2}
