"""What the commands print for people: rich panels, tables and lines.

Stored text is never read as rich markup or passed to the terminal raw: escape sequences,
control characters and bidirectional overrides are removed first
(:func:`~langchain_session_recall.core.text.safe_for_terminal`; a transcript may hold a tool's
coloured output, or anything another program wrote). Widths are measured in terminal cells,
so CJK text (two cells a character) fits its box. Colour follows the terminal (``NO_COLOR``
and ``FORCE_COLOR`` are honoured); without a terminal the text is plain.

JSON output does not come through here (``--json`` never imports rich).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TextIO

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from langchain_session_recall.core.query import highlight_words, parse_query
from langchain_session_recall.core.text import human_size
from langchain_session_recall.core.text import safe_for_terminal as clean
from langchain_session_recall.recall.build import Result
from langchain_session_recall.recall.model import RecalledSession
from langchain_session_recall.recall.render import (
    Piece,
    text_pieces,
    transcript_pieces,
    window_pieces,
)
from langchain_session_recall.recall.transcript import (
    EARLIER_MARKER,
    LATER_MARKER,
    Transcript,
    term_pattern,
)

__all__ = [
    "clean",
    "make_console",
    "print_check",
    "print_import_report",
    "print_lines",
    "print_recent",
    "print_search",
    "print_show",
    "print_sources",
    "print_stats",
    "where_facts",
]

MATCH_STYLE = "bold black on yellow"
_PREVIEW = 100  # characters of a session's first message in the recent table
_ROLE_STYLES = {"USER": "bold cyan", "ASSISTANT": "bold green", "SYSTEM": "bold", "TOOL": "magenta"}
_STYLES: dict[str, str | None] = {"session": "dim", "marker": "dim italic", "text": None}
_MARKERS = re.compile(
    "|".join(re.escape(m.strip()) for m in (EARLIER_MARKER, LATER_MARKER, "...[truncated]..."))
)


def make_console(out: TextIO) -> Console:
    """A console writing to ``out``: the terminal's width there, else ``$COLUMNS`` or 80."""
    return Console(file=out, highlight=False, markup=False, emoji=False, soft_wrap=False)


def print_lines(console: Console, lines: Iterable[str | Text]) -> None:
    """Plain lines, never wrapped (copy-paste and ``grep`` keep them whole)."""
    for line in lines:
        text = line if isinstance(line, Text) else Text(clean(line))
        console.print(text, soft_wrap=True)


# ----------------------------------------------------------------------------- transcripts


def _transcript(pieces: Sequence[Piece], words: Sequence[str] = ()) -> Text:
    """A transcript with role tags, chain markers and the matched words styled."""
    body = Text()
    for piece in pieces:
        style = _ROLE_STYLES.get(piece.role or "") if piece.kind == "tag" else _STYLES[piece.kind]
        body.append(clean(piece.text), style=style)
    body.highlight_regex(_MARKERS, "dim italic")  # a tool output's own "...[truncated]..."
    pattern = term_pattern(words)
    if pattern is not None:
        body.highlight_regex(pattern, MATCH_STYLE)
    return body


def _pieces(result: Result) -> list[Piece]:
    """A result's text as pieces: rendered from the window it carries, or read from its text
    when that is not the window's render (a recap)."""
    recalled = RecalledSession.from_metadata(result.metadata)
    if recalled is not None and len(recalled.windows) == 1:
        pieces = window_pieces(recalled.windows[0], ids_shown=recalled.ids_shown)
        if "".join(p.text for p in pieces) == result.page_content:
            return pieces
    return text_pieces(result.page_content)


def _words(meta: Mapping[str, Any]) -> tuple[str, ...]:
    query = meta.get("query") or ""
    if not query.strip():
        return ()
    # the metadata says the words searched instead as text ("config, cach"): its public form
    said: Mapping[str, str] = meta.get("query_expansions") or {}
    instead = {key: tuple(w.strip() for w in words.split(",")) for key, words in said.items()}
    try:
        return highlight_words(parse_query(query), instead)
    except ValueError:  # nothing searchable (the search would have said so)
        return ()


def where_facts(meta: Mapping[str, Any]) -> list[str]:
    """Where the session happened, as far as it is known: its directory (branch), its agent.

    Example:
        >>> where_facts({"project": "/src/api", "git_branch": "main", "agent": "codex"})
        ['/src/api (main)', 'codex']
    """
    where = []
    if meta.get("project"):
        branch = f" ({meta['git_branch']})" if meta.get("git_branch") else ""
        where.append(f"{meta['project']}{branch}")
    if meta.get("agent"):
        where.append(str(meta["agent"]))
    return where


def _facts(meta: Mapping[str, Any]) -> Text:
    facts = [f"session {meta['session_id']}", str(meta.get("when") or ""), meta.get("source")]
    if meta.get("user_id"):
        facts.append(f"user {meta['user_id']}")
    facts += where_facts(meta)
    if meta.get("mode") == "search":
        facts.append(f"score {float(meta.get('score') or 0):.2f}")
        count = int(meta.get("match_count") or 0)
        facts.append(f"{count} matching message{'s' if count != 1 else ''}")
    if meta.get("summary_status"):
        facts.append(f"recap: {meta['summary_status']}")
    return Text(clean(" · ".join(str(f) for f in facts if f)), style="dim")


def _panel(index: int, result: Result) -> Panel:
    meta = result.metadata
    title = Text(f"{index}. {clean(meta.get('title') or '(untitled session)')}", style="bold")
    words = () if meta.get("summary_status") else _words(meta)
    resume = [Text(clean(f"resume: {meta['resume']}"), style="dim")] if meta.get("resume") else []
    body = Group(_facts(meta), *resume, Text(""), _transcript(_pieces(result), words))
    return Panel(body, title=title, title_align="left", box=box.ROUNDED, padding=(0, 1))


def _notes(results: Sequence[Result]) -> list[Text]:
    """What the search did beyond the words as typed (corrections, a looser reading)."""
    if not results:
        return []
    meta = results[0].metadata
    notes = []
    expansions: Mapping[str, str] = meta.get("query_expansions") or {}
    if expansions:
        said = ", ".join(f"{typed} → {searched}" for typed, searched in expansions.items())
        notes.append(Text(clean(f"No exact match; searched instead: {said}"), style="yellow"))
    if meta.get("query_reading") == "relaxed":
        notes.append(
            Text(
                "Nothing matched the query as written; showing sessions with any of its words.",
                style="yellow",
            )
        )
    return notes


def _line(index: int, result: Result) -> Text:
    """A session in one line: its rank, title and facts (``show ID`` prints the rest)."""
    meta = result.metadata
    title = clean(meta.get("title") or "(untitled session)")
    facts = [f"session {meta['session_id']}", str(meta.get("when") or "")]
    if meta.get("mode") == "search":
        facts.append(f"score {float(meta.get('score') or 0):.2f}")
    return Text.assemble((f"{index}. {title}", "bold"), "  ", (clean(" · ".join(facts)), "dim"))


def print_search(
    console: Console,
    results: Sequence[Result],
    *,
    mode: str = "lexical",
    panels: int | None = None,
) -> None:
    """One panel per session, its transcript cut around the first match, matches highlighted;
    the line above them says how the search ran (``mode``: ``lexical`` or ``hybrid``).

    ``panels``: how many of the best sessions get a panel (``None``: all); the others get one
    line each (the demo shows its weaker hits so).
    """
    if not results:
        console.print(f"No matching sessions ({mode} search).")
        return
    print_lines(console, _notes(results))
    found = int(results[0].metadata.get("sessions_searched") or len(results))
    shown = f"{len(results)} of {found}" if found > len(results) else str(len(results))
    count = f"{shown} matching session{'s' if found != 1 else ''}"
    console.print(Text(f"{count} ({mode} search)", style="dim"))
    for index, result in enumerate(results, 1):
        full = panels is None or index <= panels
        console.print(_panel(index, result) if full else _line(index, result))
    if panels is not None and len(results) > panels:
        console.print(Text("session-recall show ID prints a whole session", style="dim"))


def print_recent(console: Console, results: Sequence[Result]) -> None:
    """Recent sessions as a table: start, source, message count, title, id and preview."""
    if not results:
        console.print("No sessions.")
        return
    table = Table(box=box.SIMPLE_HEAD, expand=True, show_edge=False, pad_edge=False)
    table.add_column("#", justify="right", style="dim", no_wrap=True)
    table.add_column("started", no_wrap=True)
    table.add_column("source", no_wrap=True)
    table.add_column("msgs", justify="right", no_wrap=True)
    table.add_column("session", ratio=1)
    for index, result in enumerate(results, 1):
        meta = result.metadata
        cell = Text(clean(meta.get("title") or "(untitled session)"), style="bold")
        cell.append("\n" + clean(str(meta["session_id"])), style="dim")
        for line in (" · ".join(where_facts(meta)), meta.get("resume")):
            if line:
                cell.append("\n" + clean(str(line)), style="dim")
        preview = clean(str(meta.get("preview") or ""))
        if preview:
            short = preview if len(preview) <= _PREVIEW else preview[: _PREVIEW - 1] + "…"
            cell.append("\n" + short)
        when = str(meta.get("when") or "").removesuffix(" UTC")
        table.add_row(
            str(index), when, clean(str(meta.get("source"))), str(meta.get("message_count")), cell
        )
    console.print(table)


# ----------------------------------------------------------------------------- show


def print_show(
    console: Console, head: Sequence[str], transcript: Transcript, *, pager: bool, out: TextIO
) -> None:
    """A session's head lines and transcript; through a pager on a terminal when taller."""
    lines = [Text(clean(head[0]), style="bold"), *(Text(clean(h), style="dim") for h in head[1:])]
    body = _transcript(transcript_pieces(transcript, ids_shown=True))
    import shutil  # (shutil loads compression modules: only here)

    tall = len(lines) + transcript.text.count("\n") + 2 > shutil.get_terminal_size((100, 40)).lines
    if pager and tall and out is sys.stdout and out.isatty():
        os.environ.setdefault("LESS", "FRX")  # less: keep colours, quit when it fits
        with console.pager(styles=True):
            _show(console, lines, body)
    else:
        _show(console, lines, body)


def _show(console: Console, lines: Sequence[Text], body: Text) -> None:
    print_lines(console, lines)
    console.print()
    console.print(body)


# ----------------------------------------------------------------------------- stats, check, import


def print_stats(console: Console, rows: Sequence[tuple[str, str]]) -> None:
    """``Label     value`` lines."""
    print_lines(console, (Text.assemble((f"{k:<9}", "bold"), " ", clean(v)) for k, v in rows))


def print_check(
    console: Console, where: str, ok: bool, checked: Sequence[str], problems: Sequence[str]
) -> None:
    """The verdict, what was checked and each problem."""
    verdict = Text("ok", style="green") if ok else Text("PROBLEMS FOUND", style="bold red")
    lines: list[Text] = [Text.assemble(clean(where), ": ", verdict)]
    lines += [Text(f"  checked {clean(item)}") for item in checked]
    lines += [Text(f"  problem: {clean(p)}", style="red") for p in problems]
    print_lines(console, lines)


def print_import_report(
    console: Console, summary: str, problems: Sequence[str], shown: int
) -> None:
    """The report's summary line and the first ``shown`` skipped items."""
    lines = [Text(clean(summary))]
    lines += [Text(f"  skipped {clean(p)}", style="yellow") for p in problems[:shown]]
    hidden = len(problems) - shown
    if hidden > 0:
        lines.append(Text(f"  ... {hidden} more (use --json to see them all)", style="dim"))
    print_lines(console, lines)


def print_sources(console: Console, rows: Sequence[tuple[str, str, int, int]]) -> None:
    """The agents' histories ``import auto`` found: agent, path, sessions and size."""
    if not rows:
        console.print("No agent history found.")
        return
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("agent", no_wrap=True)
    table.add_column("path", overflow="fold")
    table.add_column("sessions", justify="right", no_wrap=True)
    table.add_column("size", justify="right", no_wrap=True)
    for agent, path, sessions, size in rows:
        table.add_row(clean(agent), clean(path), str(sessions), human_size(size))
    console.print(table)
