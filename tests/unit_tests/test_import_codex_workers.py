"""Codex import with a worker process reading the rollouts (``workers=2``): the same store
content and report as the serial import (``workers=1``) on the fixture home and on a
generated one, with resume points, bad lines, a worker that fails or cannot start; in-flight
work bounded; no process started for a small import."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from store_targets import StoreFactory

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # (the benchmark's home generator)
    sys.path.insert(0, str(ROOT))

from benchmarks.codex_import import write_home  # noqa: E402
from langchain_session_recall.backends import SessionBackend  # noqa: E402
from langchain_session_recall.errors import (  # noqa: E402
    ImportSourceError,
    ImportWorkerError,
    InvalidArgumentError,
)
from langchain_session_recall.importers import base, codex_pipe, codex_reading  # noqa: E402
from langchain_session_recall.importers.codex import import_codex  # noqa: E402
from langchain_session_recall.importers.codex_pipe import (  # noqa: E402
    Batch,
    ThreadReads,
    processes_for,
)

HOME = Path(__file__).resolve().parents[1] / "data" / "codex"
_DIES_ON = "019a001b"  # a thread of the generated home: its worker dies (or fails) there


def _content(store: SessionBackend) -> dict[str, Any]:
    """Everything an import writes: sessions, messages (with their ids: the write order),
    ledger keys, resume points."""
    sessions = {}
    for sid in sorted(store.all_session_ids()):
        session = store.get_session(sid)
        sessions[sid] = {
            "session": dataclasses.asdict(session) if session is not None else None,
            "messages": [dataclasses.asdict(m) for m in store.get_messages(sid)],
            "ledger": sorted(store.imported_keys("codex", sid)),
        }
    return {"sessions": sessions, "points": store.read_import_states("resume:codex:")}


def _generated(tmp_path: Path, messages: int = 3_000) -> Path:
    """A home like the benchmark's (sub-agents, forks, archived parents), with bad lines."""
    home = tmp_path / "gen"
    write_home(home, messages, 60)
    rollouts = sorted(home.rglob("rollout-*.jsonl"))
    for n, file in enumerate(rollouts[::7]):
        with file.open("a") as fh:
            fh.write('{"timestamp": "2026-11-20T09:00:00Z", "type": "response_item"\n')
            fh.write('{"timestamp": "yesterday", "type": "event_msg", "payload": {}}\n')
            fh.write(f'{{"type": "response_item", "payload": {n}}}\n')
    return home


@pytest.fixture(autouse=True)
def no_head_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every thread for the worker (none read here while it starts): the fixture home is
    small."""
    monkeypatch.setattr(codex_pipe, "HEAD_START_BYTES", 0)


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of two threads: many batches, the window of batches in flight exercised."""
    monkeypatch.setattr(codex_pipe, "BATCH_THREADS", 2)


def _both(
    store_factory: StoreFactory, home: Path, **options: Any
) -> tuple[tuple[dict[str, Any], dict[str, Any]], tuple[dict[str, Any], dict[str, Any]]]:
    serial, parallel = store_factory.open("serial"), store_factory.open("parallel")
    one = import_codex(serial, home, workers=1, **options).to_dict()
    two = import_codex(parallel, home, workers=2, **options).to_dict()
    return (one, _content(serial)), (two, _content(parallel))


def test_workers_give_the_serial_result_on_the_fixture_home(store_factory: StoreFactory) -> None:
    (report, content), (report2, content2) = _both(store_factory, HOME)
    assert report["messages"] == 20 and report["skipped"]  # (the fixture's bad lines)
    assert report2 == report
    assert content2 == content


@pytest.mark.usefixtures("small_batches")
@pytest.mark.parametrize("resume", [False, True])
def test_workers_give_the_serial_result_on_a_generated_home(
    store_factory: StoreFactory, tmp_path: Path, resume: bool
) -> None:
    home = _generated(tmp_path)
    (report, content), (report2, content2) = _both(store_factory, home, resume=resume)
    assert report["skipped"]["not valid JSON"] > 1 and report["problems"]
    assert any(s["session"]["parent_session_id"] for s in content["sessions"].values())
    assert bool(content["points"]) is resume
    assert report2 == report
    assert content2 == content


@pytest.mark.usefixtures("small_batches")
def test_resumed_rollouts_are_read_here_and_the_rest_by_the_worker(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    """A second import with resume points: appended rollouts go on from their point (read
    in the importing process), rewritten ones are read whole (by the worker), in order."""
    home = _generated(tmp_path)
    stores = store_factory.open("serial"), store_factory.open("parallel")
    for store, workers in zip(stores, (1, 2), strict=True):
        import_codex(store, home, resume=True, workers=workers)
    rollouts = sorted(home.rglob("rollout-*.jsonl"))
    line = {"timestamp": "2026-11-30T10:00:00Z", "type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": "more"}]}}  # fmt: skip
    for file in rollouts[::3]:
        with file.open("a") as fh:
            fh.write(json.dumps(line) + "\n")
    for file in rollouts[1::5]:  # rewritten: read whole again
        file.write_text(file.read_text().replace("bucket", "basket"))
    reports = [
        import_codex(store, home, resume=True, workers=w).to_dict()
        for store, w in zip(stores, (1, 2), strict=True)
    ]
    assert reports[0]["messages"] > 0
    assert reports[1] == reports[0]
    assert _content(stores[1]) == _content(stores[0])


@pytest.mark.usefixtures("small_batches")
def test_the_threads_read_here_while_the_worker_starts_change_nothing(
    store_factory: StoreFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(codex_pipe, "HEAD_START_BYTES", 1024 * 1024)
    starts: list[int] = []
    submit = codex_pipe.Pipe._submit

    def noting(pipe: codex_pipe.Pipe) -> None:
        starts.append(pipe.start)
        submit(pipe)

    monkeypatch.setattr(codex_pipe.Pipe, "_submit", noting)
    home = _generated(tmp_path)
    (report, content), (report2, content2) = _both(store_factory, home)
    assert 0 < starts[0] < report["sessions"]  # some threads read here, the others not
    assert report2 == report
    assert content2 == content


def _dying_read(batch: Batch) -> list[ThreadReads]:
    """``read_batch``, but the worker process dies at a batch holding ``_DIES_ON``."""
    if any(_DIES_ON in f for files in batch.threads for f in files):
        os._exit(3)
    return codex_pipe.read_batch(batch)


def _failing_read(batch: Batch) -> list[ThreadReads]:
    """``read_batch``, but the read of ``_DIES_ON``'s thread fails (as an unreadable file)."""
    done = codex_pipe.read_batch(batch)
    for n, files in enumerate(batch.threads[: len(done)]):
        if any(_DIES_ON in f for f in files):
            return [*done[:n], ImportSourceError(f"cannot read {files[0]}")]
    return done


@pytest.mark.usefixtures("small_batches")
def test_a_worker_that_dies_raises_and_a_rerun_completes_the_import(
    store_factory: StoreFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _generated(tmp_path)
    monkeypatch.setattr(base, "MESSAGES_PER_TRANSACTION", 500)  # (groups before the death)
    whole = store_factory.open("serial")
    import_codex(whole, home, workers=1)
    store = store_factory.open("parallel")
    monkeypatch.setattr(codex_pipe, "read_batch", _dying_read)
    with pytest.raises(ImportWorkerError, match="worker stopped"):
        import_codex(store, home, workers=2)
    written, expected = _content(store)["sessions"], _content(whole)["sessions"]
    assert 0 < len(written) < len(expected)
    for sid, session in written.items():  # each session written whole, or not at all
        assert session["ledger"] == expected[sid]["ledger"]
    monkeypatch.undo()
    import_codex(store, home, workers=2)
    again = _content(store)["sessions"]
    assert {sid: s["ledger"] for sid, s in again.items()} == {
        sid: s["ledger"] for sid, s in expected.items()
    }


@pytest.mark.usefixtures("small_batches")
def test_a_read_that_fails_in_the_worker_fails_where_the_serial_read_fails(
    store_factory: StoreFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _generated(tmp_path)
    real = codex_reading.read_rollout
    monkeypatch.setattr(base, "MESSAGES_PER_TRANSACTION", 500)  # (groups before the failure)

    def failing(file: Path, *args: Any, **kwargs: Any) -> Any:
        if _DIES_ON in file.name:
            raise ImportSourceError(f"cannot read {file}")
        return real(file, *args, **kwargs)

    serial, parallel = store_factory.open("serial"), store_factory.open("parallel")
    with monkeypatch.context() as patch:
        patch.setattr(codex_reading, "read_rollout", failing)
        with pytest.raises(ImportSourceError):
            import_codex(serial, home, workers=1)
    monkeypatch.setattr(codex_pipe, "read_batch", _failing_read)
    with pytest.raises(ImportSourceError):
        import_codex(parallel, home, workers=2)
    assert _content(serial)["sessions"]  # groups before the failure were written
    assert _content(parallel) == _content(serial)


def _unstartable(batch: Batch) -> list[ThreadReads]:
    os._exit(1)  # (as a worker whose start fails: an unguarded script)


def test_a_worker_that_cannot_start_leaves_the_import_to_this_process(
    store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    serial, parallel = store_factory.open("serial"), store_factory.open("parallel")
    expected = import_codex(serial, HOME, workers=1).to_dict()
    monkeypatch.setattr(codex_pipe, "read_batch", _unstartable)
    with caplog.at_level(logging.WARNING, logger=codex_pipe.__name__):
        assert import_codex(parallel, HOME, workers=2).to_dict() == expected
    assert "could not start" in caplog.text
    assert _content(parallel) == _content(serial)


def test_work_in_flight_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory stays flat: at most AHEAD batches a worker are submitted and not yet taken,
    however many the import has."""
    from langchain_session_recall import SessionStore

    monkeypatch.setattr(codex_pipe, "BATCH_THREADS", 1)
    home = tmp_path / "gen"
    files = write_home(home, 1_500, 60)
    most = 0
    submit = codex_pipe.Pipe._submit

    def counting(pipe: codex_pipe.Pipe) -> None:
        nonlocal most
        submit(pipe)
        most = max(most, len(pipe.pending))

    monkeypatch.setattr(codex_pipe.Pipe, "_submit", counting)
    report = import_codex(SessionStore(":memory:"), home, workers=2)
    assert files == 25 and report.sessions == files
    assert most == codex_pipe.AHEAD


def test_a_small_import_starts_no_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_session_recall import SessionStore

    def refused(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a worker process was started")

    monkeypatch.setattr(codex_pipe, "WorkerProcess", refused)
    monkeypatch.setattr(codex_pipe, "_cores", lambda: 8)
    home = tmp_path / "codex"
    shutil.copytree(HOME, home)
    store = SessionStore(":memory:")
    assert import_codex(store, home, resume=True).messages == 20  # (default: workers=None)
    assert import_codex(store, home, resume=True, workers=1).messages == 0


def test_how_many_worker_processes() -> None:
    big, small = codex_pipe.PARALLEL_MIN_BYTES, codex_pipe.PARALLEL_MIN_BYTES - 1
    assert processes_for(1, lambda limit: big) == 0
    assert processes_for(3, lambda limit: 0) == 2  # (asked for: whatever the size)
    assert processes_for(None, lambda limit: small) == 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(codex_pipe, "_cores", lambda: 2)
        assert processes_for(None, lambda limit: big) == 1
        patch.setattr(codex_pipe, "_cores", lambda: 1)
        assert processes_for(None, lambda limit: big) == 0
    for wrong in (0, -1):
        with pytest.raises(InvalidArgumentError, match="workers must be at least 1"):
            processes_for(wrong, lambda limit: big)


def test_a_script_without_a_main_guard_runs_once_and_its_worker_reads(tmp_path: Path) -> None:
    """A worker does not run the importing script again: ``spawn`` did (as ``__mp_main__``),
    so an unguarded script's top level ran twice (its side effects too) and its worker died
    with a traceback before the import went on without it."""
    import subprocess

    marker, db = tmp_path / "ran.txt", tmp_path / "store.db"
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import logging\n"
        "from langchain_session_recall import SessionStore\n"
        "from langchain_session_recall.importers import codex_pipe\n"
        "from langchain_session_recall.importers.codex import import_codex\n"
        f"with open({str(marker)!r}, 'a') as f:\n"
        "    f.write('top level\\n')\n"
        "codex_pipe.HEAD_START_BYTES = 0\n"
        "logging.basicConfig()\n"
        f"report = import_codex(SessionStore({str(db)!r}), {str(HOME)!r}, workers=2)\n"
        "print(report.messages)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "top level\n"
    assert "Traceback" not in done.stderr and "could not start" not in done.stderr
    assert done.stdout.strip() == "20"
