"""CJK text for the bigram index (pure).

SQLite's ``unicode61`` tokenizer treats a run of Chinese/Japanese/Korean characters as one token,
so ``修改youer服务端`` is a single word and neither ``服务`` nor ``youer`` finds it. Without a
compiled tokenizer we index a second copy of CJK-bearing messages in which every CJK run is
replaced by its overlapping character bigrams (``服务端`` -> ``服务 务端``). A CJK query word gets
the same treatment and becomes a phrase, so two-character words and longer words both match,
and Latin words glued to CJK become separate tokens.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "CJK_CHARS",
    "CJK_RANGES",
    "CJK_RUN",
    "CJK_STOP_BIGRAMS",
    "bigram_text",
    "char_class",
    "cut_long_runs",
    "has_cjk",
    "query_segments",
    "separate_cjk_words",
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
_CJK_PUNCTUATION = "".join(
    re.escape(chr(c))
    for first, last in _PUNCTUATION_BLOCKS
    for c in range(first, last + 1)
    if unicodedata.category(chr(c))[0] in "PS"
)
# A word boundary in a CJK query: CJK punctuation anywhere, and any other punctuation or symbol
# next to a CJK character ("deploy失败,怎么办"). '*' (a prefix) and '"' (a phrase) stay syntax.
_SEPARATOR = re.compile(
    f'[{_CJK_PUNCTUATION}]|(?<=[{CJK_CHARS}])[^\\w\\s*"]|[^\\w\\s*"](?=[{CJK_CHARS}])'
)


def separate_cjk_words(text: str) -> str:
    """``text`` with CJK punctuation (and punctuation touching CJK text) made spaces.

    Chinese and Japanese write no spaces: the punctuation is where a question's words part, so
    ``失败了，怎么办`` is two words, not the phrase "失败了 怎么办" a hyphen makes of
    ``docker-compose``.

    Example:
        >>> separate_cjk_words("数据库迁移失败了，怎么办？ docker-compose deploy失败,怎么办")
        '数据库迁移失败了 怎么办  docker-compose deploy失败 怎么办'
    """
    return _SEPARATOR.sub(" ", text)


def cut_long_runs(text: str, max_chars: int) -> str:
    """``text`` with every CJK run longer than ``max_chars`` cut into pieces of ``max_chars``
    separated by spaces, each piece starting on the last character of the one before (so every
    bigram of the run is in a piece).

    A run with no punctuation in it is a sentence or a paragraph, not a word: searched as
    one token it would match only the same paragraph.

    Example:
        >>> cut_long_runs("ab数据库迁移", 3)
        'ab数据库 库迁移'
    """
    step = max(1, max_chars - 1)

    def cut(match: re.Match[str]) -> str:
        run = match.group(0)
        if len(run) <= max_chars:
            return run
        starts = range(0, len(run) - 1, step)
        return " ".join(run[i : i + max_chars] for i in starts)

    return CJK_RUN.sub(cut, text)


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


# Two-character question and filler words of Chinese recall questions ("上次怎么修改的...").
_STOP = "怎么 什么 为什 么样 如何 上次 之前 以前 我们 你们 那个 这个 哪个 时候 一下 多少 是不 有没"
CJK_STOP_BIGRAMS = frozenset([*_STOP.split(), "可以", "能不", "帮我", "请问", "记得"])
# Chinese function characters that end a word: a run is split there before taking bigrams.
_ZH_BREAKS = "的了吗呢吧啊是在和把就都也还又与及或"
# One segment per script: Han, Katakana (with the prolonged sound mark), Hiragana, Hangul,
# anything else (Latin, digits). Japanese questions glue particles (hiragana) to words.
_SEGMENT = re.compile(
    f"([{char_class(HAN)}]+|[{char_class(KATAKANA)}]+|[{char_class(HIRAGANA)}]+"
    f"|[{char_class(HANGUL)}]+)"
)
_HIRAGANA = re.compile(f"[{char_class(HIRAGANA)}]+")


def query_segments(token: str) -> list[str]:
    """Split one query token (CJK glued to Latin) into the parts worth searching.

    Scripts are separated (``youer服务端`` -> ``youer``, ``服务端``; ``キャッシュが効かない`` ->
    ``キャッシュ``, ``効``), Chinese runs are cut at function characters (``的``, ``了``) and
    Japanese particles and inflection endings (hiragana next to other scripts) are dropped.

    Example:
        >>> query_segments("上次修改的youer服务端")
        ['上次修改', 'youer', '服务端']
        >>> query_segments("Dockerのキャッシュが効かない")
        ['Docker', 'キャッシュ', '効']
    """
    parts = [p for p in _SEGMENT.split(token) if p]
    only_hiragana = all(_HIRAGANA.fullmatch(p) for p in parts)
    out: list[str] = []
    for part in parts:
        if _HIRAGANA.fullmatch(part) and not only_hiragana:
            continue
        if "\u4e00" <= part[0] <= "\u9fff":
            out.extend(p for p in re.split(f"[{_ZH_BREAKS}]", part) if p)
        else:
            out.append(part)
    return out
