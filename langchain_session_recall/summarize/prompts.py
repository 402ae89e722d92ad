"""Prompt templates of the session summarizer.

The system prompt is the reference one (Hermes ``session_search_tool``: five points, factual
past-tense recap, exact commands and paths kept) plus an optional grounding instruction. Bump
:data:`PROMPT_VERSION` whenever the default wording changes: it is part of the summary cache key,
so stale summaries are not served under a new prompt.
"""

from __future__ import annotations

import hashlib
import json

from langchain_core.load import dumpd
from langchain_core.prompts import ChatPromptTemplate

__all__ = [
    "CITATION_INSTRUCTION",
    "DEFAULT_SUMMARY_PROMPT",
    "PROMPT_VERSION",
    "SUMMARY_SYSTEM_PROMPT",
    "SUMMARY_USER_PROMPT",
    "prompt_fingerprint",
]

PROMPT_VERSION = "session-summary-v1"

SUMMARY_SYSTEM_PROMPT = (
    "You are reviewing a past conversation transcript to help recall what happened. "
    "Summarize the conversation with a focus on the search topic. Include:\n"
    "1. What the user asked about or wanted to accomplish\n"
    "2. What actions were taken and what the outcomes were\n"
    "3. Key decisions, solutions found, or conclusions reached\n"
    "4. Any specific commands, files, URLs, or technical details\n"
    "5. Anything left unresolved or notable\n\n"
    "Be thorough but concise. Preserve specific details (commands, paths, error messages) that "
    "would be useful to recall. Write in past tense as a factual recap."
    "{citation_instruction}"
)

CITATION_INSTRUCTION = (
    "\n\nEach transcript message is tagged with its id, like [USER #42]. After each key fact, "
    "cite the id(s) of the message(s) it comes from in square brackets, like [#42] or "
    "[#42, #43]. Cite only ids that appear in the transcript."
)

SUMMARY_USER_PROMPT = (
    "Search topic: {query}\n"
    "Session source: {source}\n"
    "Session date: {when}\n"
    "Session title: {title}\n\n"
    "CONVERSATION TRANSCRIPT:\n"
    "{transcript}\n\n"
    "Summarize this conversation with focus on: {query}"
)

DEFAULT_SUMMARY_PROMPT = ChatPromptTemplate.from_messages(
    [("system", SUMMARY_SYSTEM_PROMPT), ("human", SUMMARY_USER_PROMPT)]
)
"""Variables: ``query``, ``source``, ``when``, ``title``, ``transcript``,
``citation_instruction`` (empty when the transcript carries no message ids). A custom prompt may
use any subset of them."""


def prompt_fingerprint(prompt: ChatPromptTemplate) -> str:
    """Version tag of ``prompt`` for the cache key: :data:`PROMPT_VERSION` for the default one,
    else the version plus a hash of the template, so editing a custom prompt invalidates its cache.

    Compared by value, not identity: pydantic copies a prompt given to a model field, so the
    summarizer's default prompt is an equal copy of :data:`DEFAULT_SUMMARY_PROMPT`, not the object.

    Example:
        >>> prompt_fingerprint(DEFAULT_SUMMARY_PROMPT)
        'session-summary-v1'
        >>> prompt_fingerprint(DEFAULT_SUMMARY_PROMPT.model_copy(deep=True))
        'session-summary-v1'
    """
    if prompt == DEFAULT_SUMMARY_PROMPT:
        return PROMPT_VERSION
    # dumpd() serializes the message templates; model_dump_json() leaves them out.
    blob = json.dumps(dumpd(prompt), sort_keys=True, default=str)
    digest = hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]
    return f"{PROMPT_VERSION}+custom-{digest}"
