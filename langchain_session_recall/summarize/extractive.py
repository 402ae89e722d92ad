"""Extractive recap used when a session cannot be summarized (pure, no I/O).

Hermes fell back to the first 500 characters of the transcript, which usually shows the greeting
and not the part that matched. This recap instead picks the messages that matched the search
(by id when the transcript carries ids, else by query term), adds their neighbours for context,
clips each one around the match and labels the result as *not summarized*.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["TranscriptBlock", "extractive_recap", "parse_transcript", "query_terms"]

# `[USER]: `, `[ASSISTANT #43]: `, `[TOOL:terminal #44]: ` at the start of a line.
_TAG = re.compile(r"^\[(?P<role>[A-Z]+(?::[^\]#\n]+?)?)(?: #(?P<id>\d+))?\]: ?", re.MULTILINE)
_WORD = re.compile(r"[\w./\-]+", re.UNICODE)
_STOPWORDS = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "for", "from", "how", "i",
     "in", "is", "it", "near", "not", "of", "on", "or", "the", "to", "was", "we", "what", "when",
     "where", "which", "who", "why", "with", "you"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class TranscriptBlock:
    """One message of a formatted transcript: its tag, optional message id and text."""

    tag: str
    message_id: int | None
    text: str

    def render(self, text: str | None = None) -> str:
        """Format the block back to transcript form, optionally with replacement text."""
        ident = f" #{self.message_id}" if self.message_id is not None else ""
        return f"[{self.tag}{ident}]: {self.text if text is None else text}"


def parse_transcript(transcript: str) -> list[TranscriptBlock]:
    """Split a retriever transcript into message blocks.

    Text before the first tag (a truncation marker, say) is dropped; text between tags belongs to
    the preceding message.

    Example:
        >>> [b.message_id for b in parse_transcript("[USER #4]: hi\\n\\n[ASSISTANT #5]: hello")]
        [4, 5]
    """
    matches = list(_TAG.finditer(transcript))
    blocks: list[TranscriptBlock] = []
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(transcript)
        ident = m.group("id")
        blocks.append(
            TranscriptBlock(
                tag=m.group("role"),
                message_id=int(ident) if ident else None,
                text=transcript[m.end() : end].strip(),
            )
        )
    return blocks


def query_terms(query: str) -> list[str]:
    """Lower-cased search words of ``query`` without stopwords, quotes or FTS operators.

    Example:
        >>> query_terms('docker "permission denied" OR compose')
        ['docker', 'permission', 'denied', 'compose']
    """
    terms: list[str] = []
    for word in _WORD.findall(query.lower()):
        word = word.strip("./-")
        if word and word not in _STOPWORDS and word not in terms:
            terms.append(word)
    return terms


def _clip(text: str, terms: Sequence[str], width: int) -> str:
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    lower = text.lower()
    hits = [pos for pos in (lower.find(t) for t in terms) if pos >= 0]
    centre = min(hits) if hits else 0
    start = max(0, min(centre - width // 3, len(text) - width))
    end = start + width
    return ("…" if start else "") + text[start:end].strip() + ("…" if end < len(text) else "")


def extractive_recap(
    transcript: str,
    query: str = "",
    *,
    matched_message_ids: Iterable[int] = (),
    reason: str = "summarization unavailable",
    header: str | None = None,
    max_chars: int = 2000,
    snippet_chars: int = 300,
    neighbours: int = 1,
) -> str:
    """Build a labelled, extractive recap of a transcript: matched messages plus neighbours.

    Args:
        transcript: The retriever's transcript (``[USER]: ...`` blocks, with or without ids).
        query: The search query; its words locate matches when ids are not available.
        matched_message_ids: Ids of the messages the search matched (retriever metadata).
        reason: Why there is no summary; shown in the label.
        header: Optional line describing the session (date, source, title).
        max_chars: Budget for the recap body.
        snippet_chars: Longest excerpt of a single message.
        neighbours: Messages kept on each side of a match.

    Returns:
        Never an empty string.

    Example:
        >>> print(extractive_recap("[USER #1]: hi\\n\\n[USER #2]: docker fails", "docker",
        ...                        neighbours=0, reason="no model configured"))
        [Not summarized (no model configured): extractive recap of the matching messages]
        [USER #2]: docker fails
    """
    label = f"[Not summarized ({reason}): extractive recap of the matching messages]"
    lines = [label] + ([header] if header else [])
    blocks = parse_transcript(transcript)
    if not blocks:
        body = _clip(transcript, query_terms(query), max_chars) if transcript.strip() else ""
        return "\n".join([*lines, body or "No transcript available."])

    terms = query_terms(query)
    wanted_ids = set(matched_message_ids)
    hits = [
        i
        for i, b in enumerate(blocks)
        if (b.message_id is not None and b.message_id in wanted_ids)
        or any(t in b.text.lower() for t in terms)
    ]
    if not hits:
        # Nothing located: the opening request and the last answer frame the session best.
        first_user = next((i for i, b in enumerate(blocks) if b.tag == "USER"), 0)
        last_assistant = max(
            (i for i, b in enumerate(blocks) if b.tag == "ASSISTANT"), default=len(blocks) - 1
        )
        keep = sorted({first_user, last_assistant})
        hit_set: set[int] = set()
    else:
        hit_set = set(hits)
        keep = sorted(
            {j for i in hits for j in range(i - neighbours, i + neighbours + 1)}
            & set(range(len(blocks)))
        )

    used = 0
    previous = None
    for i in keep:
        # Neighbours only give context: half the room of a match.
        width = snippet_chars if i in hit_set or not hit_set else snippet_chars // 2
        piece = blocks[i].render(_clip(blocks[i].text, terms, width))
        if used + len(piece) > max_chars and used:
            lines.append("…")
            break
        if previous is not None and i != previous + 1:
            lines.append("…")
        lines.append(piece)
        used += len(piece) + 1
        previous = i
    return "\n".join(lines)
