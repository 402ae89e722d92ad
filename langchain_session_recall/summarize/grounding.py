"""Validation of the message-id citations a summary makes (pure, no I/O).

The prompt asks the model to cite ``[#42]`` for key facts. Small models invent ids; a citation
that points at no message of the transcript is worse than none, so it is removed (or kept and
flagged) and reported in the Document metadata.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field

__all__ = ["CitationCheck", "check_citations"]

# `[#42]`, `[#42, #43]`, `(#42)`, `[# 42; #7]`, and transcript-style `[USER #42]`
_GROUP = re.compile(
    r"(?P<lead>[ \t]*)"
    r"(?P<group>[\[(]\s*(?:[A-Z]+(?::[^\]#\n]+)?\s+)?#\s*\d+(?:\s*[,;]\s*#?\s*\d+)*\s*[\])])"
)
_ID = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class CitationCheck:
    """Outcome of :func:`check_citations`."""

    text: str
    valid: list[int] = field(default_factory=list)
    invalid: list[int] = field(default_factory=list)


def check_citations(
    summary: str, known_ids: Collection[int], *, remove_invalid: bool = True
) -> CitationCheck:
    """Find ``[#id]`` citations in ``summary`` and check them against ``known_ids``.

    Args:
        summary: The model's summary.
        known_ids: Message ids present in the transcript that was summarized.
        remove_invalid: Drop unknown ids from the text (a group left empty disappears with the
            space before it); when False the text is unchanged and the ids are only reported.

    Example:
        >>> r = check_citations("Ran pytest [#4, #99]. Fixed it (#7).", {4, 5})
        >>> r.text, r.valid, r.invalid
        ('Ran pytest [#4]. Fixed it.', [4], [7, 99])
        >>> check_citations("[USER #4]: hi [ASSISTANT #8]: yo", {4}).text
        '[USER #4]: hi: yo'

    """
    valid: set[int] = set()
    invalid: set[int] = set()

    def fix(match: re.Match[str]) -> str:
        lead, group = match.group("lead"), match.group("group")
        ids = [int(x) for x in _ID.findall(group[group.index("#") :])]
        good = [i for i in ids if i in known_ids]
        valid.update(good)
        invalid.update(i for i in ids if i not in known_ids)
        if not remove_invalid or len(good) == len(ids):
            return match.group(0)
        if not good:
            return ""
        return lead + "[" + ", ".join(f"#{i}" for i in good) + "]"

    text = _GROUP.sub(fix, summary)
    return CitationCheck(text=text, valid=sorted(valid), invalid=sorted(invalid))
