"""The old import path of ``session_show``'s :func:`show_session`, kept for outside code: it
lives in :mod:`langchain_session_recall.recall.show` (one result as data, under ``recall/``)."""

from langchain_session_recall.recall.show import (
    SHOW_DEFAULT_CHARS,
    SHOW_DEFAULT_CONTEXT,
    SHOW_MAX_ANCHORS,
    SHOW_MAX_CHARS,
    SHOW_MAX_CONTEXT,
    SHOW_MIN_CHARS,
    SHOW_MIN_CLIP,
    show_session,
)

__all__ = [
    "SHOW_DEFAULT_CHARS",
    "SHOW_DEFAULT_CONTEXT",
    "SHOW_MAX_ANCHORS",
    "SHOW_MAX_CHARS",
    "SHOW_MAX_CONTEXT",
    "SHOW_MIN_CHARS",
    "SHOW_MIN_CLIP",
    "show_session",
]
