"""A small language detector for the recap quality gate (pure, no dependency).

Enough to tell that a recap is written in a language its transcript is not in, nothing more:
non-Latin text is told apart by Unicode script (CJK ideographs without kana are ``zh``, with kana
``ja``; Hangul ``ko``; Cyrillic ``ru``; Greek, Arabic, Hebrew, Devanagari, Thai), Latin text by
counting stop words of English, German, French, Spanish, Italian, Portuguese and Dutch. A text
with too little evidence is undecided (``None``), and the gate lets an undecided text pass. A
statistical detector (``langdetect``, ``lingua``) would be a new core dependency of several MB
for a decision that only has to catch a model switching language.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

__all__ = ["STOPWORDS", "detect_language", "language_profile", "languages_present"]

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS: dict[str, frozenset[str]] = {
    "en": _words(
        "the and of to is was were that this with for it on are be by from has have had not "
        "but or which what when they we you he she there their been would could should will "
        "into then than so if about after all also its our your can did does only out up who "
        "how because now more some any these those being"
    ),
    "de": _words(
        "der die das und ist nicht ein eine einen dem den mit sich auf für auch wir ich sie "
        "wurde werden hat haben bei aus nach wie oder aber noch nur zu von im dass wenn kann "
        "schon sind zum zur einem einer"
    ),
    "fr": _words(
        "le les du une et est qui dans pour pas sur au aux avec ce cette il elle nous vous ils "
        "sont été être fait mais ou où ne se son sa ses leur plus par était"
    ),
    "es": _words(
        "el los las y del por para con una se su sus lo como más pero fue ha han está están "
        "muy también cuando sobre entre hasta desde este esta eso usuario"
    ),
    "it": _words(
        "il gli della delle dei che è di per non sono nel nella anche come più ma questo questa "
        "stato stata hanno alla al sul dalla utente"
    ),
    "pt": _words(
        "os um não em do da dos das com para é foi são mais mas também ao aos na pela pelo "
        "isso está você usuário"
    ),
    "nl": _words(
        "het een en van dat niet op te met voor zijn er maar om ook als aan bij nog wordt werd "
        "naar dan wat heeft hebben deze dit geen"
    ),
}
"""Frequent function words per Latin-script language (lower case)."""

_SCRIPT_LANG = {
    "CJK": "zh",
    "HIRAGANA": "ja",
    "KATAKANA": "ja",
    "HANGUL": "ko",
    "CYRILLIC": "ru",
    "GREEK": "el",
    "ARABIC": "ar",
    "HEBREW": "he",
    "DEVANAGARI": "hi",
    "THAI": "th",
}
_WIDE = frozenset({"CJK", "HIRAGANA", "KATAKANA", "HANGUL"})


def _script(ch: str) -> str | None:
    if not ch.isalpha():
        return None
    if ch.isascii():
        return "LATIN"
    try:
        name = unicodedata.name(ch)
    except ValueError:
        return None
    for script in _SCRIPT_LANG:
        if name.startswith(script):
            return script
    return "LATIN" if "LATIN" in name else None


def language_profile(text: str) -> dict[str, float]:
    """Weight of each language in ``text``.

    Letters are counted per script (a CJK, kana or Hangul character counts double: one carries
    about as much as two Latin letters). Latin letters are shared among the Latin languages in
    proportion to their stop words, or kept as ``"latin"`` when there are fewer than 2.

    Example:
        >>> sorted(language_profile("把端口改为9000, and the port was changed").items())
        [('en', 20.0), ('zh', 10.0)]
    """
    letters: Counter[str] = Counter()
    for ch in text:
        script = _script(ch)
        if script is not None:
            letters[script] += 2 if script in _WIDE else 1
    profile: dict[str, float] = {}
    cjk = letters.pop("CJK", 0)
    kana = letters.pop("HIRAGANA", 0) + letters.pop("KATAKANA", 0)
    if kana and kana >= 0.05 * (kana + cjk):
        profile["ja"] = float(kana + cjk)
    elif cjk:
        profile["zh"] = float(cjk)
    latin = letters.pop("LATIN", 0)
    for script, n in letters.items():
        lang = _SCRIPT_LANG[script]
        profile[lang] = profile.get(lang, 0.0) + n
    if latin:
        words = _WORD.findall(text.lower())
        hits = {lang: sum(w in stop for w in words) for lang, stop in STOPWORDS.items()}
        total = sum(hits.values())
        if total < 2:
            profile["latin"] = float(latin)
        else:
            for lang, n in hits.items():
                if n:
                    profile[lang] = latin * n / total
    return profile


def detect_language(text: str, *, dominance: float = 0.6) -> str | None:
    """The dominant language of ``text`` (ISO 639-1 code), or None when undecided.

    Undecided: no letters, Latin text with fewer than 2 stop words, or no language holding
    ``dominance`` of the weight.

    Example:
        >>> detect_language("The user fixed the CORS error in nginx.")
        'en'
        >>> detect_language("Der Benutzer hat den Fehler in nginx behoben, und es läuft.")
        'de'
        >>> detect_language("把端口改为9000，同时更新健康检查的地址。")
        'zh'
        >>> detect_language("nginx add_header") is None
        True
    """
    profile = language_profile(text)
    profile.pop("latin", None)
    total = sum(profile.values())
    if not total:
        return None
    lang, weight = max(profile.items(), key=lambda kv: kv[1])
    return lang if weight >= dominance * total else None


def languages_present(text: str, *, share: float = 0.1) -> set[str]:
    """Languages holding at least ``share`` of the weight of ``text``. ``"latin"`` stands for
    Latin-script text whose language is undecided (any Latin language may be meant).

    Example:
        >>> sorted(languages_present("把端口改为9000，同时更新健康检查的地址。Running upgrade"))
        ['latin', 'zh']
    """
    profile = language_profile(text)
    total = sum(profile.values())
    return {lang for lang, w in profile.items() if total and w >= share * total}
