"""The question's vector of a hybrid search, made while the lexical search runs.

A question's embedding does not depend on the lexical search, and it is most of a hybrid
search's time (a local model's arithmetic, a hosted model's network wait). So a search starts
it first and asks for it only when its dense stage needs it: the wall time becomes
``max(lexical, embedding) + dense scoring + blend`` instead of their sum. The CPU time does not
change (the same work, on two threads); on a machine with no idle core there is nothing to
overlap with, and the wall time stays near the sum.

The rules, sync and async alike:

* **Any LangChain** ``Embeddings``. The sync search calls ``embed_query`` in a worker thread of
  its own; the async search awaits ``aembed_query`` on the event loop (a hosted model's native
  async client; LangChain's default runs ``embed_query`` in the loop's executor) while its
  blocking part runs in a pool of its own, never in the loop's executor, which it would wait
  on (a full executor of searches each waiting for an embedding queued behind them would never
  move).
* **Nothing left behind.** A search returns or raises only once its embedding has ended (one
  not started yet is cancelled; a cancelled async search cancels its embedding). So a model
  never sees more calls at a time than its caller makes searches at a time, as when the search
  embedded the question itself: a model that is not thread-safe is as safe as before. A model
  bound to the thread that made it (rare) takes ``concurrent=False``.
* **Errors as before.** The embedding's exception is raised where the dense stage asks for the
  vector; a search that never asks (a strict query that matched, an error in the lexical stage)
  returns or raises exactly what the sequential search would.
* **The same results.** The vector is the same whichever thread made it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from langchain_core.embeddings import Embeddings

__all__ = ["QuestionVector", "asearch_with_question_vector", "question_vector"]

T = TypeVar("T")

QuestionVector = Callable[[], Sequence[float]]
"""Gives the question's vector, waiting for it if it is still being made."""

_THREAD_NAME = "session-recall-embed"
_SEARCH = "session-recall-search"


@contextlib.contextmanager
def question_vector(
    embeddings: Embeddings | None,
    text: str,
    *,
    concurrent: bool = True,
    made: QuestionVector | None = None,
) -> Iterator[QuestionVector | None]:
    """The question's vector for the search the ``with`` block runs, ``text`` embedded in a
    worker thread meanwhile: ``vector()`` gives it (waiting for it if need be). The block ends
    only once the worker has. ``concurrent=False``: embedded in the caller's thread when
    ``vector`` is first called (the sequential search). ``None`` without a model (a lexical
    search); ``made`` when the caller makes it elsewhere (the async search, on its loop).

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> model = DeterministicFakeEmbedding(size=4)
        >>> with question_vector(model, "deploy failed") as vector:
        ...     # the lexical stage would run here, then the dense one
        ...     vector() == model.embed_query("deploy failed")
        True
    """
    if embeddings is None or made is not None:
        yield made
        return
    if not concurrent:
        yield functools.cache(functools.partial(embeddings.embed_query, text))
        return
    # one thread per search, joined when the search ends: no shared pool to size or shut
    # down (a thread starts in ~0.1 ms; the embedding it runs takes milliseconds or more)
    with ThreadPoolExecutor(1, thread_name_prefix=_THREAD_NAME) as pool:
        # the caller's context (a tracer's run, callbacks' context variables) goes with it
        future = pool.submit(contextvars.copy_context().run, embeddings.embed_query, text)
        try:
            yield future.result
        finally:
            future.cancel()  # not started: never runs; running: the pool's exit waits for it


async def asearch_with_question_vector(
    search: Callable[[QuestionVector], T], embeddings: Embeddings, text: str
) -> T:
    """:func:`question_vector` for an async search: ``aembed_query`` runs on the
    event loop while the blocking ``search`` runs in a thread of :func:`_search_pool`.

    Example:
        >>> import asyncio
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> model = DeterministicFakeEmbedding(size=4)
        >>> def search(vector):
        ...     return vector() == model.embed_query("deploy failed")
        >>> asyncio.run(asearch_with_question_vector(search, model, "deploy failed"))
        True
    """
    task = asyncio.ensure_future(embeddings.aembed_query(text))
    bridge: Future[list[float]] = Future()

    def settle(done: asyncio.Future[list[float]]) -> None:
        if done.cancelled():
            bridge.cancel()
        elif (error := done.exception()) is not None:
            bridge.set_exception(error)
        else:
            bridge.set_result(done.result())

    task.add_done_callback(settle)
    context = contextvars.copy_context()
    thread = asyncio.get_running_loop().run_in_executor(
        _search_pool(), functools.partial(context.run, search, bridge.result)
    )
    try:
        return await asyncio.shield(thread)
    except asyncio.CancelledError:
        task.cancel()  # a search thread waiting for the vector then ends at once
        # and one still searching is waited for: it uses the store, which the caller may
        # close as soon as this returns
        await asyncio.gather(thread, return_exceptions=True)
        raise
    finally:
        await asyncio.gather(task, return_exceptions=True)


@functools.cache
def _search_pool() -> ThreadPoolExecutor:
    """Where async hybrid searches run their blocking part: never in the loop's executor, where
    LangChain's default ``aembed_query`` runs (a full executor of searches each waiting for an
    embedding queued behind them would never move). Its threads live as long as the process,
    as the loop's executor's do, so a store's per-thread connections are opened once each;
    as many as the loop's executor has by default."""
    return ThreadPoolExecutor(min(32, (os.cpu_count() or 1) + 4), thread_name_prefix=_SEARCH)
