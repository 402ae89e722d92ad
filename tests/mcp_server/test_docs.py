"""The MCP documentation works as written: the Python example of docs/mcp.md prints what the page
says; every ``mcpServers`` entry in README.md and docs/mcp.md is a command line the CLI accepts;
the documented ``SessionEnd`` hook, run the way Claude Code runs it (its JSON on stdin, through a
shell), imports the finished transcript."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from langchain_session_recall import SessionStore
from langchain_session_recall.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "docs" / "mcp.md"]
TRANSCRIPTS = ROOT / "tests" / "data" / "claude_code"


def _blocks(page: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", page.read_text("utf-8"), re.S)


def _json_blocks() -> list[Any]:
    return [json.loads(b) for page in PAGES for b in _blocks(page, "json") if b.lstrip()[:1] == "{"]


def test_python_example_prints_what_the_page_shows(
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langchain_session_recall import tool

    monkeypatch.setattr(tool, "_CHECKED_STORES", set())
    [code] = _blocks(ROOT / "docs" / "mcp.md", "python")
    expected = [line[2:] for line in code.splitlines() if line.startswith("# ")]
    with caplog.at_level("WARNING", logger="langchain_session_recall"):
        exec(compile(code, "docs/mcp.md[python]", "exec"), {})
    assert capsys.readouterr().out.splitlines() == expected
    # issue 23 §4: the server of the example starts without the several-users warning
    assert [r.getMessage() for r in caplog.records if r.levelno >= 30] == []


def test_server_entries_are_valid_command_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    import langchain_session_recall.mcp_server as mcp_server

    entries = [
        server
        for block in _json_blocks()
        for server in block.get("mcpServers", {}).values()
        if "command" in server
    ]
    assert len(entries) >= 3  # README, docs/mcp.md: .mcp.json and Cursor
    calls: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(mcp_server, "serve", lambda db, **kw: calls.append((db, kw)))
    for entry in entries:
        assert entry["command"] == "session-recall"
        calls.clear()
        assert main(entry["args"]) == 0, entry["args"]  # the CLI accepts the line
        [(db, options)] = calls  # and serves the documented database, read-only
        assert entry["args"][0] == "mcp" and options["read_only"] is True
        assert db.endswith("claude.db")


def _hook_commands() -> list[str]:
    commands = []
    for block in _json_blocks():
        for group in block.get("hooks", {}).get("SessionEnd", []):
            for hook in group["hooks"]:
                assert hook["type"] == "command" and hook["timeout"] == 60
                commands.append(hook["command"])
    return commands


@pytest.mark.skipif(shutil.which("jq") is None, reason="the documented hook uses jq")
def test_session_end_hook_imports_the_finished_transcript(tmp_path: Path) -> None:
    commands = set(_hook_commands())
    assert len(commands) == 1, "README.md and docs/mcp.md document the same hook"
    [command] = commands
    transcript = next(TRANSCRIPTS.glob("*/*.jsonl"))
    payload = {
        "session_id": transcript.stem,
        "transcript_path": str(transcript),
        "cwd": str(tmp_path),
        "hook_event_name": "SessionEnd",
        "reason": "other",
    }
    home = tmp_path / "home"
    (home / ".session-recall").mkdir(parents=True)
    env = {
        **os.environ,
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    for _ in range(2):  # a second run (a resumed session ending again) adds nothing
        subprocess.run(
            ["sh", "-c", command],
            input=json.dumps(payload),
            text=True,
            env=env,
            capture_output=True,
            timeout=120,
        )
        with SessionStore(home / ".session-recall" / "claude.db", read_only=True) as store:
            stats = store.stats()
        assert stats["sources"] == {"claude-code": 2} and stats["messages"] == 10
