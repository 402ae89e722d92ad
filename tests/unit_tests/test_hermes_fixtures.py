"""The Hermes fixture builder writes the three FTS layouts faithfully."""

import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hermes_fixtures import MARKERS, NEWER_COLUMNS, build_hermes_db

EXPECTED_OBJECTS = {
    1: {"sessions", "messages", "messages_fts", "schema_version"},
    2: {"sessions", "messages", "messages_fts", "messages_fts_content", "schema_version"},
    3: {"sessions", "messages", "messages_fts", "messages_fts_src", "schema_version"},
}
FTS_DDL = {
    1: "fts5(content, content=messages, content_rowid=id)",
    2: "fts5(content)",
    3: "fts5(content, tool_name, tool_calls, content='messages_fts_src', content_rowid='id')",
}


def _build(tmp_path: Path, layout: int, **kwargs: object) -> sqlite3.Connection:
    path = tmp_path / f"state{layout}.db"
    build_hermes_db(path, layout, **kwargs)  # type: ignore[arg-type]
    return sqlite3.connect(path)


def _hits(conn: sqlite3.Connection, word: str) -> list[int]:
    sql = "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?"
    return [r[0] for r in conn.execute(sql, (word,))]


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


@pytest.mark.parametrize("layout", [1, 2, 3])
def test_layout_has_expected_tables(tmp_path: Path, layout: int) -> None:
    conn = _build(tmp_path, layout)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert EXPECTED_OBJECTS[layout] <= names
    fts_sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'messages_fts'").fetchone()[
        0
    ]
    assert FTS_DDL[layout] in fts_sql
    assert "porter" not in fts_sql
    assert {"active", "compacted", "display_kind"} <= _columns(conn, "messages")


@pytest.mark.parametrize("layout", [1, 2, 3])
def test_raw_match_finds_rows(tmp_path: Path, layout: int) -> None:
    conn = _build(tmp_path, layout)
    rows = conn.execute(
        "SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'nginx'"
    ).fetchall()
    assert rows
    ids = {r[0] for r in conn.execute("SELECT id FROM messages")}
    assert {r[0] for r in rows} <= ids
    conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")


@pytest.mark.parametrize("layout", [1, 2, 3])
def test_hermes_only_rows_are_flagged(tmp_path: Path, layout: int) -> None:
    conn = _build(tmp_path, layout)

    def flags(word: str) -> tuple[int, int, str | None]:
        (rowid,) = _hits(conn, word)
        return conn.execute(
            "SELECT active, compacted, display_kind FROM messages WHERE id = ?", (rowid,)
        ).fetchone()

    assert flags(MARKERS["rewound"]) == (0, 0, None)
    assert flags(MARKERS["hidden"]) == (1, 0, "hidden")
    assert flags(MARKERS["json_parts"])[0] == 1
    (rowid,) = _hits(conn, MARKERS["json_parts"])
    content = conn.execute("SELECT content FROM messages WHERE id = ?", (rowid,)).fetchone()[0]
    assert content.startswith("\x00json:[")
    compacted = _hits(conn, MARKERS["compacted"])
    assert compacted
    assert all(
        conn.execute("SELECT active, compacted FROM messages WHERE id = ?", (r,)).fetchone()
        == (0, 1)
        for r in compacted
    )


def test_layout_3_cuts_tool_content(tmp_path: Path) -> None:
    assert _hits(_build(tmp_path, 1), MARKERS["beyond_8192"])
    assert _hits(_build(tmp_path, 2), MARKERS["beyond_8192"])
    assert not _hits(_build(tmp_path, 3), MARKERS["beyond_8192"])


def test_layout_2_indexes_tool_names(tmp_path: Path) -> None:
    assert _hits(_build(tmp_path, 2), "terminal")
    assert not _hits(_build(tmp_path, 1), "terminal")


@pytest.mark.parametrize("layout", [1, 2, 3])
def test_older_file_lacks_newer_columns(tmp_path: Path, layout: int) -> None:
    conn = _build(tmp_path, layout, older=True)
    for table, cols in NEWER_COLUMNS.items():
        assert not set(cols) & _columns(conn, table)
    assert not _hits(conn, MARKERS["rewound"])
    assert _hits(conn, "nginx")


@pytest.mark.parametrize("wal", [True, False])
def test_closed_cleanly(tmp_path: Path, wal: bool) -> None:
    conn = _build(tmp_path, 3, wal=wal)
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    conn.close()
    assert mode == ("wal" if wal else "delete")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state3.db"]


def test_no_wal_file_left_after_build(tmp_path: Path) -> None:
    build_hermes_db(tmp_path / "s.db", 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.db"]


def test_rejects_unknown_layout(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="layout"):
        build_hermes_db(tmp_path / "s.db", 4)
