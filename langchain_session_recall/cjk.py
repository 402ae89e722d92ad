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

__all__ = ["CJK_RUN", "bigram_text", "has_cjk"]

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
