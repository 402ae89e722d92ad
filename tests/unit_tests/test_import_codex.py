"""Codex rollout import: threads, tool calls and their outputs, forks and sub-agents as
children, .zst files, the Codex home layout, re-runs, bad lines; on both backends."""

from __future__ import annotations

import builtins
import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import run_cli
from store_targets import StoreFactory

from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.importers import import_codex
from langchain_session_recall.importers.codex import default_codex_home, rollout_files
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.retriever import SessionRecallRetriever

HOME = Path(__file__).resolve().parents[1] / "data" / "codex"
MAIN = "019aa1c2-3b4d-7e5f-8a9b-0c1d2e3f4a5b"
FORK = "019aa1d0-7c8e-7f10-9b2c-3d4e5f6a7b8c"
AGENT = "019aa1c9-0e1f-7a2b-8c3d-4e5f6a7b8c9d"
EMPTY = "019aa2e4-5f6a-7b7c-9d8e-9f0a1b2c3d4e"
ARCHIVED = "0199f0a1-2b3c-7d4e-8f5a-6b7c8d9e0f1a"
MAIN_FILE = HOME / "sessions/2026/11/20" / f"rollout-2026-11-20T09-00-00-{MAIN}.jsonl"


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(root.rglob("*")):
        if f.is_file():
            h.update(str(f.relative_to(root)).encode() + f.read_bytes())
    return h.hexdigest()


def test_threads_messages_and_reported_lines(backend_store: SessionBackend) -> None:
    before = _tree_digest(HOME)
    report = import_codex(backend_store, HOME)
    assert (report.sessions, report.new_sessions, report.messages) == (4, 4, 20)
    assert report.skipped == {"not valid JSON": 1, "record without a payload object": 1}
    assert report.problems == [
        f"{MAIN_FILE.name}:17: not valid JSON",
        f"{MAIN_FILE.name}:21: record without a payload object",
    ]
    assert report.ignored["reasoning item"] == 2  # the main thread's, and the fork's copy
    assert report.ignored["session without messages"] == 1
    assert set(backend_store.all_session_ids()) == {MAIN, FORK, AGENT, ARCHIVED}
    assert backend_store.get_session(EMPTY) is None
    main = backend_store.get_session(MAIN)
    assert main is not None
    assert (main.source, main.model, main.title) == (
        "codex",
        "gpt-5-codex",
        "Upload test times out on CI",
    )
    assert _tree_digest(HOME) == before  # the source is only read


def test_tool_calls_with_arguments_and_paired_outputs(backend_store: SessionBackend) -> None:
    import_codex(backend_store, MAIN_FILE)
    messages = backend_store.get_messages(MAIN)
    assert [m.role for m in messages] == ["user", "assistant"] + ["assistant", "tool"] * 4 + [
        "assistant",
        "assistant",
    ]
    assert messages[0].content.startswith("test_upload_large_file times out on CI")
    calls = [m.tool_call_names for m in messages if m.tool_calls]
    assert calls == [["shell"], ["spawn_agent"], ["local_shell"], ["apply_patch"], ["web_search"]]
    shell = messages[2].tool_calls[0]  # type: ignore[index]
    assert "pytest -q tests/test_upload.py -k large_file" in json.dumps(shell)
    outputs = [(m.tool_name, m.tool_call_id) for m in messages if m.role == "tool"]
    assert outputs == [
        ("shell", "call_Jq8vX2shell"),
        ("spawn_agent", "call_Sp4wnAgent"),
        ("local_shell", "call_L0calSh"),
        ("apply_patch", "call_Ap9lyPatch"),
    ]
    # the shell output Codex wrapped with its metadata: the command's output only
    assert messages[3].content.startswith("F\nFAILED tests/test_upload.py::test_upload_large_file")
    said = " ".join(m.content for m in messages)
    for left_out in ("Reproducing the timeout", "environment_context", "permissions", "Summary:"):
        assert left_out not in said  # reasoning, injected context, compaction summary


def test_fork_and_sub_agent_are_children_without_the_copied_history(
    backend_store: SessionBackend,
) -> None:
    import_codex(backend_store, HOME)
    fork, agent = backend_store.get_session(FORK), backend_store.get_session(AGENT)
    assert fork is not None and agent is not None
    assert (fork.parent_session_id, agent.parent_session_id) == (MAIN, MAIN)
    assert agent.model == "gpt-5-codex-mini"
    assert fork.title == "Stream uploads in parts"
    # The fork's file repeats the main thread's first turn: only its own turn is imported.
    assert [m.content[:30] for m in backend_store.get_messages(FORK)] == [
        "Instead of a longer timeout, c",
        "Yes: set TransferConfig(multip",
    ]
    assert len(backend_store.get_messages(AGENT)) == 4
    assert set(backend_store.chain(MAIN)) == {MAIN, FORK, AGENT}


def test_search_folds_the_sub_agent_into_its_parent(backend_store: SessionBackend) -> None:
    import_codex(backend_store, HOME)
    docs = SessionRecallRetriever(store=backend_store).invoke("multipart upload took 31.0s")
    assert docs[0].metadata["session_id"] == MAIN
    assert AGENT in docs[0].metadata["matched_session_ids"]


def test_rerun_adds_only_appended_lines(store_factory: StoreFactory, tmp_path: Path) -> None:
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    store = store_factory.open()
    import_codex(store, home)
    again = import_codex(store, home)
    assert (again.messages, again.new_sessions, again.already_imported) == (0, 0, 20)
    rollout = home / MAIN_FILE.relative_to(HOME)
    reply = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "CI is green now, thanks."}],
    }
    with rollout.open("a") as fh:
        fh.write(
            json.dumps(
                {"timestamp": "2026-11-20T09:20:00Z", "type": "response_item", "payload": reply}
            )
            + "\n"
        )
    third = import_codex(store, home)
    assert third.messages == 1
    assert store.get_messages(MAIN)[-1].content == "CI is green now, thanks."


def test_zst_rollouts_are_read_and_a_plain_twin_wins(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    plain = home / MAIN_FILE.relative_to(HOME)
    packed = plain.with_name(plain.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(plain.read_bytes()))
    found = rollout_files(home, report=ImportReport("codex"))
    assert plain in found and packed not in found  # the plain file of the same name wins
    plain.unlink()  # the rollout compressed: same thread, same lines, read from the .zst
    from langchain_session_recall import SessionStore

    store = SessionStore(tmp_path / "r.db")
    report = import_codex(store, home)
    assert report.messages == 20
    assert len(store.get_messages(MAIN)) == 12


def test_zst_without_zstandard_is_skipped_with_the_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "codex" / "archived_sessions"
    home.mkdir(parents=True)
    (home / f"rollout-2026-11-02T14-05-00-{ARCHIVED}.jsonl.zst").write_bytes(b"\x28\xb5\x2f\xfd")
    shutil.copy(MAIN_FILE, home / MAIN_FILE.name)
    real_import = builtins.__import__

    def no_zstandard(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "zstandard":
            raise ImportError("No module named 'zstandard'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "zstandard", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_zstandard)
    from langchain_session_recall import SessionStore

    report = import_codex(SessionStore(tmp_path / "r.db"), tmp_path / "codex")
    assert report.messages == 12  # the plain rollout is imported
    [problem] = [p for p in report.problems if ".zst" in p]
    assert "zstandard" in problem and "langchain-session-recall[codex]" in problem


def test_default_home_is_codex_home_or_dot_codex(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", "/srv/agents/codex")
    assert default_codex_home() == Path("/srv/agents/codex")
    monkeypatch.delenv("CODEX_HOME")
    assert default_codex_home() == Path.home() / ".codex"


def test_cli_imports_codex_home_and_exits_4_for_skipped_lines(
    store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(HOME))
    db = store_factory.target().db
    result = run_cli("import", "codex", "--db", db)
    assert result.code == 4, result.err
    assert "codex: 4 sessions (4 new), 20 messages imported" in result.out
    assert f"{MAIN_FILE.name}:17: not valid JSON" in result.out
    again = run_cli("import", "codex", str(HOME), "--db", db, "--json")
    assert json.loads(again.out)["already_imported"] == 20


def _moved(tmp_path: Path, thread: str, to: str) -> Path:
    """A copy of the fixture home with ``thread``'s rollout moved into folder ``to``."""
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    [rollout] = home.glob(f"sessions/*/*/*/rollout-*-{thread}.jsonl")
    (home / to).mkdir(exist_ok=True)
    rollout.rename(home / to / rollout.name)
    return home


def test_children_read_before_their_parent_still_hang_below_it(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    # sessions/ is read before archived_sessions/: the fork and the sub-agent come first.
    home = _moved(tmp_path, MAIN, "archived_sessions")
    store = store_factory.open()
    report = import_codex(store, home)
    assert (report.sessions, report.messages, report.orphans) == (4, 20, [])
    fork, agent = store.get_session(FORK), store.get_session(AGENT)
    assert fork is not None and agent is not None
    assert (fork.parent_session_id, agent.parent_session_id) == (MAIN, MAIN)
    assert [m.content[:30] for m in store.get_messages(FORK)] == [
        "Instead of a longer timeout, c",
        "Yes: set TransferConfig(multip",
    ]


def test_a_thread_in_sessions_and_archived_is_imported_once(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    twin = home / "archived_sessions" / MAIN_FILE.name
    lines = MAIN_FILE.read_text().splitlines(keepends=True)
    twin.write_text("".join(lines[:10]))  # an older, shorter copy of the same thread
    store = store_factory.open()
    report = import_codex(store, home)
    assert (report.sessions, report.messages) == (4, 20)
    assert len(store.get_messages(MAIN)) == 12


def test_threads_are_written_while_later_rollouts_are_still_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_session_recall import SessionStore
    from langchain_session_recall.importers import codex, codex_rollout

    day = tmp_path / "codex" / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)
    template = MAIN_FILE.read_text()
    for n in range(150):  # more threads than one write group holds
        thread = f"019aa1c2-3b4d-7e5f-8a9b-{n:012x}"
        rollout = day / f"rollout-2026-11-20T09-00-00-{thread}.jsonl"
        rollout.write_text(template.replace(MAIN, thread))
    store = SessionStore(tmp_path / "r.db")
    held_when_read: list[int] = []
    parse = codex_rollout.parse_codex_lines

    def counting(*args: Any, **kwargs: Any) -> Any:
        held_when_read.append(store.stats()["sessions"])
        return parse(*args, **kwargs)

    monkeypatch.setattr(codex_rollout, "parse_codex_lines", counting)
    report = codex.import_codex(store, tmp_path / "codex")
    assert report.sessions == 150
    assert held_when_read[0] == 0 and held_when_read[-1] >= 100  # read as it is written


def test_left_out_lines_are_checked_as_any_other() -> None:
    from langchain_session_recall.importers.codex import parse_codex_lines

    meta = {"id": "t1", "timestamp": "2026-11-20T09:00:00Z"}
    event = {"type": "token_count", "info": None}
    reasoning = {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"}
    said = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    rows: list[dict[str, Any]] = [
        {"timestamp": "2026-11-20T09:00:00Z", "type": "session_meta", "payload": meta},
        {"timestamp": "2026-11-20T09:00:01Z", "type": "event_msg", "payload": event},
        {"timestamp": "2026-11-20T09:00:02Z", "type": "response_item", "payload": reasoning},
        {"timestamp": "2026-11-20T09:00:03Z", "type": "event_msg", "payload": "oops"},
        {"timestamp": "yesterday", "type": "event_msg", "payload": event},
        {"timestamp": "2026-11-20T09:00:05Z", "type": "event_msg", "payload": event},
        {"type": "response_item", "payload": said},  # no time: the line before's
    ]
    lines = [json.dumps(r, separators=(",", ":")) for r in rows]
    lines.insert(6, lines[1][:40])  # a line cut short as Codex wrote it
    report = ImportReport("codex")
    thread = parse_codex_lines(lines, name="r.jsonl", default_session_id="x", report=report)
    assert report.problems == [
        "r.jsonl:4: record without a payload object",
        "r.jsonl:5: bad timestamp",
        "r.jsonl:7: not valid JSON",
    ]
    assert report.ignored == {"event_msg record": 2, "reasoning item": 1}
    [(key, message)] = thread.messages
    assert key == "t1:8"
    assert message["timestamp"] == 1795165205.0  # 2026-11-20T09:00:05Z


def test_a_fork_of_a_fork_leaves_out_all_the_history_it_copied(
    backend_store: SessionBackend, tmp_path: Path
) -> None:
    def line(kind: str, payload: dict[str, Any]) -> str:
        return json.dumps({"timestamp": "2026-11-20T09:00:00Z", "type": kind, "payload": payload})

    def said(role: str, text: str) -> str:
        part = "input_text" if role == "user" else "output_text"
        content = [{"type": part, "text": text}]
        return line("response_item", {"type": "message", "role": role, "content": content})

    first = [said("user", "why is CI red?"), said("assistant", "a flaky upload test")]
    second = [said("user", "make it stream in parts")]
    third = [said("user", "and retry each part")]
    ids = [f"019aa1d0-0000-7000-8000-00000000000{n}" for n in range(3)]
    day = tmp_path / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)
    for n, (thread, history) in enumerate(
        zip(ids, [first, first + second, first + second + third], strict=True)
    ):
        meta = {"id": thread, **({"forked_from_id": ids[n - 1]} if n else {})}
        rollout = day / f"rollout-2026-11-20T09-00-0{n}-{thread}.jsonl"
        rollout.write_text("\n".join([line("session_meta", meta), *history]) + "\n")
    import_codex(backend_store, tmp_path)
    assert [m.content for m in backend_store.get_messages(ids[2])] == ["and retry each part"]
    assert [m.content for m in backend_store.get_messages(ids[1])] == ["make it stream in parts"]
