"""Issue 23 §4, the smaller items: ``recent --role`` refused, ``search -- "-python"``, ``import
sqlite`` named as such, JSONL lines without a timestamp dated by their neighbours."""

from __future__ import annotations

import io
import json
from pathlib import Path

from langchain_session_recall import SessionStore
from langchain_session_recall.cli import EXIT_OK, EXIT_USAGE, main
from langchain_session_recall.demo import load_demo
from langchain_session_recall.importers import import_jsonl


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def _demo(tmp_path: Path) -> str:
    path = tmp_path / "demo.db"
    with SessionStore(path) as store:
        load_demo(store)
    return str(path)


def test_recent_refuses_role(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    db = _demo(tmp_path)
    code, _ = run("recent", "--db", db, "--role", "user")
    assert code == EXIT_USAGE
    assert "--role applies to search" in capsys.readouterr().err


def test_a_query_that_starts_with_a_dash(tmp_path: Path) -> None:
    db = _demo(tmp_path)
    code, out = run("search", "--", "-pgbouncer", "--db", db, "--json", "-k", "1")
    assert code == EXIT_OK
    assert json.loads(out)[0]["metadata"]["title"].startswith("Postgres running out")
    code, _ = run("search", "--db", db, "--", "-pgbouncer")
    assert code == EXIT_OK


def test_import_sqlite_names_itself(tmp_path: Path) -> None:
    db = _demo(tmp_path)
    code, out = run("import", "sqlite", db, "--db", str(tmp_path / "copy.db"))
    assert code == EXIT_OK
    assert out.startswith("sqlite: 18 sessions"), out


def test_jsonl_lines_without_a_timestamp_keep_their_order(tmp_path: Path) -> None:
    lines = [
        {"session_id": "s", "role": "user", "content": "first", "timestamp": 1_000.0},
        {"session_id": "s", "role": "assistant", "content": "second"},
        {"session_id": "s", "role": "user", "content": "third", "timestamp": 1_010.0},
        {"session_id": "t", "role": "user", "content": "lead"},
        {"session_id": "t", "role": "assistant", "content": "answer", "timestamp": 2_000.0},
        {"session_id": "u", "role": "user", "content": "no time at all"},
    ]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    store = SessionStore(":memory:")
    report = import_jsonl(store, path)
    s = store.get_messages("s")
    assert [m.content for m in s] == ["first", "second", "third"]
    assert s[1].timestamp == 1_000.0  # its previous neighbour's time, not the file's
    t = store.get_messages("t")
    assert [m.timestamp for m in t] == [2_000.0, 2_000.0]  # the next one's at the start
    assert store.get_session("t").started_at == 2_000.0  # type: ignore[union-attr]
    assert store.get_session("u").started_at == path.stat().st_mtime  # type: ignore[union-attr]
    assert dict(report.undated) == {"neighbour": 2, "file": 1}
    assert "2 without a timestamp dated by their neighbours" in report.summary()
    assert "1 without any timestamp dated by the file's time" in report.summary()
