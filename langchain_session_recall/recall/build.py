"""One search or one browse as plain results: each root session's text and metadata.

:class:`~langchain_session_recall.retriever.SessionRecallRetriever` wraps each :class:`Result`
in a LangChain ``Document``; the ``session-recall`` command prints them as they are, so a search
from the shell never imports LangChain. Arguments are taken as given (the retriever checks and
normalizes them first).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.core.automation import AUTOMATION_SOURCES
from langchain_session_recall.core.headers import session_header
from langchain_session_recall.core.query import highlight_words
from langchain_session_recall.core.redaction import SecretRedactor
from langchain_session_recall.core.where import where_fields
from langchain_session_recall.models import Session, StoredMessage
from langchain_session_recall.recall import render
from langchain_session_recall.recall.chain_part import ChainChangedError, ChainPart, window_fits
from langchain_session_recall.recall.evidence import (
    MORE_TERMS,
    Evidence,
    evidence_words,
    surviving_evidence,
)
from langchain_session_recall.recall.metadata import (
    RecentMetadata,
    SearchMetadata,
    TimeHintMetadata,
)
from langchain_session_recall.recall.model import Window, recalled_session, shown_window
from langchain_session_recall.recall.tool_calls import redact_tool_calls
from langchain_session_recall.recall.transcript import (
    Transcript,
    format_transcript,
    format_when,
    match_position,
    part_window_bounds,
    term_pattern,
)
from langchain_session_recall.search.dense import DenseSearch
from langchain_session_recall.search.pipeline import SearchOutcome, rank_prepared
from langchain_session_recall.search.ranking import RankedSession
from langchain_session_recall.search.request import PreparedSearch, SearchRequest, as_request

__all__ = [
    "Result",
    "recall",
    "recall_prepared",
    "recent_results",
    "redact_messages",
    "redact_session",
    "search_results",
]


@dataclass(frozen=True, slots=True)
class Result:
    """One root session: ``page_content`` and ``metadata`` as a ``Document`` carries them."""

    page_content: str
    metadata: dict[str, Any] = field(default_factory=dict)


def recall(
    store: SessionBackend,
    request: SearchRequest,
    *,
    redact: Callable[[str], str] | None = None,
    dense: DenseSearch | None = None,
) -> list[Result]:
    """What every surface shows for one request: a search, or recent sessions for an empty
    query. The retriever, the ``session_search`` tool (through the retriever), the CLI and the
    MCP server all call this. ``dense``: the dense half of a hybrid search (the retriever's).

    Example:
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> _ = store.add_session("s1", title="CORS")
        >>> [r.metadata["mode"] for r in recall(store, SearchRequest(""))]
        ['recent']
    """
    prepared = None if request.browse else request.prepare(store.prefix_completions)
    return recall_prepared(store, request, prepared, redact=redact, dense=dense)


def recall_prepared(
    store: SessionBackend,
    request: SearchRequest,
    prepared: PreparedSearch | None,
    *,
    redact: Callable[[str], str] | None = None,
    dense: DenseSearch | None = None,
    k: int | None = None,
) -> list[Result]:
    """:func:`recall` for a request whose query the caller has read
    (:meth:`~langchain_session_recall.search.request.SearchRequest.prepare`; ``None``: a browse):
    the retriever reads it first, to choose the search's inputs (a hybrid search or not, the
    text embedded and reranked), and hands it down. ``k``: how many results to build
    (``None``: the request's; a retriever with a reranker asks for its ``rerank_top_n``)."""
    if prepared is None:
        return _recent(store, request, redact, k)
    return _found(store, prepared, redact, dense, k)


def search_results(
    store: SessionBackend,
    request: SearchRequest | str,
    *,
    redact: Callable[[str], str] | None = None,
    dense: DenseSearch | None = None,
    **changes: Any,
) -> list[Result]:
    """The ``k`` best root sessions for the request's query, each cut to ``max_chars`` around
    its matches (``None``: the whole transcript).

    ``request`` is a :class:`~langchain_session_recall.search.request.SearchRequest`, or the
    query text of one with its defaults; ``changes`` set its fields (``k=5``).
    Raises :class:`~langchain_session_recall.errors.EmptyQueryError` when the query has
    nothing searchable. Metadata: see the retriever (``mode="search"``). ``redact`` (e.g.
    :func:`~langchain_session_recall.redact_secrets`) is applied to the text of every message
    a result shows or matched before the transcript is formatted and cut (messages the window
    cannot reach are left alone: nothing of them is shown), and to the title and the echoed
    query.

    Example:
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> _ = store.add_session("s1", title="CORS")
        >>> _ = store.add_messages("s1", [{"role": "user", "content": "CORS error in nginx"}])
        >>> [r.metadata["session_id"] for r in search_results(store, "the CORS error", k=3)]
        ['s1']
    """
    request = as_request(request, **changes)
    prepared = request.prepare(store.prefix_completions)
    return _found(store, prepared, redact, dense, None)


def _found(
    store: SessionBackend,
    prepared: PreparedSearch,
    redact: Callable[[str], str] | None,
    dense: DenseSearch | None,
    k: int | None,
) -> list[Result]:
    """The results of a search (see :func:`search_results`): ``k`` of them (``None``: the
    request's)."""
    request = prepared.request
    outcome = rank_prepared(store, prepared, dense=dense)
    build = _SearchResult(
        store, prepared.query.text, outcome, request.user_id, request.max_chars,
        request.show_message_ids, redact,
    )  # fmt: skip
    results: list[Result] = []
    ranked, taken = outcome.sessions, 0
    # Past the k-th when a session's only evidence was redacted (see evidence.py): the next one
    # takes its place. Nothing is redacted away on an ordinary search: one pass of k.
    k = request.k if k is None else k
    while len(results) < k and taken < len(ranked):
        chosen = ranked[taken : taken + k - len(results)]
        taken += len(chosen)
        sessions = store.get_sessions(r.root_id for r in chosen)
        for r in chosen:
            if r.root_id in sessions:  # a root deleted meanwhile has nothing to show
                result = build(r, sessions[r.root_id])
                results += [result] if result is not None else []
    return build.finish(results)


@dataclass
class _SearchResult:
    store: SessionBackend
    query: str
    outcome: SearchOutcome
    user_id: str | None
    max_chars: int | None
    show_message_ids: bool
    redact: Callable[[str], str] | None = None

    def __post_init__(self) -> None:
        words = highlight_words(self.outcome.query, self.outcome.expansions)
        self.pattern = term_pattern(words)
        query, expansions = self.outcome.query, self.outcome.expansions
        self.words = evidence_words(query, expansions) if self.redact is not None else {}
        self.dropped = 0
        self.seen: set[str] = set()

    def __call__(self, ranked: RankedSession, session: Session) -> Result | None:
        """The session's result; ``None`` when redaction removed all its evidence."""
        try:
            part = self._chain_part(ranked)
            return self._result(ranked, session, part)
        except ChainChangedError:  # a message deleted between two reads: read it whole
            whole = self.store.chain_messages(ranked.root_id, user_id=self.user_id)
            return self._result(ranked, session, ChainPart.of(whole))

    def _chain_part(self, ranked: RankedSession) -> ChainPart:
        """The chain's order, and the messages around its matches read (all of them when the
        whole transcript is shown)."""
        order = self.store.chain_outline(ranked.root_id, user_id=self.user_id)
        index = {mid: i for i, (mid, _) in enumerate(order)}
        matched = [m for m in ranked.message_ids if m in index]
        around = sorted(index[m] for m in matched)
        if matched and matched[0] == ranked.message_ids[0]:
            # the window holds the best match (match_position's anchor): the run starts around
            # it alone, the other matches read for their evidence (see _placed)
            around = [index[matched[0]]]
        read = self.store.chain_messages_by_id
        return ChainPart(order, read, around=around, whole=self.max_chars is None, also=matched)

    def _result(self, ranked: RankedSession, session: Session, part: ChainPart) -> Result | None:
        clean = _memo(self.redact)
        stored = part.some(ranked.message_ids)  # the matched messages, wherever they are
        view = _RedactedView(part, self.redact)
        messages = view.redacted(stored)  # what evidence needs: the matches
        shown = redact_session(session, clean)  # identifiers too: a key in an id or a source
        evidence: Evidence | None = None
        if self.words:  # redaction is on, and the query searched words (not "NOT x" alone)
            evidence = self._evidence(
                ranked, stored, messages, (session.title, shown.title), session.started_at
            )
            if not evidence.found:
                self.dropped += 1
                self.seen |= evidence.seen
                return None
            ranked = _surviving(ranked, evidence, self.words)
        root_id = _clean(ranked.root_id, clean) or ranked.root_id
        while True:  # only the messages the window shows are redacted (issue 31 item 2)
            transcript, start, end = self._placed(ranked, part, view, root_id)
            text = transcript.text
            if not (missing := view.unredacted_near(transcript, start, end)):
                break
            before = view.with_redacted(())
            if all(a is b for a, b in zip(before, view.with_redacted(missing), strict=True)):
                break  # redaction changed none of them: the same transcript, the same window
        if evidence is not None:
            self.seen |= evidence.seen
        title = shown.title
        window = shown_window(text, transcript.parts, start, end)
        recalled = recalled_session(
            root_id,
            shown,
            title=title,
            last_message_id=max((mid for mid, _ in part.order), default=0),
            ids_shown=self.show_message_ids,
            windows=[window],
            redacted_by=view.rules_id,
            secrets_redacted=view.secrets_in(window),
        )
        outcome = self.outcome
        metadata: SearchMetadata = {
            "session_id": root_id,
            "when": format_when(session.started_at),
            "started_at": session.started_at,
            "source": shown.source,
            "model": shown.model,
            "title": title,
            "user_id": shown.user_id,
            **where_fields(root_id, shown.project, shown.git_branch, shown.agent),
            "score": ranked.score,
            "matched_session_ids": [_clean(i, clean) for i in ranked.session_ids],
            "matched_message_ids": list(ranked.message_ids),
            "match_count": ranked.match_count,
            "matched_terms": list(ranked.matched_terms),
            "coverage": ranked.coverage,
            "signals": dict(ranked.signals) if ranked.signals is not None else None,
            "query_expansions": _said(outcome.expansions),
            "time_hint": _time_hint(outcome),
            "query": _clean(self.query, self.redact),
            "query_reading": outcome.reading,
            "search_mode": outcome.search_mode,
            "sessions_searched": outcome.sessions_searched,
            "mode": "search",
            "last_message_id": recalled.last_message_id,
            "store_id": getattr(self.store, "store_id", None),
            "truncated": (start, end) != (0, len(text)),
            "recall": recalled.to_dict(),
        }
        content = render.window_text(window, ids_shown=self.show_message_ids)
        return Result(page_content=content, metadata=dict(metadata))

    def _placed(
        self, ranked: RankedSession, part: ChainPart, view: _RedactedView, root_id: str
    ) -> tuple[Transcript, int, int]:
        """The transcript of the run of the chain the window needs, and the window's bounds in
        it: the run grows until the window placed on it is the whole transcript's (the
        transcript of the run is that of the whole chain, cut where the run is).

        The window holds the best match (``match_position``'s anchor), so only matches within
        ``width`` characters of it place it: the run must hold the anchor and reach ``width``
        characters past it on each side that is not the chain's own end."""
        anchor = ranked.message_ids[0] if ranked.message_ids else None
        placed_by_anchor = anchor is not None and any(mid == anchor for mid, _ in part.order)
        while True:
            messages = view.with_redacted(())
            before = view.session_before()
            transcript = format_transcript(
                messages,
                show_ids=self.show_message_ids,
                root_id=root_id if before is None else before,
            )
            text = transcript.text
            starts = sorted(set(transcript.offsets.values()))
            ends = dict(itertools.pairwise([*starts, len(text)]))  # no messages: no starts
            offsets = transcript.offsets
            matched = sorted({offsets[m] for m in ranked.message_ids if m in offsets})
            spans = [(s, ends[s]) for s in matched]
            width = self.max_chars and self.max_chars // 2
            best = offsets.get(anchor) if anchor is not None else None
            centre = match_position(text, spans, self.pattern, width, best)
            head, tail = part.head, part.tail
            if placed_by_anchor and not (head and tail):
                end_of_best = ends[best] if best is not None else None
                if not _anchor_reach(len(text), best, end_of_best, width, head=head, tail=tail):
                    part.grow()  # a match that could share the anchor's run may lie outside
                    continue
            bounds = part_window_bounds(text, centre, self.max_chars, head=head, tail=tail)
            if bounds is not None and window_fits(
                transcript, *bounds, matched, head=head, tail=tail
            ):
                return transcript, *bounds
            part.grow()

    def _evidence(
        self,
        ranked: RankedSession,
        stored: list[StoredMessage],
        shown: list[StoredMessage],
        titles: tuple[str | None, str | None],
        started: float | None,
    ) -> Evidence:
        order = {m: i for i, m in enumerate(ranked.message_ids)}
        pairs = sorted(
            ((s, r) for s, r in zip(stored, shown, strict=True) if s.id in order),
            key=lambda pair: order[pair[0].id],
        )
        show = [w for w, key in self.words.items() if key in self.outcome.expansions]
        # another writer may have put a blob in the title: no words to check there
        stored_title, shown_title = (t if isinstance(t, str) else None for t in titles)
        header = session_header(stored_title, started)
        changed = shown_title != stored_title
        headers = (header, session_header(shown_title, started) if changed else header)
        terms = set(ranked.matched_terms)  # term-coverage ranking: the terms found here
        more = any(t.startswith("+") for t in terms)  # "+3 more words"
        matched = {
            w for w, key in self.words.items() if key in terms or (more and key == MORE_TERMS)
        }
        evidence = surviving_evidence(
            pairs, headers, self.words, matched_words=matched if terms else None, show=show
        )
        if not evidence.found and ranked.signals and ranked.signals.get("dense", 0.0) > 0:
            evidence = dataclasses.replace(evidence, found=True)  # its dense half found it
        return evidence

    def finish(self, results: list[Result]) -> list[Result]:
        """With redaction, what the results' metadata says of the whole search reflects what
        they show: a word searched instead of a query word (a typo's correction, a prefix) is
        named only where a result shows it, never when it is text redaction removes; the
        sessions searched leave out those dropped for it (see
        :mod:`~langchain_session_recall.recall.evidence`)."""
        if self.redact is None:
            return results
        redact = self.redact
        expansions = {}
        for key, searched in self.outcome.expansions.items():
            shown = tuple(w for w in searched if w.rstrip("*") in self.seen and redact(w) == w)
            if shown:
                expansions[key] = shown
        for result in results:
            result.metadata["query_expansions"] = _said(expansions)
            result.metadata["sessions_searched"] -= self.dropped
        return results


def _anchor_reach(
    length: int,
    best: int | None,
    best_end: int | None,
    width: int | None,
    *,
    head: bool,
    tail: bool,
) -> bool:
    """Whether a run of a chain (its transcript ``length`` long) holds the best match, at
    ``best``..``best_end``, and every match that could share a ``width``-character run of
    matches with it (``match_position``): ``width`` characters on each side of it, where the
    run does not end with the chain (``head``/``tail``)."""
    if width is None:
        return True
    if best is None or best_end is None:
        return False
    return (head or best >= width) and (tail or length - best_end >= width)


def _said(expansions: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """The words searched instead of a query's terms as metadata says them: ``{"c*": "config,
    cach"}`` (text at the edge; the search keeps them as tuples)."""
    return {key: ", ".join(words) for key, words in expansions.items()}


def _surviving(ranked: RankedSession, evidence: Evidence, words: dict[str, str]) -> RankedSession:
    """``ranked`` as its surviving evidence shows it: no dropped message, no term matched only
    inside redacted text. The score stays (ranking is done)."""
    dropped = set(ranked.message_ids) - set(evidence.message_ids)
    if not dropped and not evidence.hidden:
        return ranked
    gone = {key for w, key in words.items() if w in evidence.hidden}
    gone -= {key for w, key in words.items() if w in evidence.seen}
    return dataclasses.replace(
        ranked,
        message_ids=tuple(m for m in ranked.message_ids if m not in dropped),
        matched_terms=tuple(t for t in ranked.matched_terms if t not in gone),
    )


class _RedactedView:
    """The run of a chain's messages a window is placed on (:class:`ChainPart`), with
    redaction applied to those asked for, the rest as stored: a result shows a window of its
    transcript, and only the messages in (or next to) it need the work redaction costs. With a
    :class:`SecretRedactor` it also counts the secrets replaced in each message (the rules' id
    and the count go into the result's data, so the summarizer need not redact it again)."""

    def __init__(self, part: ChainPart, redact: Callable[[str], str] | None) -> None:
        self.part = part
        self.tally = _Tally(redact) if isinstance(redact, SecretRedactor) else None
        self.redact = self.tally or redact
        self.rules_id = redact.rules_id if isinstance(redact, SecretRedactor) else None
        self.ids = _memo(self.redact)
        self.done: dict[int, StoredMessage] = {}
        self.secrets: dict[int, int] = {}

    def with_redacted(self, wanted: Iterable[int]) -> list[StoredMessage]:
        """The run's messages, those in ``wanted`` (ids, all in the run) redacted too."""
        stored = self.part.messages()
        if self.redact is None or self.ids is None:
            return stored
        wanted = set(wanted) - self.done.keys()
        self._redact_all([m for m in stored if m.id in wanted])
        return [self.done.get(m.id, m) for m in stored]

    def _redact_all(self, messages: list[StoredMessage]) -> None:
        assert self.redact is not None and self.ids is not None
        tally = self.tally
        for message in messages:
            before = tally.count if tally is not None else 0
            self.done[message.id] = _redact_message(message, self.redact, self.ids)
            if tally is not None and tally.count > before:
                self.secrets[message.id] = tally.count - before

    def redacted(self, messages: list[StoredMessage]) -> list[StoredMessage]:
        """``messages`` (of the chain, in chain order) redacted, wherever they are."""
        if self.redact is not None and self.ids is not None:
            self._redact_all([m for m in messages if m.id not in self.done])
        return [self.done.get(m.id, m) for m in messages]

    def session_before(self) -> str | None:
        """The session of the message before the run, as the transcript compares it:
        redacted when that message was (a match outside the run), else as stored (a message
        outside the run was never near a window)."""
        before = self.part.message_before()
        return self.done[before].session_id if before in self.done else self.part.session_before()

    def secrets_in(self, window: Window) -> int:
        """Secrets replaced in the messages ``window`` shows (whole or in part)."""
        return sum(self.secrets.get(i, 0) for i in {m.id for m in window.messages})

    def unredacted_near(self, transcript: Transcript, start: int, end: int) -> set[int]:
        """The ids of messages not yet redacted whose text, or the ``--- session`` line before
        it, may lie in ``[start, end)``: each message is taken to reach from the start of the
        one before it to the start of the one after it."""
        if self.redact is None:
            return set()
        order = list(transcript.offsets.items())
        edges = [0, *(offset for _, offset in order[:-1])]
        after = [*(offset for _, offset in order[1:]), len(transcript.text)]
        return {
            mid
            for (mid, _), lo, hi in zip(order, edges, after, strict=True)
            if lo <= end and hi >= start and mid not in self.done
        }


class _Tally:
    """A :class:`SecretRedactor` as a ``str -> str`` that adds up the secrets it replaced."""

    def __init__(self, redactor: SecretRedactor) -> None:
        self.redactor = redactor
        self.count = 0

    def __call__(self, text: str) -> str:
        out, found = self.redactor.counted(text)
        self.count += found
        return out


def redact_messages(
    messages: list[StoredMessage], redact: Callable[[str], str] | None
) -> list[StoredMessage]:
    """Messages with ``redact`` applied to their text, their tool calls (names and arguments)
    and their identifiers (session id, tool name, tool call id: shown in transcripts)."""
    if redact is None:
        return messages
    ids = _memo(redact) or redact  # a chain's messages share a few ids and tool names
    return [_redact_message(m, redact, ids) for m in messages]


def _redact_message(
    message: StoredMessage, redact: Callable[[str], str], ids: Callable[[str], str]
) -> StoredMessage:
    changes: dict[str, Any] = {
        "content": _clean(message.content, redact) or "",
        "session_id": _clean(message.session_id, ids),
        "tool_name": _clean(message.tool_name, ids),
        "tool_call_id": _clean(message.tool_call_id, ids),
    }
    if message.tool_calls:
        changes["tool_calls"] = redact_tool_calls(message.tool_calls, redact)
    if all(changes[k] == getattr(message, k) for k in changes):
        return message  # nothing redacted: the same message
    return dataclasses.replace(message, **changes)


_SESSION_TEXT = (
    "id",
    "title",
    "source",
    "model",
    "user_id",
    "parent_session_id",
    "end_reason",
    "project",
    "git_branch",
)


def redact_session(session: Session, redact: Callable[[str], str] | None) -> Session:
    """``session`` with ``redact`` applied to its text fields, identifiers included: a key in
    a session id, a source or a model name is shown redacted (issue 32 item 8)."""
    if redact is None:
        return session
    changes: dict[str, Any] = {n: _clean(getattr(session, n), redact) for n in _SESSION_TEXT}
    if all(value == getattr(session, name) for name, value in changes.items()):
        return session
    return dataclasses.replace(session, **changes)


def _memo(redact: Callable[[str], str] | None) -> Callable[[str], str] | None:
    """``redact`` remembering its answers (for identifiers, which repeat)."""
    if redact is None:
        return None
    seen: dict[str, str] = {}

    def cached(text: str) -> str:
        if text not in seen:
            seen[text] = redact(text)
        return seen[text]

    return cached


@overload
def _clean(text: str, redact: Callable[[str], str] | None) -> str: ...
@overload
def _clean(text: str | None, redact: Callable[[str], str] | None) -> str | None: ...
def _clean(text: str | None, redact: Callable[[str], str] | None) -> str | None:
    # another writer may have put a number or a blob in a text column: shown as it is
    return redact(text) if redact is not None and isinstance(text, str) and text else text


def _clean_preview(preview: str | None, redact: Callable[[str], str] | None) -> str | None:
    """A preview cut with "…" loses its last word too: it may be the start of a key that no
    rule recognises once cut."""
    if redact is None or not isinstance(preview, str) or not preview.endswith("…"):
        return _clean(preview, redact)
    head = preview[:-1]
    return redact(head[: max(head.rfind(" "), 0)]) + "…"


def _time_hint(outcome: SearchOutcome) -> TimeHintMetadata | None:
    hint = outcome.time_hint
    if hint is None:
        return None
    return {
        "from": format_when(hint.start),
        "to": format_when(hint.end),
        "text": hint.text,
        "start": hint.start,
        "end": hint.end,
    }


def recent_results(
    store: SessionBackend,
    request: SearchRequest | None = None,
    *,
    redact: Callable[[str], str] | None = None,
    **changes: Any,
) -> list[Result]:
    """The ``k`` most recent root sessions: title and preview, no search (``mode="recent"``).

    With ``collapse_automation`` (the default) sessions of automation sources (``cron``,
    ``kanban``) are listed once per job (same title), as its newest run. ``redact`` is applied
    to titles and previews.

    Example:
        >>> from langchain_session_recall import SessionStore
        >>> store = SessionStore(":memory:")
        >>> _ = store.add_session("s1", title="CORS")
        >>> recent_results(store, k=3)[0].page_content
        'CORS'
    """
    return _recent(store, as_request(request or SearchRequest(), **changes), redact, None)


def _recent(
    store: SessionBackend,
    request: SearchRequest,
    redact: Callable[[str], str] | None,
    k: int | None,
) -> list[Result]:
    """The results of a browse (see :func:`recent_results`): ``k`` of them (``None``: the
    request's)."""
    current = request.current_session_id
    recent = store.recent_sessions(
        request.k if k is None else k,
        exclude_sources=request.exclude_sources,
        exclude_session_ids=[current] if current else [],
        user_id=request.user_id,
        after=request.after,
        before=request.before,
        collapse_sources=AUTOMATION_SOURCES if request.collapse_automation else (),
        project=request.project,
        agents=request.agent,
    )
    out = []
    ids = _memo(redact)
    for r in recent:
        title, preview = _clean(r.title, redact), _clean_preview(r.preview, redact)
        head = title or "(untitled session)"
        metadata: RecentMetadata = {
            "session_id": _clean(r.id, ids),
            "when": format_when(r.started_at),
            "started_at": r.started_at,
            "last_active": r.last_active,
            "source": _clean(r.source, ids),
            "model": _clean(r.model, ids),
            "title": title,
            "user_id": _clean(r.user_id, ids),
            **where_fields(
                _clean(r.id, ids), _clean(r.project, ids), _clean(r.git_branch, ids), r.agent
            ),
            "message_count": r.message_count,
            "preview": preview,
            "query": "",
            "mode": "recent",
            "store_id": getattr(store, "store_id", None),
        }
        content = f"{head}\n{preview}" if preview else head
        out.append(Result(page_content=content, metadata=dict(metadata)))
    return out
