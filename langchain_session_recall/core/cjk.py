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

__all__ = ["CJK_RUN", "CJK_STOP_BIGRAMS", "bigram_text", "has_cjk", "query_segments"]

CJK_RUN = re.compile(
    "["
    "\u3040-\u30ff"  # Hiragana, Katakana (incl. the prolonged sound mark)
    "\u3400-\u4dbf"  # CJK Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\U00020000-\U0002a6df"  # CJK Extension B
    "]+"
)


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
    "([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df]+"
    "|[\u30a0-\u30ff]+|[\u3040-\u309f]+|[\uac00-\ud7af]+)"
)
_HIRAGANA = re.compile("[\u3040-\u309f]+")


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
