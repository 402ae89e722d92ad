"""``SessionRecallRetriever``: past sessions as LangChain Documents."""

from __future__ import annotations

import dataclasses
import datetime
import logging
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever, LangSmithRetrieverParams
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import run_in_executor
from pydantic import ConfigDict, Field, PrivateAttr, field_validator, model_validator
from typing_extensions import override

from langchain_session_recall.backends.base import SessionBackend
from langchain_session_recall.backends.vectors.store import search_index
from langchain_session_recall.core.query import bound_query
from langchain_session_recall.core.redaction import SecretPattern, SecretRedactor
from langchain_session_recall.core.where import agent_list, project_path
from langchain_session_recall.dates import to_timestamp
from langchain_session_recall.errors import EmptyQueryError, InvalidOptionError
from langchain_session_recall.recall.build import Result, recall_prepared
from langchain_session_recall.recorder import configured_session
from langchain_session_recall.search.dense import (
    DEFAULT_DENSE_CANDIDATES,
    DEFAULT_DENSE_WEIGHT,
    DenseSearch,
)
from langchain_session_recall.search.question_vector import (
    QuestionVector,
    asearch_with_question_vector,
    question_vector,
)
from langchain_session_recall.search.request import (
    DEFAULT_K,
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_K,
    HIDDEN_SOURCES,
    HIT_LIMIT,
    HITS_PER_SESSION,
    MIN_MAX_CHARS,
    SearchRequest,
    check_k,
    role_list,
)

__all__ = ["SessionRecallRetriever"]

logger = logging.getLogger(__name__)

_LS_NAME = "session_recall"
"""The retriever's name in LangSmith's ``ls_retriever_name`` (LangChain's default would be
``sessionrecall``: the class name without ``Retriever``, lowercased)."""
_CALL_OPTIONS = frozenset(
    {
        "k",
        "role_filter",
        "after",
        "before",
        "current_session_id",
        "now",
        "project",
        "agent",
        "parsed",
    }
)


class SessionRecallRetriever(BaseRetriever):
    """Search an agent's past sessions; one Document per root session.

    With a query, each Document's ``page_content`` is the formatted transcript of a matching
    session's whole chain (the session, its sub-agents and continuations), cut to ``max_chars``
    around the matches; its ``id`` is the session id. With an empty query, the retriever lists
    recent sessions instead (previews only, instant). Text with nothing searchable in it
    (``"?"``, ``"NOT"``, an emoji) gives no Documents, and a debug log line says why. The
    current conversation's chain is never returned.

    Secrets are redacted (``redact=True``, the default): API keys, tokens, passwords and private
    keys in the transcripts, titles and previews are replaced by ``[REDACTED...]`` markers
    before a Document is built, so ``retriever | format_docs | prompt | llm`` sends a provider
    none of them (see :func:`~langchain_session_recall.redact_secrets`).

    ``k`` can also be given per call (``retriever.invoke(q, k=1)``), as can ``role_filter``,
    ``after``, ``before``, ``project``, ``agent`` and ``current_session_id`` (and ``parsed``:
    the query already parsed by :func:`~langchain_session_recall.parse_query`, which a caller
    that checked the query passes on so that it is parsed once). A request that
    could find nothing is an error, not an empty list: ``k`` below 1 or above ``max_k``, a
    role no message has (LangChain's ``human``/``ai``/``system``/``tool`` are taken for the
    stored ``user``, ``assistant``, ...), ``after`` not earlier than ``before``, a
    ``project`` that is not an absolute directory each raise
    :class:`~langchain_session_recall.errors.InvalidArgumentError` (a ``ValueError``) saying
    what to give instead. When not given, ``current_session_id`` is
    read from the run config: ``config["configurable"]["session_id"]``, else
    ``["thread_id"]`` (a LangGraph thread, which the recorder records as the session of that
    id), so an agent never finds the conversation it is having, nor its sub-sessions.

    Example:
        >>> from langchain_session_recall import SessionRecallRetriever, SessionStore
        >>> store = SessionStore(":memory:")
        >>> _ = store.add_session("s1", title="CORS")
        >>> _ = store.add_messages("s1", [{"role": "user", "content": "CORS error in nginx"}])
        >>> docs = SessionRecallRetriever(store=store).invoke("how did we fix the CORS error?")
        >>> docs[0].metadata["session_id"], docs[0].page_content
        ('s1', '[USER]: CORS error in nginx')
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    store: SessionBackend
    """The store to search: ``SessionStore`` (SQLite) or ``PostgresSessionStore``."""
    k: int = Field(default=DEFAULT_K, ge=1)
    """Sessions to return, 1 to ``max_k`` (here or per call)."""
    max_k: int = Field(default=DEFAULT_MAX_K, ge=1)
    """The most sessions one search may ask for: a larger ``k`` raises ``ValueError``."""
    role_filter: tuple[str, ...] | None = None
    """Only match these roles: ``("user", "assistant")`` or ``"user,assistant"`` (LangChain's
    ``human``, ``ai``, ``system``, ``tool`` work too); an unknown role raises ``ValueError``."""
    exclude_sources: tuple[str, ...] = HIDDEN_SOURCES
    """Session sources whose messages are never matched."""
    current_session_id: str | None = None
    """The conversation in progress: its whole chain is left out."""
    user_id: str | None = None
    """Tenant scope: only this user's sessions are searched and shown."""
    project: str | None = None
    """Only sessions that ran in this directory or below it (an absolute path; ``/src/api``
    takes in ``/src/api/web``, never ``/src/apis``); here or per call."""
    agent: tuple[str, ...] | None = None
    """Only sessions these agents wrote: ``("codex", "claude-code")`` or ``"codex,gemini"``
    (names as ``metadata["agent"]`` shows them); here or per call."""
    max_chars: int | None = Field(default=DEFAULT_MAX_CHARS, ge=MIN_MAX_CHARS)
    """Transcript length per Document (default 8,000 characters, a size that fits a prompt):
    a longer transcript is cut to a window centred on its densest run of matched words, the
    cuts marked ``...[earlier conversation truncated]...`` and
    ``...[later conversation truncated]...`` (``metadata["truncated"]`` says so). ``None``:
    the whole transcript of the session's chain."""
    show_message_ids: bool = False
    """Tag transcript lines with message ids (``[USER #42]: ...``) for citations."""
    hit_limit: int = Field(default=HIT_LIMIT, ge=1)
    """Message hits gathered per index and query term before sessions are ranked, the best
    over the whole store (besides ``hits_per_session`` of every other session)."""
    hits_per_session: int | None = Field(default=HITS_PER_SESSION, ge=1)
    """Message hits gathered of every other session with a match (its best, per index and
    query term): every session competes, however many matches another one has. ``None``:
    none, only the best ``hit_limit`` per term compete: a large store searches faster, and a
    session crowded out of them by a noisier one is not found (``docs/benchmarks-perf.md``)."""
    now: float | datetime.datetime | str | None = None
    """The moment relative time words in a query ("last week", "yesterday") refer to: Unix
    seconds, a datetime or an ISO date; ``None``: the current time. Pass it (here or per call)
    for reproducible results. A time the query names is a soft prior on session start times,
    never a filter (``after``/``before`` are the filters)."""
    collapse_automation: bool = True
    """Recent mode lists each automation job (``core.automation.AUTOMATION_SOURCES``:
    ``cron``, ``kanban``; same title) once, as its newest run; ``False`` lists every run. Search
    demotes their repeats either way."""
    redact: bool = True
    """Replace secrets (API keys, tokens, passwords, private keys) in every Document's text,
    title, preview and echoed query by ``[REDACTED...]`` markers. ``False`` returns the stored
    text as it is: only for a consumer that never sends it anywhere."""
    secret_patterns: Sequence[SecretPattern] | None = None
    """The redaction rules (``None``: ``DEFAULT_SECRET_PATTERNS``)."""
    embeddings: Embeddings | None = None
    """Hybrid search (``docs/hybrid.md``): the model the store's passage vectors were made
    with; a search embeds only the query. ``None``: the store's own ``embeddings`` if it was
    opened with some, else lexical search only. A store whose vectors another model made
    raises :class:`~langchain_session_recall.errors.EmbeddingMismatchError`."""
    dense_weight: float = Field(default=DEFAULT_DENSE_WEIGHT, ge=0.0)
    """Hybrid search: weight of the dense part in ``lexical / best + dense_weight x
    min-max(similarity)`` (chosen on LoCoMo's development split); 0 turns it off. Above 1 a
    paraphrase can outrank the session holding the query's exact term."""
    dense_candidates: int = Field(default=DEFAULT_DENSE_CANDIDATES, ge=1)
    """Hybrid search: the most similar sessions added to the lexical candidates."""
    reranker: BaseDocumentCompressor | None = None
    """Any LangChain ``BaseDocumentCompressor`` (a cross-encoder, a hosted reranker): it
    reorders (and may drop) the best ``rerank_top_n`` Documents before the first ``k`` are
    returned. None is shipped (``docs/hybrid.md``, "Reranking")."""
    rerank_top_n: int = Field(default=20, ge=1)
    """Documents handed to ``reranker`` (each a session's transcript, built before reranking)."""
    embed_concurrently: bool = True
    """Hybrid search: embed the question in a worker thread (async: ``aembed_query`` on the
    event loop) while the lexical search runs, so a search takes the longer of the two, not
    their sum. A search ends only after its embedding has, so the model never sees more calls
    at a time than searches are made at a time. ``False``: embedded in the searching thread,
    after the lexical search (a model bound to the thread that made it)."""

    _dense_index: Any = PrivateAttr(default=None)

    @field_validator("role_filter", mode="before")
    @classmethod
    def _split_roles(cls, value: Any) -> tuple[str, ...] | None:
        roles = role_list(value)
        return roles or None

    @field_validator("project", mode="before")
    @classmethod
    def _project_path(cls, value: Any) -> str | None:
        return project_path(value)

    @field_validator("agent", mode="before")
    @classmethod
    def _split_agents(cls, value: Any) -> tuple[str, ...] | None:
        return agent_list(value) or None

    @model_validator(mode="after")
    def _k_within_cap(self) -> SessionRecallRetriever:
        check_k(self.k, self.max_k)
        return self

    @field_validator("exclude_sources", mode="before")
    @classmethod
    def _as_tuple(cls, value: Any) -> tuple[str, ...]:
        return (value,) if isinstance(value, str) else tuple(value or ())

    def _redactor(self) -> SecretRedactor | None:
        return SecretRedactor(self.secret_patterns) if self.redact else None

    # ------------------------------------------------------------------ entry points

    @staticmethod
    def _with_session(config: RunnableConfig | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Take the current session id from ``config["configurable"]``: its ``session_id``,
        else its ``thread_id`` (as :class:`~langchain_session_recall.SessionRecorder` names
        the session it records a run into)."""
        if "current_session_id" not in kwargs and config:
            session_id = configured_session(config)
            if session_id:
                kwargs = {**kwargs, "current_session_id": session_id}
        return kwargs

    @override
    def invoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        return super().invoke(input, config, **self._with_session(config, kwargs))

    @override
    async def ainvoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        return await super().ainvoke(input, config, **self._with_session(config, kwargs))

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        request = self._request(query, kwargs)
        return self._search(request, run_manager)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        request = self._request(query, kwargs)
        embeddings = self._hybrid_model(request)
        sync_manager = run_manager.get_sync()
        if embeddings is None or not self.embed_concurrently:
            # SQLite calls block: run them in the default executor (each thread has its own
            # connection), as LangChain does for retrievers without native async I/O.
            return await run_in_executor(None, self._search, request, sync_manager)
        # the question's aembed_query on the loop, the search in a pool of its own meanwhile
        return await asearch_with_question_vector(
            lambda vector: self._search(request, sync_manager, vector),
            embeddings,
            bound_query(request.query),
        )

    def _search(
        self,
        request: SearchRequest,
        run_manager: CallbackManagerForRetrieverRun,
        made: QuestionVector | None = None,
    ) -> list[Document]:
        """The search itself (blocking), its inputs chosen first: the query read once (its
        prefixes completed, the text embedded and reranked), lexical or hybrid (the question
        embedded while the lexical search runs, or ``made`` by the caller), reranked or not.
        Then down the pipeline, which reads none of them again."""
        embeddings = self._model(request)
        reranker = None if request.browse else self.reranker
        wanted = max(request.k, self.rerank_top_n) if reranker is not None else request.k
        redact = self._redactor()
        try:
            prepared = None if request.browse else request.prepare(self.store.prefix_completions)
        except EmptyQueryError as exc:
            # "?", "(", an emoji: no session can match; a chain must not crash on a user's text.
            logger.debug("no documents: %s", exc)
            return []
        if prepared is None or not prepared.query.parsed.relaxed:  # no dense stage to reach
            embeddings = None
        text = prepared.query.text if prepared is not None else ""
        concurrent = self.embed_concurrently
        with question_vector(embeddings, text, concurrent=concurrent, made=made) as vector:
            dense = None
            if embeddings is not None and vector is not None:
                # its index checked: raises if the store's vectors are another model's, or missing
                index = search_index(self.store, embeddings, self._dense_index)
                if index is not self.store.vectors:
                    self._dense_index = index
                dense = DenseSearch(index, vector, self.dense_weight, self.dense_candidates)
            results = recall_prepared(
                self.store, request, prepared, redact=redact, dense=dense, k=wanted
            )
        docs = [_document(r) for r in results]
        if reranker is not None and docs:
            docs = list(reranker.compress_documents(docs, text, callbacks=run_manager.get_child()))
        return docs[: request.k]

    @override
    def _get_ls_params(self, **kwargs: Any) -> LangSmithRetrieverParams:
        """LangSmith's standard retriever params, on every traced run: ``ls_retriever_name``
        ``"session_recall"``, and, when a hybrid search would use a model (this retriever's
        ``embeddings``, else the store's; ``dense_weight`` above 0), that model's
        ``ls_embedding_provider`` (its class) and ``ls_embedding_model`` (its name, when it
        states one). Read from the model object: nothing is loaded or embedded."""
        from langchain_session_recall.backends.vectors.identity import (
            embedding_provider_and_model,
        )

        params = LangSmithRetrieverParams(ls_retriever_name=_LS_NAME)
        embeddings = self.embeddings or self.store.embeddings
        if embeddings is not None and self.dense_weight > 0:
            provider, model = embedding_provider_and_model(embeddings)
            params["ls_embedding_provider"] = provider
            if model is not None:
                params["ls_embedding_model"] = model
        return params

    def search(self, request: SearchRequest) -> list[Document]:
        """The Documents of a request a surface made itself (the CLI does), searched as this
        retriever searches (hybrid with its model, reranked, redacted as configured): the
        request's query, filters and sizes are used as they are, this retriever's own search
        fields are not read. A query with nothing to search gives ``[]``, as ``invoke`` does.

        Example:
            >>> from langchain_session_recall import SessionStore
            >>> from langchain_session_recall.search.request import SearchRequest
            >>> store = SessionStore(":memory:")
            >>> _ = store.add_session("s1")
            >>> _ = store.add_messages("s1", [{"role": "user", "content": "CORS error"}])
            >>> retriever = SessionRecallRetriever(store=store)
            >>> [d.id for d in retriever.search(SearchRequest("cors", k=1, max_chars=None))]
            ['s1']
        """
        noop = CallbackManagerForRetrieverRun.get_noop_manager()
        return self._search(request, noop)

    def search_mode(
        self, query: str | SearchRequest, **options: Any
    ) -> Literal["lexical", "hybrid"]:
        """How a search for ``query`` (with per-call ``options``, as ``invoke`` takes them; or a
        request, as :meth:`search` takes it) runs: ``"hybrid"`` when its question is embedded
        and the dense score blended in, ``"lexical"`` otherwise (no model, a browse, a role
        filter, only ``NOT`` terms). A strict reading that matches stays lexical even so: each
        Document's ``metadata["search_mode"]`` says what ran for it.

        Example:
            >>> from langchain_session_recall import SessionStore
            >>> SessionRecallRetriever(store=SessionStore(":memory:")).search_mode("deploy")
            'lexical'
        """
        if isinstance(query, SearchRequest):
            request = query if not options else dataclasses.replace(query, **options)
        else:
            request = self._request(query, options)
        return "hybrid" if self._hybrid_model(request) else "lexical"

    def _hybrid_model(self, request: SearchRequest) -> Embeddings | None:
        """The model of a hybrid search, or ``None`` (lexical: see :meth:`_model`, or a search
        that can use no dense candidate, so its question is never embedded: a query of only
        ``NOT`` terms; one with nothing to search, such as ``"?"``)."""
        embeddings = self._model(request)
        return embeddings if embeddings is not None and _may_use_dense(request) else None

    def _model(self, request: SearchRequest) -> Embeddings | None:
        """The model a hybrid search for ``request`` would embed its question with, as far as
        the configuration and the request's fields say: ``None`` for no model, weight 0, a
        browse, or a role filter (a window mixes roles)."""
        embeddings = self.embeddings or self.store.embeddings
        if embeddings is None or self.dense_weight <= 0 or request.browse:
            return None
        return None if request.role_filter else embeddings

    def _request(self, query: str, options: dict[str, Any]) -> SearchRequest:
        """This retriever's fields, with the per-call ``options`` over them (checked: see
        :class:`~langchain_session_recall.search.request.SearchRequest`)."""
        unknown = set(options) - _CALL_OPTIONS
        if unknown:
            raise InvalidOptionError(
                f"unknown search option(s) {sorted(unknown)}; allowed: {sorted(_CALL_OPTIONS)}"
            )
        roles = role_list(options["role_filter"]) if "role_filter" in options else self.role_filter
        return SearchRequest(
            query=query if isinstance(query, str) else "",
            k=check_k(options.get("k", self.k), self.max_k),
            role_filter=roles or (),
            exclude_sources=self.exclude_sources,
            current_session_id=options.get("current_session_id", self.current_session_id),
            user_id=self.user_id,
            after=to_timestamp(options.get("after")),
            before=to_timestamp(options.get("before")),
            project=options.get("project", self.project),
            agent=options.get("agent", self.agent) or (),
            now=to_timestamp(options.get("now", self.now)),
            max_chars=self.max_chars,
            hit_limit=self.hit_limit,
            hits_per_session=self.hits_per_session,
            show_message_ids=self.show_message_ids,
            collapse_automation=self.collapse_automation,
            parsed=options.get("parsed"),
        )


def _may_use_dense(request: SearchRequest) -> bool:
    """Whether a search for the request's query can reach its dense stage: not a query of only
    ``NOT`` terms (the recent sessions that never mention them), not one with nothing to
    search."""
    try:
        return bool(request.parse().relaxed)
    except EmptyQueryError:
        return False


def _document(result: Result) -> Document:
    """A Document whose ``id`` is its (root) session's id, as LangChain's stores set it."""
    session_id = result.metadata.get("session_id")
    return Document(
        id=str(session_id) if session_id is not None else None,
        page_content=result.page_content,
        metadata=result.metadata,
    )
