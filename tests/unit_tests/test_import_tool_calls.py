"""Issue 23 §2: every importer keeps a tool call's arguments, so they are found and shown."""

from __future__ import annotations

import json
from pathlib import Path

from hermes_fixtures import build_hermes_db

from langchain_session_recall.backends.sqlite.store import SessionStore
from langchain_session_recall.importers import import_claude_code, import_hermes, import_jsonl
from langchain_session_recall.recall.build import search_results
from langchain_session_recall.recall.tool_calls import parse_tool_calls

DATA = Path(__file__).resolve().parents[1] / "data"


def _arguments(store: SessionStore, session_id: str) -> list[dict[str, object]]:
    return [
        dict(call.arguments)
        for m in store.get_messages(session_id)
        for call in parse_tool_calls(m.tool_calls)
    ]


def test_claude_code_keeps_a_tool_use_input() -> None:
    store = SessionStore(":memory:")
    import_claude_code(store, DATA / "claude_code")
    session = "7d3f9a2e-4b1c-4e8a-9f2d-1a6b5c8e0f31"
    args = _arguments(store, session)
    assert args and all(args), args  # every call has its input
    path = next(str(a["file_path"]) for a in args if "file_path" in a)
    [result] = search_results(store, Path(path).stem, k=1)
    assert f'→ Read(file_path="{path}")' in result.page_content


def test_hermes_keeps_a_call_s_arguments(tmp_path: Path) -> None:
    src = tmp_path / "state.db"
    build_hermes_db(src, 3)
    with SessionStore(src, read_only=True) as hermes:  # searched as it is
        assert [r.metadata["session_id"] for r in search_results(hermes, "journalctl", k=1)]
    store = SessionStore(tmp_path / "ours.db")
    import_hermes(store, src)
    [result] = search_results(store, "journalctl rabbitmq", k=1)
    assert 'terminal(command="journalctl -u rabbitmq-server --since today")' in (
        result.page_content
    )


def test_jsonl_keeps_both_call_formats(tmp_path: Path) -> None:
    lines = [
        {"session_id": "j", "role": "user", "content": "look her up", "timestamp": 1.0},
        {
            "session_id": "j",
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "1", "name": "lookup", "args": {"email": "ana@example.com"}},
                {
                    "id": "2",
                    "type": "function",
                    "function": {"name": "grep", "arguments": '{"pattern": "zebrafish"}'},
                },
            ],
            "timestamp": 2.0,
        },
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    store = SessionStore(":memory:")
    import_jsonl(store, path)
    assert _arguments(store, "j") == [{"email": "ana@example.com"}, {"pattern": "zebrafish"}]
    [result] = search_results(store, "zebrafish", k=1)
    assert 'grep(pattern="zebrafish")' in result.page_content
