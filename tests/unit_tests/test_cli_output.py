"""What the CLI prints: panels around the match, highlighting, CJK widths, notes, JSON."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from cli_support import run_cli
from rich.cells import cell_len

from langchain_session_recall import SessionStore
from langchain_session_recall.cli import EXIT_DB, EXIT_EMPTY, EXIT_OK, EXIT_PARTIAL

DATA = Path(__file__).resolve().parents[1] / "data"
PGBOUNCER = "20261105_112048_f00d42"
CJK = "20261118_153009_c4e5f6"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _plain(text: str) -> str:
    return _ANSI.sub("", text)


# --------------------------------------------------------------------------- the match is shown


def test_search_panel_shows_the_window_around_the_first_match(demo_db: str) -> None:
    result = run_cli("search", "pool_mode", "--db", demo_db)
    assert result.code == EXIT_OK
    assert PGBOUNCER in result.out
    assert "pool_mode" in result.out


def test_a_match_deep_in_a_long_message_is_in_the_panel(tmp_path: Path) -> None:
    db = tmp_path / "long.db"
    with SessionStore(db) as store:
        store.add_session("long", title="A long log")
        filler = "lorem ipsum dolor sit amet " * 150  # ~4000 characters before the match
        text = f"{filler} the culprit was zeppelin_timeout=30 in the config {filler}"
        store.add_messages("long", [{"role": "tool", "content": "x"}])
        store.add_messages("long", [{"role": "user", "content": text}])
    result = run_cli("search", "zeppelin_timeout", "--db", str(db))
    assert result.code == EXIT_OK
    assert "zeppelin_timeout=30" in result.out


def test_matched_terms_are_highlighted(demo_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    result = run_cli("search", "pool_mode", "--db", demo_db, "-k", "1")
    assert result.code == EXIT_OK
    # the match is wrapped in a style of its own: an escape sequence right before it
    assert re.search(r"\x1b\[[0-9;]*m(?i:pool_mode)", result.out), result.out


def test_no_colour_without_a_terminal(demo_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    result = run_cli("search", "pool_mode", "--db", demo_db, "-k", "1")
    assert "\x1b[" not in result.out


def test_typo_correction_is_said(demo_db: str) -> None:
    result = run_cli("search", "pgbouncr", "--db", demo_db, "-k", "1")
    assert result.code == EXIT_OK
    assert re.search(r"pgbouncr\W+pgbouncer", result.out), result.out


def test_transcript_text_is_not_read_as_markup_or_terminal_codes(tmp_path: Path) -> None:
    db = tmp_path / "markup.db"
    with SessionStore(db) as store:
        store.add_session("m", title="[bold]not markup[/bold]")
        store.add_messages(
            "m", [{"role": "user", "content": "quokka [red]stays[/red] \x1b[2Jclear \x07bell"}]
        )
    result = run_cli("search", "quokka", "--db", str(db))
    assert result.code == EXIT_OK
    assert "[red]stays[/red]" in result.out and "[bold]not markup[/bold]" in result.out
    assert "\x1b" not in result.out and "\x07" not in result.out


# --------------------------------------------------------------------------- widths


def _assert_fits(out: str, width: int) -> None:
    lines = _plain(out).splitlines()
    assert lines
    too_wide = [line for line in lines if cell_len(line) > width]
    assert not too_wide, too_wide
    # box lines close on the same column as they open
    for line in lines:
        if line[:1] in "╭╰":
            assert cell_len(line) == width, line


def test_cjk_titles_fit_the_box(demo_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    result = run_cli("search", "服务端 部署", "--db", demo_db, "-k", "1")
    assert result.code == EXIT_OK and CJK in result.out
    _assert_fits(result.out, 80)
    recent = run_cli("recent", "--db", demo_db, "-k", "5")
    assert "ログローテーションの設定" in recent.out or "修改youer" in recent.out
    _assert_fits(recent.out, 80)


@pytest.mark.parametrize("columns", [60, 100, 140])
def test_panels_follow_the_width(
    demo_db: str, monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    result = run_cli("search", "CORS nginx", "--db", demo_db)
    _assert_fits(result.out, columns)


# --------------------------------------------------------------------------- --json


def _json_argvs(demo_db: str, tmp_path: Path) -> list[list[str]]:
    target = str(tmp_path / "imported.db")
    return [
        ["search", "pool_mode", "--db", demo_db],
        ["search", "zzzqqq", "--db", demo_db],
        ["recent", "--db", demo_db],
        ["show", PGBOUNCER, "--db", demo_db],
        ["show", "no-such-session", "--db", demo_db],
        ["stats", "--db", demo_db],
        ["check", "--db", demo_db],
        ["import", "jsonl", str(DATA / "jsonl"), "--db", target],
        ["import", "sqlite", demo_db, "--db", target],
        ["demo", "--db", str(tmp_path / "demo.db")],
        ["demo", "--db", str(tmp_path / "demo.db"), "--query", "CORS"],
    ]


def test_every_command_prints_one_json_document(demo_db: str, tmp_path: Path) -> None:
    for argv in _json_argvs(demo_db, tmp_path):
        result = run_cli(*argv, "--json")
        assert result.code in (EXIT_OK, EXIT_EMPTY, EXIT_PARTIAL), (argv, result.err)
        json.loads(result.out)  # one document: a second one or a text line would not parse


def test_json_of_nothing_found(demo_db: str) -> None:
    result = run_cli("search", "zzzqqq", "--db", demo_db, "--json")
    assert (result.code, json.loads(result.out)) == (EXIT_EMPTY, [])
    result = run_cli("show", "no-such-session", "--db", demo_db, "--json")
    assert result.code == EXIT_EMPTY
    assert json.loads(result.out) == {"session": None, "sessions": [], "messages": []}


def test_json_errors_leave_stdout_empty(tmp_path: Path) -> None:
    result = run_cli("stats", "--db", str(tmp_path / "missing.db"), "--json")
    assert result.code == EXIT_DB and result.out == ""
    assert "no such file" in result.err


def test_demo_json_holds_every_search_and_the_recent_sessions(tmp_path: Path) -> None:
    result = run_cli("demo", "--db", str(tmp_path / "demo.db"), "--json", "-k", "1")
    assert result.code == EXIT_OK
    payload = json.loads(result.out)
    assert payload["database"] == str(tmp_path / "demo.db")
    assert len(payload["searches"]) == 4
    assert all(len(s["results"]) == 1 for s in payload["searches"])
    assert payload["recent"] and payload["recent"][0]["metadata"]["mode"] == "recent"


def test_chars_applies_under_json_around_the_match(demo_db: str) -> None:
    whole = json.loads(run_cli("search", "pool_mode", "--db", demo_db, "--json", "-k", "1").out)
    cut = json.loads(
        run_cli("search", "pool_mode", "--db", demo_db, "--json", "-k", "1", "--chars", "300").out
    )
    assert len(whole[0]["content"]) > 1000  # without --chars: the whole transcript
    content = cut[0]["content"]
    assert "pool_mode" in content
    assert cut[0]["metadata"]["truncated"] is True
    body = content.replace("...[earlier conversation truncated]...", "").replace(
        "...[later conversation truncated]...", ""
    )
    assert len(body.strip()) <= 300


def test_an_empty_query_lists_recent_sessions_as_the_retriever_does(demo_db: str) -> None:
    result = run_cli("search", "", "--db", demo_db, "--json", "-k", "2")
    assert result.code == EXIT_OK, result.err
    assert [d["metadata"]["mode"] for d in json.loads(result.out)] == ["recent", "recent"]
    text = run_cli("search", "  ", "--db", demo_db, "-k", "2")
    assert text.code == EXIT_OK and "session" in text.out
    # text with nothing searchable in it is a usage error, said as such
    bad = run_cli("search", "?!", "--db", demo_db)
    assert bad.code == 2 and "nothing to search" in bad.err


def test_json_stays_strict_when_a_stored_time_is_infinite(tmp_path: Path) -> None:
    """Another program stored an infinite timestamp: --json prints null there, never
    ``Infinity`` (which strict JSON parsers refuse)."""
    db = tmp_path / "inf.db"
    with SessionStore(db) as store:
        store.add_session("s1")
        store.add_messages("s1", [{"role": "user", "content": "nginx timeout fix"}])
    with sqlite3.connect(db) as conn:  # what another program may write
        conn.execute("UPDATE sessions SET started_at = 9e999")
        conn.execute("UPDATE messages SET timestamp = 9e999")
    conn.close()
    for argv in (["recent"], ["search", "nginx"], ["show", "s1"], ["stats"]):
        result = run_cli(*argv, "--db", str(db), "--json")
        assert result.code == EXIT_OK, (argv, result.err)
        constants: list[str] = []
        json.loads(result.out, parse_constant=constants.append)
        assert constants == [], argv


# --------------------------------------------------------------------------- terminal injection

_CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # OSC 52: sets the clipboard of the terminal
_HOSTILE = (
    f"quokka {_CLIPBOARD}\x1b[2J\x1b]8;;https://evil.example\x07click\x1b]8;;\x07"
    " \x9b31mred\x9b0m \u202eexe.txt\u202c \u2066isolated\u2069 \x85\x7f"
)
_ACTED_ON = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What a terminal acts on: controls but newline and tab, DEL, C1, bidirectional overrides."""


def _strings(value: object) -> list[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [text for item in items for text in _strings(item)]


def _hostile_store(path: Path) -> None:
    with SessionStore(path) as store:
        store.add_session("s1", title=f"quokka {_HOSTILE}", source="cli")
        store.add_messages("s1", [{"role": "user", "content": _HOSTILE}])


@pytest.mark.parametrize(
    "argv",
    [["search", "quokka"], ["recent"], ["show", "s1"], ["stats"]],
    ids=["search", "recent", "show", "stats"],
)
def test_nothing_a_terminal_acts_on_is_printed(argv: list[str], tmp_path: Path) -> None:
    # Rich output stripped ESC and C0/C1 controls but let the bidirectional overrides through
    # (U+202E shows 'txt.exe' as 'exe.txt'); --json escaped C0 only (json.dumps with
    # ensure_ascii=False leaves C1 controls and bidi overrides raw).
    db = tmp_path / "hostile.db"
    _hostile_store(db)
    for flags in ([], ["--json"]):
        result = run_cli(*argv, *flags, "--db", str(db))
        assert result.code == EXIT_OK, result.err
        printed = result.out + result.err
        assert not _ACTED_ON.findall(printed), (flags, _ACTED_ON.findall(printed))
        if flags and argv[0] != "stats":  # the JSON still holds every character, escaped
            assert "\\u202e" in result.out and "\\u009b" in result.out
            assert any(_HOSTILE in text for text in _strings(json.loads(result.out)))


def test_a_foreign_file_cannot_write_to_the_terminal_through_an_error(tmp_path: Path) -> None:
    # The table names of another program's file were printed raw on stderr in the "not a
    # session database" message: an OSC 52 name set the clipboard, another cleared the screen.
    db = tmp_path / "app.db"
    conn = sqlite3.connect(db)
    for name in (f"t{_CLIPBOARD}", "t\x1b[2J\x1b[H", "t\x1b]8;;https://evil.example\x07x\u202e"):
        conn.execute(f'CREATE TABLE "{name}" (a)')
    conn.commit()
    conn.close()
    for argv in (["stats"], ["search", "x", "--read-only"], ["search", "x", "--json"]):
        result = run_cli(*argv, "--db", str(db))
        assert result.code == EXIT_DB, result.err
        assert "not a session database" in result.err
        assert not _ACTED_ON.findall(result.err), _ACTED_ON.findall(result.err)


def test_usage_errors_do_not_echo_controls(demo_db: str) -> None:
    result = run_cli("search", "x", "--after", f"soon{_CLIPBOARD}\u202e", "--db", demo_db)
    assert result.code == 2 and "--after" in result.err
    assert not _ACTED_ON.findall(result.err), _ACTED_ON.findall(result.err)


def test_json_items_carry_the_session_id_at_the_top(demo_db: str) -> None:
    # the id a script passes to `show` without digging into metadata (a Document's .id too)
    for command in (("search", "nginx CORS"), ("recent",)):
        items = json.loads(run_cli(*command, "--db", demo_db, "--json").out)
        assert items, command
        for item in items:
            assert list(item)[:1] == ["id"], item.keys()
            assert item["id"] == item["metadata"]["session_id"]
            shown = run_cli("show", item["id"], "--db", demo_db, "--json")
            assert json.loads(shown.out)["session"]["id"] == item["id"]
