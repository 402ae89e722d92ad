"""Reading appended rollouts from where the last import stopped (``resume=True``, what
``import auto`` and ``sync`` use): the store ends as a fresh whole import leaves it, a file
rewritten since is read whole, a line being written waits; on both backends."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_support import run_cli
from store_targets import StoreFactory

from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.importers import import_auto, import_codex, import_jsonl, sync
from langchain_session_recall.importers.report import ImportReport
from langchain_session_recall.importers.resume import (
    LineCursor,
    ResumePoint,
    fingerprint,
    resume_key,
)

HOME = Path(__file__).resolve().parents[1] / "data" / "codex"
DAY = Path("sessions/2026/11/20")
MAIN = DAY / "rollout-2026-11-20T09-00-00-019aa1c2-3b4d-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
AGENT = DAY / "rollout-2026-11-20T09-00-36-019aa1c9-0e1f-7a2b-8c3d-4e5f6a7b8c9d.jsonl"
FORK = DAY / "rollout-2026-11-20T09-30-00-019aa1d0-7c8e-7f10-9b2c-3d4e5f6a7b8c.jsonl"
MAIN_ID = "019aa1c2-3b4d-7e5f-8a9b-0c1d2e3f4a5b"
AGENT_ID = "019aa1c9-0e1f-7a2b-8c3d-4e5f6a7b8c9d"


def _dump(store: SessionBackend) -> dict[str, Any]:
    """Everything an import writes that a reader sees: sessions and their messages."""
    out: dict[str, Any] = {}
    for sid in sorted(store.all_session_ids()):
        s = store.get_session(sid)
        assert s is not None
        fields = ("source", "parent_session_id", "model", "title", "started_at", "ended_at")
        where = ("project", "git_branch", "agent")
        out[sid] = [getattr(s, f) for f in (*fields, *where)] + [
            (m.role, m.content, m.tool_call_id, m.tool_calls, m.tool_name, m.timestamp)
            for m in store.get_messages(sid)
        ]
    return out


def _cuts(text: bytes) -> list[int]:
    """Where to cut a file: after each line, inside each line, and just before a newline (a
    whole record whose newline is not written yet)."""
    cuts: list[int] = []
    end = 0
    for line in text.splitlines(keepends=True):
        cuts += [end + len(line) // 2, end + len(line) - 1, end + len(line)]
        end += len(line)
    return cuts


def _stages(name: Path) -> list[tuple[Path, int]]:
    text = (HOME / name).read_bytes()
    return [(name, cut) for cut in _cuts(text)[:-1]]


CASES = _stages(MAIN)[::2] + _stages(FORK) + _stages(AGENT)


@pytest.mark.parametrize(("grown", "cut"), CASES, ids=[f"{p.name[31:39]}@{c}" for p, c in CASES])
def test_an_appended_rollout_read_from_its_point_ends_as_a_fresh_import(
    store_factory: StoreFactory, tmp_path: Path, grown: Path, cut: int
) -> None:
    """A rollout imported while it was written up to ``cut`` (its parent complete, the
    children not there yet), then complete: read from where the import stopped, the
    store holds what one import of the finished files gives."""
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    whole = (home / grown).read_bytes()
    for child in {AGENT, FORK} - {grown}:
        (home / child).unlink()  # (a child comes after its parent's history)
    (home / grown).write_bytes(whole[:cut])
    store = store_factory.open("resumed")
    import_codex(store, home, resume=True)
    shutil.copytree(HOME, home, dirs_exist_ok=True)
    second = import_codex(store, home, resume=True)
    fresh = store_factory.open("fresh")
    import_codex(fresh, HOME)
    assert _dump(store) == _dump(fresh)
    assert second.skipped_total <= 2  # (the fixture's two bad lines, when they came after)


def test_a_resumed_read_parses_only_the_appended_lines(
    backend_store: SessionBackend, tmp_path: Path
) -> None:
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    first = import_codex(backend_store, home, resume=True)
    assert first.messages == 20
    again = import_codex(backend_store, home, resume=True)
    assert (again.sessions, again.messages, again.already_imported) == (0, 0, 0)
    assert again.skipped_total == 0  # the bad lines are behind the points: not read again
    _append(home / MAIN, "CI is green now, thanks.")
    third = import_codex(backend_store, home, resume=True)
    assert (third.sessions, third.messages, third.already_imported) == (1, 1, 0)
    assert backend_store.get_messages(MAIN_ID)[-1].content == "CI is green now, thanks."


def test_a_rewritten_rollout_is_read_whole(backend_store: SessionBackend, tmp_path: Path) -> None:
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    import_codex(backend_store, home, resume=True)
    text = (home / MAIN).read_text()
    (home / MAIN).write_text(text.replace("times out", "timed out", 1) + "\n")  # longer
    again = import_codex(backend_store, home, resume=True)
    assert again.already_imported > 0 and again.skipped_total == 2  # read from its start
    (home / MAIN).write_text("\n".join(text.splitlines()[:5]) + "\n")  # shorter
    third = import_codex(backend_store, home, resume=True)
    assert third.already_imported > 0


def test_a_line_being_written_waits(backend_store: SessionBackend, tmp_path: Path) -> None:
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    import_codex(backend_store, home, resume=True)
    line = _line("the deploy finished")
    with (home / MAIN).open("a") as fh:
        fh.write(line[:40])
    half = import_codex(backend_store, home, resume=True)
    assert (half.messages, half.skipped_total, half.problems) == (0, 0, [])
    with (home / MAIN).open("a") as fh:
        fh.write(line[40:])
    done = import_codex(backend_store, home, resume=True)
    assert (done.messages, done.skipped_total, done.already_imported) == (1, 0, 0)


def test_an_output_answering_a_call_read_before_keeps_its_name(
    backend_store: SessionBackend, tmp_path: Path
) -> None:
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    call = {"type": "function_call", "name": "shell", "arguments": '{"command": ["ls"]}'}
    _append(home / MAIN, payload={**call, "call_id": "c-late"})
    import_codex(backend_store, home, resume=True)
    _append(
        home / MAIN, payload={"type": "function_call_output", "call_id": "c-late", "output": "a"}
    )
    _append(
        home / MAIN, payload={"type": "function_call_output", "call_id": "c-late", "output": "b"}
    )
    import_codex(backend_store, home, resume=True)
    outputs = [m for m in backend_store.get_messages(MAIN_ID) if m.tool_call_id == "c-late"]
    assert [(m.content, m.tool_name) for m in outputs] == [("a", "shell"), ("b", "shell")]


def test_sync_reads_only_what_was_appended(backend_store: SessionBackend, tmp_path: Path) -> None:
    codex = tmp_path / "home" / ".codex"
    shutil.copytree(HOME, codex)
    import_auto(backend_store, tmp_path / "home")
    _append(codex / MAIN, "and the nightly build?")
    result = sync(backend_store, tmp_path / "home")
    (done,) = [s.report for s in result.sources if s.report is not None]
    assert (done.messages, done.already_imported, done.skipped_total) == (1, 0, 0)


def test_reimport_reads_every_rollout_whole(backend_store: SessionBackend, tmp_path: Path) -> None:
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    import_codex(backend_store, home, resume=True)
    again = import_codex(backend_store, home, resume=True, reimport=True)
    assert again.already_imported == 20


def test_cursor_counts_only_complete_lines() -> None:
    import io

    fh = io.BytesIO(b'{"a": 1}\n' + b"x" * 30 + b'\n{"b": 2}')
    cursor = LineCursor(fh, name="f.jsonl", report=ImportReport("x"), max_line_bytes=20)
    assert list(cursor) == ['{"a": 1}\n', "", '{"b": 2}']  # (a whole record, no newline yet)
    assert (cursor.offset, cursor.line, cursor.partial_line) == (40, 2, 3)
    point = ResumePoint(cursor.offset, cursor.line, fingerprint(fh, cursor.offset))
    assert ResumePoint.loads(point.dumps()) == point
    assert resume_key("codex", Path("r.jsonl")).endswith("/r.jsonl")


def _line(text: str = "", payload: dict[str, Any] | None = None) -> str:
    item = payload or {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": text}],
    }
    record = {"timestamp": "2026-11-20T10:00:00Z", "type": "response_item", "payload": item}
    return json.dumps(record) + "\n"


def _append(file: Path, text: str = "", payload: dict[str, Any] | None = None) -> None:
    with file.open("a") as fh:
        fh.write(_line(text, payload))


CHAT = b"".join(
    json.dumps(line).encode() + b"\n"
    for line in [
        {"session_id": "a", "role": "user", "content": "rotate the key", "timestamp": 100},
        {"session_id": "b", "role": "user", "content": "export CSV?", "timestamp": 110},
        {"session_id": "a", "role": "assistant", "content": "which key?"},  # dated by 100
        {"session_id": "a", "title": "Key rotation", "role": "user", "content": "the API key"},
        {"id": "conv", "messages": [{"role": "user", "content": "hi"}], "timestamp": 120},
        {"session_id": "b", "role": "assistant", "content": "Billing > Export", "timestamp": 130},
        {"session_id": "b", "role": "alien", "content": "skipped"},
        {"session_id": "a", "role": "assistant", "content": "rotated", "timestamp": 140},
        {"session_id": "a", "role": "user", "content": "thanks"},  # dated by 140
    ]
)


@pytest.mark.parametrize("cut", _cuts(CHAT)[:-1])
def test_an_appended_jsonl_file_read_from_its_point_ends_as_a_fresh_import(
    store_factory: StoreFactory, tmp_path: Path, cut: int
) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_bytes(CHAT[:cut])
    store = store_factory.open("resumed")
    import_jsonl(store, chat, resume=True)
    chat.write_bytes(CHAT)
    second = import_jsonl(store, chat, resume=True)
    fresh = store_factory.open("fresh")
    import_jsonl(fresh, chat)
    assert _dump(store) == _dump(fresh)
    # read from where the first import stopped: again only a whole record lacking its newline
    assert second.already_imported == 0 or (CHAT[cut : cut + 1], second.already_imported) == (
        b"\n",
        1,
    )


def test_a_rewritten_jsonl_file_is_read_whole(
    backend_store: SessionBackend, tmp_path: Path
) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_bytes(CHAT)
    import_jsonl(backend_store, chat, resume=True)
    assert import_jsonl(backend_store, chat, resume=True).already_imported == 0
    chat.write_bytes(CHAT.replace(b"rotate the key", b"rotate the KEY"))
    assert import_jsonl(backend_store, chat, resume=True).already_imported == 8


def test_many_rollouts_read_their_points_at_once(
    backend_store: SessionBackend, tmp_path: Path
) -> None:
    day = tmp_path / "codex" / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True)
    files = []
    for n in range(40):  # more than are read one by one
        thread = f"0193a1b2-0000-7000-8000-{n:012d}"
        meta = {"id": thread, "cwd": "/src/50%_off"}
        record = {"timestamp": "2026-11-20T09:00:00Z", "type": "session_meta", "payload": meta}
        files.append(day / f"rollout-2026-11-20T09-00-00-{thread}.jsonl")
        files[-1].write_text(json.dumps(record) + "\n" + _line(f"question {n}"))
    assert import_codex(backend_store, tmp_path / "codex", resume=True).messages == 40
    assert len(backend_store.read_import_states("resume:codex:")) == 40
    _append(files[7], "one more")
    again = import_codex(backend_store, tmp_path / "codex", resume=True)
    assert (again.sessions, again.messages, again.already_imported) == (1, 1, 0)


def test_cli_resume_reads_only_the_appended_lines(tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_bytes(CHAT)
    db = str(tmp_path / "recall.db")
    assert run_cli("import", "jsonl", str(chat), "--db", db, "--resume").code == 4  # (the alien)
    with chat.open("ab") as fh:
        fh.write(b'{"session_id": "b", "role": "user", "content": "and PDF?"}\n')
    result = run_cli("import", "jsonl", str(chat), "--db", db, "--resume", "--json")
    report = json.loads(result.out)
    assert (report["messages"], report["already_imported"]) == (1, 0)


def test_sync_after_a_new_thread_name_resumes_every_rollout(
    backend_store: SessionBackend, tmp_path: Path
) -> None:
    codex = tmp_path / "home" / ".codex"
    shutil.copytree(HOME, codex)
    import_auto(backend_store, tmp_path / "home")
    _append(codex / MAIN, "and the nightly build?")
    with (codex / "session_index.jsonl").open("a") as fh:  # (names: the whole home is read)
        fh.write(json.dumps({"id": AGENT_ID, "thread_name": "Reproduce the timeout"}) + "\n")
    result = sync(backend_store, tmp_path / "home")
    (done,) = [s.report for s in result.sources if s.report is not None]
    assert (done.messages, done.already_imported, done.skipped_total) == (1, 0, 0)
    agent = backend_store.get_session(AGENT_ID)
    assert agent is not None and agent.title == "Reproduce the timeout"
    assert sync(backend_store, tmp_path / "home").summary() == "1 source unchanged"


@pytest.mark.parametrize(
    ("grown", "cut"), [c for c in CASES if c[0] != AGENT][::4], ids=lambda v: str(v)[-12:]
)
def test_sync_of_a_rollout_that_grew_ends_as_a_fresh_import_auto(
    store_factory: StoreFactory, tmp_path: Path, grown: Path, cut: int
) -> None:
    """The same through ``import auto`` then ``sync`` against one ``import auto`` of the
    finished home. The thread names come with the rest (Codex names a thread after it
    started): ``session_index.jsonl`` changed, so the whole home is read, each rollout from
    its point, the unchanged ones not opened."""
    home = tmp_path / "home"
    codex = home / ".codex"
    shutil.copytree(HOME, codex)
    for child in {AGENT, FORK} - {grown}:
        (codex / child).unlink()
    (codex / "session_index.jsonl").unlink()
    (codex / grown).write_bytes((HOME / grown).read_bytes()[:cut])
    store = store_factory.open("synced")
    import_auto(store, home)
    shutil.copytree(HOME, codex, dirs_exist_ok=True)
    sync(store, home)
    fresh = store_factory.open("fresh")
    import_auto(fresh, home)
    assert _dump(store) == _dump(fresh)


def test_rollouts_unchanged_since_their_point_are_not_opened(
    backend_store: SessionBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_session_recall.importers import sources

    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    import_codex(backend_store, home, resume=True)
    opened: list[str] = []
    real = sources.open_regular_file
    monkeypatch.setattr(sources, "open_regular_file", lambda p: opened.append(p.name) or real(p))
    _append(home / MAIN, "one more")
    again = import_codex(backend_store, home, resume=True)
    assert again.messages == 1
    # the grown rollout's point checked, then its new lines read; the thread names (read
    # when the first thread is named)
    assert opened == [MAIN.name, MAIN.name, "session_index.jsonl"]
    opened.clear()
    with (home / "session_index.jsonl").open("a") as fh:
        fh.write(json.dumps({"id": AGENT_ID, "thread_name": "Reproduce it"}) + "\n")
    renamed = import_codex(backend_store, home, resume=True)
    assert (renamed.sessions, renamed.messages, opened) == (1, 0, ["session_index.jsonl"])
    assert backend_store.get_session(AGENT_ID).title == "Reproduce it"  # type: ignore[union-attr]
    assert import_codex(backend_store, home, resume=True).sessions == 0  # (named once)


FORK_ID = "019aa1d0-7c8e-7f10-9b2c-3d4e5f6a7b8c"
EARLY_AGENT = DAY / f"rollout-2026-11-20T08-59-00-{AGENT_ID}.jsonl"  # (sorts before MAIN)


def _codex_home(tmp_path: Path, *absent: Path) -> tuple[Path, Path]:
    """A home holding the Codex fixture without the rollouts ``absent``; ``(home, codex)``."""
    codex = tmp_path / "home" / ".codex"
    shutil.copytree(HOME, codex)
    for rollout in absent:
        (codex / rollout).unlink()
    return tmp_path / "home", codex


def _fresh_messages(store_factory: StoreFactory, home: Path) -> list[Any]:
    """The main thread's messages as one ``import auto`` of ``home`` as it is now gives them."""
    fresh = store_factory.open("fresh")
    import_auto(fresh, home)
    return list(fresh.get_messages(MAIN_ID))


def _synced_as_fresh(store_factory: StoreFactory, store: SessionBackend, home: Path) -> None:
    """``store`` (synced) holds what one ``import auto`` of ``home`` as it is now gives."""
    fresh = store_factory.open("fresh")
    import_auto(fresh, home)
    assert _dump(store) == _dump(fresh)


def test_sync_puts_a_new_sub_agent_under_its_new_parent_whatever_their_order(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    """A parent thread and its sub-agent both new to ``sync``, the sub-agent's file sorting
    first (and a fork of the parent after it): the sub-agent hangs below its parent without
    the history it copied, as one ``import auto`` of the home puts it."""
    home, codex = _codex_home(tmp_path, MAIN, AGENT, FORK)
    store = store_factory.open("synced")
    import_auto(store, home)
    shutil.copy2(HOME / MAIN, codex / MAIN)
    shutil.copy2(HOME / AGENT, codex / EARLY_AGENT)
    shutil.copy2(HOME / FORK, codex / FORK)
    result = sync(store, home)
    (done,) = [s.report for s in result.sources if s.report is not None]
    assert (done.orphans, done.new_sessions) == ([], 3)
    agent = store.get_session(AGENT_ID)
    assert agent is not None and agent.parent_session_id == MAIN_ID
    _synced_as_fresh(store_factory, store, home)
    assert sync(store, home).summary() == "1 source unchanged"


def test_sync_puts_a_new_sub_agent_under_a_parent_synced_before(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    """The parent came with an earlier ``sync`` (a new store: synced whole), its sub-agent and
    its fork with this one: both below it, their copied history left out."""
    home, codex = _codex_home(tmp_path, AGENT, FORK)
    store = store_factory.open("synced")
    sync(store, home)
    shutil.copy2(HOME / AGENT, codex / EARLY_AGENT)
    shutil.copy2(HOME / FORK, codex / FORK)
    result = sync(store, home)
    (done,) = [s.report for s in result.sources if s.report is not None]
    assert (done.orphans, done.new_sessions) == ([], 2)
    _synced_as_fresh(store_factory, store, home)


def test_sync_names_a_new_thread_whose_name_came_first(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    """``session_index.jsonl`` already names a thread when its rollout first reaches ``sync``
    (the index unchanged since the last one): the thread gets its name."""
    home, codex = _codex_home(tmp_path, AGENT, FORK)
    store = store_factory.open("synced")
    import_auto(store, home)
    shutil.copy2(HOME / FORK, codex / FORK)
    sync(store, home)
    fork = store.get_session(FORK_ID)
    assert fork is not None and fork.title == "Stream uploads in parts"
    _synced_as_fresh(store_factory, store, home)


def test_sync_names_a_thread_whose_point_an_import_of_its_file_alone_saved(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    """A rollout imported alone (``import codex --resume FILE``: no index read, no name)
    between two ``sync`` runs: when it grows, the next ``sync`` names it from the home's index
    (unchanged since the last ``sync``), as one ``import auto`` of the home does. Its point
    held no name before, and the thread stayed unnamed on every later append."""
    home, codex = _codex_home(tmp_path, MAIN)
    store = store_factory.open("synced")
    sync(store, home)
    shutil.copy2(HOME / MAIN, codex / MAIN)
    import_codex(store, codex / MAIN, resume=True)
    assert store.get_session(MAIN_ID).title is None  # type: ignore[union-attr]
    _append(codex / MAIN, "and the nightly build?")
    sync(store, home)
    main = store.get_session(MAIN_ID)
    assert main is not None and main.title == "Upload test times out on CI"
    assert len(store.get_messages(MAIN_ID)) == len(_fresh_messages(store_factory, home))


def test_sync_of_appended_rollouts_does_not_read_the_thread_names(
    backend_store: SessionBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Names are read for a thread read from its start only: one read from its point keeps
    the name it had there (the index has not changed, or the whole home would be read)."""
    from langchain_session_recall.importers import sources

    home, codex = _codex_home(tmp_path, FORK)
    import_auto(backend_store, home)
    opened: list[str] = []
    real = sources.open_regular_file
    monkeypatch.setattr(sources, "open_regular_file", lambda p: opened.append(p.name) or real(p))
    _append(codex / MAIN, "and the nightly build?")
    sync(backend_store, home)
    assert opened == [MAIN.name, MAIN.name]  # (its point checked, then its new lines read)
    main = backend_store.get_session(MAIN_ID)
    assert main is not None and main.title == "Upload test times out on CI"
    opened.clear()
    shutil.copy2(HOME / FORK, codex / FORK)
    sync(backend_store, home)
    assert sorted(opened) == sorted([FORK.name, FORK.name, "session_index.jsonl"])


def test_a_new_rollout_that_cannot_be_opened_costs_only_itself(
    store_factory: StoreFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One of the rollouts ``sync`` reads together cannot be opened: the others are read
    together still (the sub-agent below its parent), it is named, and read next time."""
    from langchain_session_recall.errors import ImportSourceError
    from langchain_session_recall.importers import sources

    home, codex = _codex_home(tmp_path, MAIN, AGENT, FORK)
    store = store_factory.open("synced")
    import_auto(store, home)
    for rollout, where in ((MAIN, MAIN), (AGENT, EARLY_AGENT), (FORK, FORK)):
        shutil.copy2(HOME / rollout, codex / where)
    real = sources.open_regular_file

    def refusing(path: Path) -> Any:
        if path.name == FORK.name:
            raise ImportSourceError(f"cannot read {path}: Permission denied")
        return real(path)

    monkeypatch.setattr(sources, "open_regular_file", refusing)
    (first,) = sync(store, home).sources
    assert first.error is not None and FORK.name in first.error
    assert first.report is not None and first.report.orphans == []
    agent = store.get_session(AGENT_ID)
    assert agent is not None and agent.parent_session_id == MAIN_ID
    assert store.get_session(FORK_ID) is None
    monkeypatch.setattr(sources, "open_regular_file", real)
    (again,) = sync(store, home).sources
    assert again.error is None and again.files_read == 1
    _synced_as_fresh(store_factory, store, home)


@pytest.mark.parametrize(("grown", "cut"), CASES[1::5], ids=lambda v: str(v)[-12:])
def test_sync_of_rollouts_read_together_ends_as_a_fresh_import_auto(
    store_factory: StoreFactory, tmp_path: Path, grown: Path, cut: int
) -> None:
    """As :func:`test_sync_of_a_rollout_that_grew_ends_as_a_fresh_import_auto`, the thread
    names known from the start (``session_index.jsonl`` unchanged: ``sync`` reads only the
    rollouts that changed, together) and the sub-agent's file sorting before its parent's."""
    home, codex = _codex_home(tmp_path, AGENT, FORK)
    at = {MAIN: MAIN, AGENT: EARLY_AGENT, FORK: FORK}
    (codex / at[grown]).write_bytes((HOME / grown).read_bytes()[:cut])
    store = store_factory.open("synced")
    import_auto(store, home)
    for rollout, where in at.items():
        shutil.copy2(HOME / rollout, codex / where)
    (done,) = sync(store, home).sources
    assert done.error is None and done.report is not None and done.report.orphans == []
    _synced_as_fresh(store_factory, store, home)


CLAUDE = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.parametrize("later", [False, True], ids=["together", "child later"])
def test_sync_of_new_claude_code_transcripts_ends_as_a_fresh_import_auto(
    store_factory: StoreFactory, tmp_path: Path, later: bool
) -> None:
    """A Claude Code session moved to another id (``continued-in`` in the first one's file)
    and a sub-agent, new to ``sync``: the continuation hangs below the session it continues,
    without the history it copied, whatever order the files are read in; also when its own
    file arrives at a later sync than its parent's."""
    projects = tmp_path / "home" / ".claude" / "projects"
    shutil.copytree(CLAUDE / "claude_code", projects)
    store = store_factory.open("synced")
    import_auto(store, tmp_path / "home")
    photo = CLAUDE / "claude_code_subagents" / "-home-dev-photo-web"
    child = "9c1d2e3f-4a5b-4c6d-9e7f-8091a2b3c4d5.jsonl"
    ignore = shutil.ignore_patterns(child) if later else None
    shutil.copytree(photo, projects / photo.name, ignore=ignore)
    sync(store, tmp_path / "home")
    if later:
        shutil.copy(photo / child, projects / photo.name / child)
        sync(store, tmp_path / "home")
    _synced_as_fresh(store_factory, store, tmp_path / "home")
