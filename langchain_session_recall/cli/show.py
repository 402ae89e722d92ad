"""``show``: one session's whole transcript, with its sub-sessions."""

from __future__ import annotations

import dataclasses

import click

from langchain_session_recall.backends import describe_target
from langchain_session_recall.cli.options import (
    db_option,
    json_option,
    read_only_option,
    user_option,
)
from langchain_session_recall.cli.state import (
    DEMO_SHOW_ID,
    EXIT_EMPTY,
    EXIT_OK,
    State,
    open_db,
    pass_state,
)
from langchain_session_recall.core.redaction import match_shown_id, redact_secrets
from langchain_session_recall.core.where import where_fields
from langchain_session_recall.recall.build import redact_messages, redact_session

__all__ = ["show"]


@click.command(
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
    from langchain_session_recall.recall.transcript import format_transcript, format_when

    with open_db(db, read_only) as store:
        session = store.get_session(session_id)
        if session is None and "[REDACTED" in session_id:  # an id as results show it
            real = match_shown_id(session_id, store.all_session_ids())
            session = store.get_session(real) if real is not None else None
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
            shown_id = redact_secrets(session_id)
            click.echo(
                f"session-recall: no session {shown_id!r}{whose} in {describe_target(db)}",
                err=True,
            )
            return EXIT_EMPTY
        messages = [m for sid in ids for m in store.get_messages(sid)]
        messages.sort(key=lambda m: (m.timestamp, m.id))
        messages = redact_messages(messages, redact_secrets)
        parent = session.parent_session_id
        if parent is not None and user is not None:
            owner = store.get_session(parent)
            parent = parent if owner is not None and owner.user_id == user else None
        root = store.root_of(session.id, user_id=user) if parent is not None else None
        # what is shown: text and identifiers redacted (a key in an id, a source, a model)
        session = redact_session(session, redact_secrets)
        ids = [redact_secrets(i) for i in ids]
        parent, root = (redact_secrets(i) if i is not None else None for i in (parent, root))
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
    from langchain_session_recall.cli.output import print_show, where_facts

    where = where_fields(session.id, session.project, session.git_branch, session.agent)
    head += [line for line in (" · ".join(where_facts(where)), where["resume"]) if line]
    if parent is not None:
        head.append(f"parent {parent} (root {root})")
    if len(ids) > 1:
        head.append(f"includes {len(ids) - 1} sub-session(s): {', '.join(ids[1:])}")
    transcript = format_transcript(messages, show_ids=True, root_id=session.id)
    print_show(state.console(), head, transcript, pager=not no_pager, out=state.out)
    return EXIT_OK
