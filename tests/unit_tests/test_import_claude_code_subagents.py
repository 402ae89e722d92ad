"""Claude Code's newer layout: sub-agents in ``<session>/subagents/agent-<id>.jsonl`` (their type
in ``agent-<id>.meta.json``), ``ai-title`` records, ``continued-in`` continuations; on both
backends. The older layout's tests are in ``test_import_claude_code.py``."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from store_targets import StoreFactory

from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.importers import import_claude_code
from langchain_session_recall.retriever import SessionRecallRetriever

DATA = Path(__file__).resolve().parents[1] / "data" / "claude_code_subagents"
PROJECT = DATA / "-home-dev-photo-web"
SESSION = "5b0e8c1d-2f3a-4b5c-8d6e-7f8091a2b3c4"
CONTINUED = "9c1d2e3f-4a5b-4c6d-9e7f-8091a2b3c4d5"
EMPTY = "e2f3a4b5-c6d7-4e8f-a091-b2c3d4e5f6a7"
AGENT = f"{SESSION}/agent-a7f3c2e1b9d04f56"


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(root.rglob("*")):
        if f.is_file():
            h.update(str(f.relative_to(root)).encode() + f.read_bytes())
    return h.hexdigest()


def test_sessions_sub_agent_and_continuation(backend_store: SessionBackend) -> None:
    before = _digest(DATA)
    report = import_claude_code(backend_store, DATA)
    assert (report.sessions, report.new_sessions, report.messages) == (3, 3, 10)
    assert report.problems == [f"{SESSION}.jsonl:8: not valid JSON"]
    assert set(backend_store.all_session_ids()) == {SESSION, AGENT, CONTINUED}
    assert backend_store.get_session(EMPTY) is None  # nothing was said in it
    assert _digest(DATA) == before


def test_sub_agent_file_is_a_child_named_by_its_type(backend_store: SessionBackend) -> None:
    import_claude_code(backend_store, DATA)
    agent = backend_store.get_session(AGENT)
    assert agent is not None
    assert (agent.parent_session_id, agent.title) == (SESSION, "Explore")
    assert agent.model == "claude-haiku-4-5-20251001"
    messages = backend_store.get_messages(AGENT)
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert (messages[2].tool_name, messages[2].tool_call_id) == ("Grep", "toolu_01Grep")


def test_ai_title_is_the_title_the_latest_wins(backend_store: SessionBackend) -> None:
    import_claude_code(backend_store, DATA)
    main = backend_store.get_session(SESSION)
    assert main is not None
    assert main.title == "Fix rotated portrait thumbnails (EXIF orientation)"
    continued = backend_store.get_session(CONTINUED)
    assert continued is not None and continued.title == "Apply EXIF thumbnail fix with test"


def test_continued_in_makes_a_chain_without_the_copied_history(
    backend_store: SessionBackend,
) -> None:
    import_claude_code(backend_store, DATA)
    continued = backend_store.get_session(CONTINUED)
    assert continued is not None and continued.parent_session_id == SESSION
    assert [m.content[:24] for m in backend_store.get_messages(CONTINUED)] == [
        "Apply the fix and add a ",
        "Done: exif_transpose() i",
    ]
    main = backend_store.get_session(SESSION)
    assert main is not None and main.end_reason == "continued"
    assert [m.role for m in backend_store.get_messages(SESSION)] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert set(backend_store.chain(SESSION)) == {SESSION, AGENT, CONTINUED}


def test_search_finds_the_chain_once(backend_store: SessionBackend) -> None:
    import_claude_code(backend_store, DATA)
    docs = SessionRecallRetriever(store=backend_store).invoke("orientation-6 JPEG test")
    assert [d.metadata["session_id"] for d in docs] == [SESSION]


def test_continuation_file_alone_then_its_origin(store_factory: StoreFactory) -> None:
    store = store_factory.open()
    import_claude_code(store, PROJECT / f"{CONTINUED}.jsonl")  # its origin not read yet
    assert len(store.get_messages(CONTINUED)) == 6  # nothing to tell the copy apart: all kept
    import_claude_code(store, DATA)
    assert store.get_session(CONTINUED).parent_session_id == SESSION  # type: ignore[union-attr]


def test_rerun_adds_only_new_sub_agent_lines(store_factory: StoreFactory, tmp_path: Path) -> None:
    tree = tmp_path / "projects"
    shutil.copytree(DATA, tree)
    store = store_factory.open()
    import_claude_code(store, tree)
    assert import_claude_code(store, tree).messages == 0
    agent_file = next(tree.rglob("agent-*.jsonl"))
    entry = {
        "type": "user",
        "uuid": "d2000005-0000-4000-8000-000000000005",
        "parentUuid": "d2000004-0000-4000-8000-000000000004",
        "isSidechain": True,
        "agentId": "a7f3c2e1b9d04f56",
        "sessionId": SESSION,
        "timestamp": "2026-11-24T10:01:06.000Z",
        "message": {"role": "user", "content": "Also check the avatar resizer."},
    }
    with agent_file.open("a") as fh:
        fh.write(json.dumps(entry) + "\n")
    assert import_claude_code(store, tree).messages == 1
    assert store.get_messages(AGENT)[-1].content == "Also check the avatar resizer."


def test_bad_meta_json_costs_the_title_only(tmp_path: Path) -> None:
    tree = tmp_path / "projects"
    shutil.copytree(DATA, tree)
    next(tree.rglob("agent-*.meta.json")).write_text("{not json")
    from langchain_session_recall import SessionStore

    store = SessionStore(":memory:")
    report = import_claude_code(store, tree)
    assert any("meta.json" in p for p in report.problems)
    agent = store.get_session(AGENT)
    assert agent is not None and agent.title is None and len(store.get_messages(AGENT)) == 4
