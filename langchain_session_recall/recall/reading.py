"""A Document read back as data, by a reader with redaction rules of its own (the summarizer).

A search result carries its :class:`~langchain_session_recall.recall.model.RecalledSession`
(``metadata["recall"]``): its messages are read from that, never from the text. Redaction is
applied once, where a result is built: a result whose text is still what the search rendered,
redacted by the reader's own rules, is taken as it is. Any other Document is redacted here by
the reader's rules: a result whose text a caller changed, or that other rules redacted, keeps
the messages it carries (redacted too); a Document made elsewhere is read from the tags of its
text (:func:`~langchain_session_recall.recall.render.parse_transcript`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_session_recall.core.redaction import SecretRedactor
from langchain_session_recall.recall.model import RecalledSession, ShownMessage
from langchain_session_recall.recall.render import parse_transcript, window_reading

__all__ = ["ReadDocument", "read_document"]


@dataclass(frozen=True, slots=True)
class ReadDocument:
    """What a reader reads of a Document: its transcript and messages (both redacted by its
    rules), whether the text shows the messages' ids, and the secrets redacted in it."""

    transcript: str
    shown: list[ShownMessage]
    ids_shown: bool
    redactions: int


def read_document(
    text: str, metadata: Mapping[str, Any], redactor: SecretRedactor | None
) -> ReadDocument:
    """A Document's ``text`` and ``metadata`` read back, redacted by ``redactor`` (``None``:
    not redacted) where the search did not already redact them by the same rules.

    Example:
        >>> read = read_document("[USER #4]: key sk-abcdefghijklmnopqrstuvwx", {},
        ...                      SecretRedactor())
        >>> [(m.id, m.text) for m in read.shown], read.redactions
        ([(4, 'key [REDACTED:openai_key]')], 1)
    """
    recalled = RecalledSession.from_metadata(metadata)
    if recalled is None:
        transcript, found = (text, 0) if redactor is None else redactor.counted(text)
        return ReadDocument(transcript, parse_transcript(transcript), True, found)
    readings = [window_reading(w, ids_shown=recalled.ids_shown) for w in recalled.windows]
    shown = [m for _, messages in readings for m in messages]
    if redactor is None:
        return ReadDocument(text, shown, recalled.ids_shown, 0)
    # as the search rendered it (a text a caller changed is redacted again)
    as_built = len(readings) == 1 and readings[0][0] == text
    if as_built and recalled.redacted_by == redactor.rules_id:
        return ReadDocument(text, shown, recalled.ids_shown, recalled.secrets_redacted)
    transcript, found = redactor.counted(text)
    if recalled.redacted_by is not None:
        found += recalled.secrets_redacted  # what the search's own rules replaced
    redacted = [dataclasses.replace(m, text=redactor.counted(m.text)[0]) for m in shown]
    return ReadDocument(transcript, redacted, recalled.ids_shown, found)
