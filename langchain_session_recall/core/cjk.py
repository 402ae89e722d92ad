"""What counts as CJK (the one table), and CJK text for the bigram index (pure).

SQLite's ``unicode61`` tokenizer treats a run of Chinese/Japanese/Korean characters as one token,
so ``修改youer服务端`` is a single word and neither ``服务`` nor ``youer`` finds it. Without a
compiled tokenizer we index a second copy of CJK-bearing messages in which every CJK run is
replaced by its overlapping character bigrams (``服务端`` -> ``服务 务端``). A CJK query word gets
the same treatment and becomes a phrase, so two-character words and longer words both match,
and Latin words glued to CJK become separate tokens. How a query's CJK text is cut into words
(punctuation, long runs, scripts, question words) is the parser's, beside it in
:mod:`~langchain_session_recall.core.query`: it reads the table here.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "CJK_CHARS",
    "CJK_PUNCTUATION",
    "CJK_RANGES",
    "CJK_RUN",
    "HAN",
    "HANGUL",
    "HIRAGANA",
    "KATAKANA",
    "bigram_text",
    "char_class",
    "has_cjk",
]

# The one table of what counts as CJK: the index, the query, the highlighter, the integrity
# check and the recap gate all read it.
HIRAGANA = ((0x3040, 0x309F),)
KATAKANA = ((0x30A0, 0x30FF),)  # with the prolonged sound mark
HAN = (
    (0x3400, 0x4DBF),  # CJK Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0x20000, 0x2A6DF),  # CJK Extension B
)
HANGUL = ((0xAC00, 0xD7AF),)  # Hangul syllables
CJK_RANGES: tuple[tuple[int, int], ...] = (*HIRAGANA, *KATAKANA, *HAN, *HANGUL)
"""Code point ranges (first, last) of the characters indexed as CJK bigrams."""


def char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    """The inside of a regular expression's character class for ``ranges`` (Python's and
    PostgreSQL's syntax alike).

    Example:
        >>> char_class(((0x41, 0x43),))
        'A-C'
    """
    return "".join(f"{chr(first)}-{chr(last)}" for first, last in ranges)


CJK_CHARS = char_class(CJK_RANGES)
"""Every CJK character, as the inside of a character class: ``f"[{CJK_CHARS}]"``."""
CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
"""A run of CJK characters."""

# Blocks whose punctuation and symbols (Unicode categories P* and S*) CJK text is written with:
# radicals and strokes, CJK Symbols and Punctuation (、。「」), the kana blocks' marks (・),
# enclosed and compatibility forms, vertical and small forms, full- and half-width forms (，？).
_PUNCTUATION_BLOCKS = (
    (0x2E80, 0x2FFF),
    (0x3000, 0x30FF),
    (0x3190, 0x33FF),
    (0xFE10, 0xFE1F),
    (0xFE30, 0xFE6F),
    (0xFF00, 0xFFEF),
)
CJK_PUNCTUATION = "".join(
    re.escape(chr(c))
    for first, last in _PUNCTUATION_BLOCKS
    for c in range(first, last + 1)
    if unicodedata.category(chr(c))[0] in "PS"
)
"""The punctuation and symbols CJK text is written with, escaped, as the inside of a character
class: where a Chinese or Japanese question's words part."""


def has_cjk(text: str) -> bool:
    """Whether ``text`` contains any CJK character."""
    return CJK_RUN.search(text) is not None


def _bigrams(run: str) -> str:
    if len(run) == 1:
        return run
    return " ".join(run[i : i + 2] for i in range(len(run) - 1))


def bigram_text(text: str) -> str:
    """``text`` with each CJK run replaced by its space-separated bigrams.

    Example:
        >>> bigram_text("修改youer服务端")
        ' 修改 youer 服务 务端 '
    """
    return CJK_RUN.sub(lambda m: f" {_bigrams(m.group(0))} ", text)
