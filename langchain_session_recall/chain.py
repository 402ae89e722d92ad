"""``query -> retriever -> summarizer``: the LCEL chain that joins search and recaps."""

from __future__ import annotations

from typing import Any

from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableParallel, RunnablePassthrough

from langchain_session_recall.retriever import SessionRecallRetriever
from langchain_session_recall.summarize.summarizer import SessionSummarizer

__all__ = ["create_session_recall_chain"]


def create_session_recall_chain(
    retriever: Runnable[str, list[Document]],
    llm: Runnable[Any, BaseMessage] | None,
    **summarizer_kwargs: Any,
) -> Runnable[str, list[Document]]:
    """Build ``query -> retriever -> summarizer``: a query string in, session summaries out.

    Args:
        retriever: Usually a ``SessionRecallRetriever``; any Runnable from a query string to
            Documents works.
        llm: The chat model for the summaries (``None``: extractive fallbacks only).
        **summarizer_kwargs: Passed to :class:`SessionSummarizer` (``max_concurrency``,
            ``timeout``, ``cache``, ...).

    Example:
        .. code-block:: python

            chain = create_session_recall_chain(retriever, ChatOpenAI(max_retries=0))
            for doc in chain.invoke("docker permission denied"):
                print(doc.metadata["when"], doc.page_content)
    """
    if isinstance(retriever, SessionRecallRetriever):
        summarizer_kwargs.setdefault("store", retriever.store)
    summarizer = SessionSummarizer(llm=llm, **summarizer_kwargs)
    if isinstance(retriever, SessionRecallRetriever) and llm is not None:
        # Message ids in the transcript let the model cite its sources (checked afterwards).
        retriever = retriever.model_copy(update={"show_message_ids": True})
    parallel: Runnable[str, dict[str, Any]] = RunnableParallel(
        documents=retriever, query=RunnablePassthrough()
    )
    return (parallel | summarizer).with_config(run_name="session_recall")
