"""Recap quality gate: is a model's answer a summary of the transcript? (pure, no I/O)

Small local models answer a summarization prompt with fluent text that is not a summary: the
transcript continued or copied, the prompt read back, a phrase repeated until the token limit,
chat-template tokens, an answer cut off mid-sentence, another language, a story that never
happened, or a sentence that only restates the session title. :func:`assess_recap` measures each
of these and returns a :class:`RecapVerdict`; the summarizer serves a rejected recap as the
extractive recap instead (``summary_status="rejected"``).

Reason codes (stable; they end up in ``summary_rejected_because``), in the order reported:

``empty``
    No words left once citations, transcript tags, template tokens and markup are removed.
``template_tokens``
    A chat-template token the transcript does not itself contain (``<<SYS>>``, ``[INST]``,
    ``<start_of_turn>``, ``<|im_start|>``, ``<|eot_id|>``, ``</s>``, ``### Response:``, ...).
``transcript_format``
    ``transcript_lines`` or more lines start with a transcript tag (``[USER #3]:``,
    ``[ASSISTANT]:``), or one line starts with a tag whose message id the transcript does not
    have (``[ASSISTANT #215]:`` after ``#214``): the model went on writing the conversation
    instead of recapping it.
``echo``
    ``echo`` or more of the recap's words lie in runs of ``echo_ngram`` consecutive words (twice
    as many characters for CJK text) copied verbatim from the transcript or from the prompt; or
    ``echo_prompt_words`` or more of its content words are the prompt's own words (instructions,
    query, title) rather than the transcript's: the recap talks about the task, not the session.
``loop``
    ``loop`` or more of the recap's word trigrams repeat an earlier one, one line of 12+
    characters occurs ``loop_lines`` times, or a sentence of ``loop_sentence_words`` or more
    words occurs twice.
``truncated``
    Cut off: the finish reason says the token limit was hit (``length``, ``max_tokens``, ...)
    and the last line is not closed by a sentence end; or, whatever the finish reason, the text
    ends on a dangling word (``the``, ``and``, ``to``, ...), a comma, colon or open bracket, an
    empty list item (``3.``), or inside a code block.
``language``
    Written in a language that neither the transcript (with ``context``) nor the prompt's
    instructions are in (see :mod:`langchain_session_recall.summarize.language`; an
    undecided text passes). An English recap of a Chinese session is allowed when the prompt
    is English.
``invented``
    Content not in the transcript: fewer than ``grounded`` of the recap's content words (with
    at least ``min_content_words`` of them) occur in the transcript, or ``invented_specifics``
    or more *specifics* (numbers, paths, identifiers, quoted code, names) occur neither in the
    transcript nor in the prompt and make up ``invented_specifics_share`` of the specifics, or
    ``invented_numbers`` specifics with two or more digits (a version, port, size or date) do.
    Content words exclude stop words and the prompt's own words; a word matches a transcript
    word by its first five letters (``renamed`` matches ``renaming``); CJK text counts by
    character bigrams. The word share is not measured when the recap is in another language
    than the transcript (allowed by the prompt's language): only specifics are compared then.
``vague``
    The recap names no specific from the transcript beyond the prompt's own (query, title),
    although the transcript offers ``vague_source_specifics`` or more: it restates the topic
    and says nothing an agent could use.

Citations (``[#42]``, ``[#42, #43]``, ``(#7)``, inline ``[USER #3]``, ``(USER #4, TOOL #6)``;
any ``#<id>``) are removed before any measure: they are neither copied words, loops, nor
invented words.

Calibration (``tests/data/recaps/``; ``scripts/recap_gate_report.py`` prints the figures): 140
real answers to the summarizer's prompt on 10 demo transcripts, recorded against llama.cpp at
``max_tokens`` 32/128/384 and temperature 0.1/0.8, labelled by hand (139 bad, 1 good), and 26
hand-written reference recaps. The thresholds were set on the 70 SmolLM2-135M-Instruct answers
and 18 references; the 70 Gemma 3 270M answers and 8 later references were held out. Result:
all 139 bad answers rejected, each for a defect it was labelled with; all 27 good recaps
accepted. Every check fired only on bad answers (precision 100%); recall against the defects
labelled: ``template_tokens`` 1/1, ``transcript_format`` 58/64, ``echo`` 81/84, ``loop`` 20/21,
``truncated`` 111/114, ``invented`` 45/63, ``vague`` 23/25 (no recording was empty or in
another language: the fuzz tests cover those). 20 recaps of Qwen2.5-Coder-1.5B-Instruct, added
later and held out, are all accepted. Where the good recaps sit: at most 59% copied words
(``echo`` 65%), 16% prompt words (40%), 12% repeated trigrams (``loop`` 20%); at least 70%
grounded content words (``grounded`` 50%) and 1 new specific; at most 1 invented specific. The
good side is small: false rejections of a strong model's recaps are not measured. What the
gate cannot see: a recap built from the transcript's own words and specifics that states
something the transcript does not (right words, wrong story) passes.
The gate rejects what is visibly not a summary.

Example:
    >>> transcript = (
    ...     "[USER #1]: docker ps says permission denied on /var/run/docker.sock\\n\\n"
    ...     "[ASSISTANT #2]: You were not in the docker group; I ran sudo usermod -aG docker dev."
    ... )
    >>> good = "Docker said permission denied on /var/run/docker.sock [#1]; the user was added "
    >>> good += "to the docker group with `sudo usermod -aG docker dev` [#2]."
    >>> assess_recap(good, transcript=transcript).ok
    True
    >>> assess_recap("<<SYS>> docker group [ERROR] docker group [ERROR] docker group [ERROR]",
    ...              transcript=transcript).reasons
    ('template_tokens', 'loop')
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field

from langchain_session_recall.core.cjk import CJK_CHARS
from langchain_session_recall.recall import tags
from langchain_session_recall.summarize.language import (
    STOPWORDS,
    detect_language,
    languages_present,
)

__all__ = [
    "DEFAULT_THRESHOLDS",
    "GATE_VERSION",
    "REASONS",
    "RecapThresholds",
    "RecapVerdict",
    "assess_recap",
    "gate_fingerprint",
    "is_length_stop",
]

GATE_VERSION = "recap-gate-v2"
"""Bump when a check changes meaning. A cache that stores the gate's decision should store this
(with the thresholds) so that decisions made by another gate are taken again."""

EMPTY = "empty"
TEMPLATE_TOKENS = "template_tokens"
TRANSCRIPT_FORMAT = "transcript_format"
ECHO = "echo"
LOOP = "loop"
TRUNCATED = "truncated"
LANGUAGE = "language"
INVENTED = "invented"
VAGUE = "vague"
REASONS = (
    EMPTY,
    TEMPLATE_TOKENS,
    TRANSCRIPT_FORMAT,
    ECHO,
    LOOP,
    TRUNCATED,
    LANGUAGE,
    INVENTED,
    VAGUE,
)
"""Every reason code, in the order :func:`assess_recap` reports them."""


@dataclass(frozen=True, slots=True)
class RecapThresholds:
    """Where each check draws its line (defaults calibrated on ``tests/data/recaps/``)."""

    echo: float = 0.65
    """``echo``: share of the recap's words copied in runs of ``echo_ngram`` words."""
    echo_ngram: int = 6
    echo_prompt_words: float = 0.4
    """``echo``: share of the content words that are the prompt's own (instructions, title),
    with at least ``min_content_words`` of them: the recap talks about the task."""
    loop: float = 0.2
    """``loop``: share of the recap's word trigrams that repeat an earlier one."""
    loop_lines: int = 3
    """``loop``: occurrences of one line (12+ characters)."""
    loop_sentence_words: int = 8
    """``loop``: a sentence of this many words occurring twice."""
    min_loop_words: int = 6
    """Below this many words the trigram measure of ``loop`` abstains."""
    transcript_lines: int = 2
    """``transcript_format``: lines starting with a transcript tag."""
    grounded: float = 0.5
    """``invented``: least share of content words found in the transcript."""
    min_content_words: int = 6
    """Below this many content words the word share of ``invented`` abstains."""
    invented_specifics: int = 2
    """``invented``: specifics found neither in the transcript nor in the prompt ..."""
    invented_specifics_share: float = 0.5
    """... when they are at least this share of the recap's specifics."""
    invented_numbers: int = 1
    """``invented``: specifics with two or more digits (versions, ports, sizes, dates) found
    neither in the transcript nor in the prompt. Recall must keep numbers exact."""
    vague_source_specifics: int = 3
    """``vague`` applies only when the transcript offers this many specifics of its own."""


DEFAULT_THRESHOLDS = RecapThresholds()


def gate_fingerprint(thresholds: RecapThresholds = DEFAULT_THRESHOLDS) -> str:
    """:data:`GATE_VERSION`, plus a hash of ``thresholds`` when they are not the defaults: what a
    cached verdict was decided under.

    Example:
        >>> gate_fingerprint()
        'recap-gate-v2'
        >>> gate_fingerprint(RecapThresholds(loop=0.3)).startswith("recap-gate-v2+")
        True
    """
    if thresholds == DEFAULT_THRESHOLDS:
        return GATE_VERSION
    blob = json.dumps(dataclasses.asdict(thresholds), sort_keys=True).encode("utf-8")
    return f"{GATE_VERSION}+{hashlib.sha256(blob).hexdigest()[:12]}"


@dataclass(frozen=True, slots=True)
class RecapVerdict:
    """What :func:`assess_recap` found. ``ok`` is True exactly when ``reasons`` is empty."""

    ok: bool
    reasons: tuple[str, ...]
    words: int = 0
    """Words of the recap once citations, tags and template tokens are removed."""
    copied: float = 0.0
    """Share of those words inside a verbatim run from the transcript or the prompt."""
    copied_from_transcript: float = 0.0
    copied_from_prompt: float = 0.0
    prompt_words: float = 0.0
    """Share of the content words that come from the prompt's other text, not the transcript."""
    repetition: float = 0.0
    """Share of word trigrams repeating an earlier one."""
    grounded: float | None = None
    """Share of content words found in the transcript (None: not measured)."""
    content_words: int = 0
    specifics: int = 0
    """Numbers, paths, identifiers, quoted code and names in the recap."""
    new_specifics: int = 0
    """Specifics found in the transcript but not in the prompt's other text (query, title)."""
    invented_specifics: int = 0
    """Specifics found neither in the transcript nor in the prompt."""
    language: str | None = None
    """Detected language of the recap (None: undecided)."""
    allowed_languages: tuple[str, ...] = ()
    template_tokens: tuple[str, ...] = ()
    finish_reason: str | None = None
    details: dict[str, str] = field(default_factory=dict)
    """One human-readable line per reason."""

    def scores(self) -> dict[str, object]:
        """The measures as a JSON-friendly dict (for Document metadata).

        Example:
            >>> assess_recap("", transcript="[USER]: hi").scores()["words"]
            0
        """
        return {
            "words": self.words,
            "copied": round(self.copied, 3),
            "copied_from_transcript": round(self.copied_from_transcript, 3),
            "copied_from_prompt": round(self.copied_from_prompt, 3),
            "prompt_words": round(self.prompt_words, 3),
            "repetition": round(self.repetition, 3),
            "grounded": None if self.grounded is None else round(self.grounded, 3),
            "content_words": self.content_words,
            "specifics": self.specifics,
            "new_specifics": self.new_specifics,
            "invented_specifics": self.invented_specifics,
            "language": self.language,
            "allowed_languages": list(self.allowed_languages),
            "template_tokens": list(self.template_tokens),
            "finish_reason": self.finish_reason,
        }


# -- text preparation ----------------------------------------------------------------------------

_TEMPLATE_TOKEN = re.compile(
    r"<</?SYS>>|\[/?INST\]|<start_of_turn>|<end_of_turn>|<\|[A-Za-z0-9_]{2,40}\|>|</?s>"
    r"|<bos>|<eos>|<pad>|<unk>|^#{2,3} ?(?:Instruction|Response|Input):",
    re.MULTILINE,
)
# `[#42]`, `[#42, #43]`, `(#42)`, `[USER #42]`, `[# 42; #7]` (as grounding.py reads them)
_CITATION = re.compile(
    r"[\[(]\s*(?:[A-Z]+(?::[^\]#\n]+)?\s+)?#\s*\d+(?:\s*[,;]\s*#?\s*\d+)*\s*[\])]"
)
# Any other message reference: `#54`, `USER #54`, `TOOL:terminal #56` (in any brackets)
_LOOSE_CITATION = re.compile(r"(?:\b[A-Z]{2,}(?::[\w-]+)?\s+)?#\s*\d+\b")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_CJK = CJK_CHARS  # the one table: kana, Han (Extension B too), Hangul
_CJK_CHAR = re.compile(f"[{_CJK}]")
_CJK_SPLIT = re.compile(f"([{_CJK}])")

_LENGTH_STOPS = frozenset({"length", "max_tokens", "max_output_tokens", "model_length"})


def is_length_stop(finish_reason: str | None) -> bool:
    """Whether a provider's finish or stop reason means "hit the token limit".

    Example:
        >>> is_length_stop("length"), is_length_stop("MAX_TOKENS"), is_length_stop("stop")
        (True, True, False)
    """
    return finish_reason is not None and finish_reason.strip().lower() in _LENGTH_STOPS


def _strip_markup(text: str) -> str:
    text = _CITATION.sub(" ", text)
    text = _LOOSE_CITATION.sub(" ", text)
    text = tags.INDENTED_TAG.sub(" ", text)
    return _TEMPLATE_TOKEN.sub(" ", text)


def _tokens(text: str) -> list[str]:
    """Lower-cased words; CJK runs split into single characters."""
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        if _CJK_CHAR.search(word):
            out.extend(part for part in _CJK_SPLIT.split(word) if part)
        else:
            out.append(word)
    return out


# -- echo ----------------------------------------------------------------------------------------


def _copy_grams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    """The n-grams of ``tokens`` and, for windows starting on a CJK character, the 2n-grams."""
    grams = {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}
    grams.update(
        tuple(tokens[i : i + 2 * n])
        for i in range(len(tokens) - 2 * n + 1)
        if _CJK_CHAR.match(tokens[i])
    )
    return grams


def _coverage(tokens: list[str], grams: set[tuple[str, ...]], n: int) -> float:
    """Share of ``tokens`` inside a window found in ``grams``: n words, or 2n characters when
    the window starts on a CJK character (a CJK character is about half a word)."""
    if not tokens or not grams:
        return 0.0
    covered = [False] * len(tokens)
    for i in range(len(tokens)):
        size = 2 * n if _CJK_CHAR.match(tokens[i]) else n
        if i + size <= len(tokens) and tuple(tokens[i : i + size]) in grams:
            covered[i : i + size] = [True] * size
    return sum(covered) / len(tokens)


# -- loop ----------------------------------------------------------------------------------------


def _repetition(tokens: list[str]) -> float:
    grams = [tuple(tokens[i : i + 3]) for i in range(len(tokens) - 2)]
    return 1.0 - len(set(grams)) / len(grams) if grams else 0.0


def _most_repeated_line(text: str) -> int:
    lines = (" ".join(ln.split()).lower() for ln in text.splitlines())
    return max(Counter(ln for ln in lines if len(ln) >= 12).values(), default=0)


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")


def _repeated_sentence(text: str, min_words: int) -> str | None:
    """A sentence of ``min_words`` or more words that occurs twice, if any."""
    seen: set[tuple[str, ...]] = set()
    for sentence in _SENTENCE_END.split(text):
        words = tuple(_tokens(sentence))
        if len(words) >= min_words:
            if words in seen:
                return " ".join(words)
            seen.add(words)
    return None


# -- truncation ----------------------------------------------------------------------------------

_CLOSING = tuple(".!?。！？…)]\"'`»」』）*")
_DANGLING_WORDS = frozenset(
    {"a", "an", "the", "and", "or", "but", "of", "to", "with", "for", "in", "on", "at", "by",
     "from", "into", "as", "is", "are", "was", "were", "be", "that", "which", "who", "this",
     "these", "its", "their", "his", "her", "our", "your", "my", "if", "than", "then", "so",
     "because", "while", "when", "where", "has", "have", "had", "not", "no", "such", "via",
     "using"}
)  # fmt: skip
_DANGLING_CHARS = tuple(",;:-–—(/[{=+&|\\")
_EMPTY_LIST_ITEM = re.compile(r"(?:\d{1,2}[.)]|[-*•+])")


def _truncation(text: str, finish_reason: str | None) -> str | None:
    """Why ``text`` looks cut off, or None."""
    if text.count("```") % 2:
        return "ends inside a code block"
    lines = [ln.strip() for ln in _CITATION.sub("", text).splitlines() if ln.strip()]
    if not lines:
        return None
    last = lines[-1]
    words = _WORD.findall(last.lower())
    if _EMPTY_LIST_ITEM.fullmatch(last):
        return f"ends on an empty list item {last!r}"
    if last.endswith(_DANGLING_CHARS):
        return f"ends on {last[-1]!r}"
    if words and words[-1] in _DANGLING_WORDS and last[-1].isalnum():
        return f"ends on the word {words[-1]!r}"
    if is_length_stop(finish_reason) and not last.endswith(_CLOSING):
        return "hit the token limit mid-sentence"
    return None


# -- grounding: content words ------------------------------------------------------------------

_MORE_FUNCTION_WORDS = (
    "a an in i me my mine him his her its us them yours just very here onto over under again "
    "further once both each few most other own same too don't should one two three first "
    "second new used use using via per yes ok okay"
)
_FUNCTION_WORDS = frozenset().union(*STOPWORDS.values(), _MORE_FUNCTION_WORDS.split(" "))


def _stem(word: str) -> str:
    return word[:5] if len(word) > 5 else word.rstrip("s") or word


def _vocabulary(tokens: Iterable[str]) -> set[str]:
    """Stems of ``tokens``, numbers as they are, and the bigrams of CJK runs."""
    vocab: set[str] = set()
    previous = ""
    for tok in tokens:
        if _CJK_CHAR.match(tok):
            if previous:
                vocab.add(previous + tok)
            previous = tok
            continue
        previous = ""
        vocab.add(tok if tok.isdigit() else _stem(tok))
    return vocab


def _content_units(tokens: list[str], neutral: set[str]) -> list[str]:
    """Stems of the recap's content words (numbers of 2+ digits included) and its CJK bigrams,
    leaving out function words and ``neutral`` ones (the prompt's own words)."""
    units: list[str] = []
    previous = ""
    for tok in tokens:
        if _CJK_CHAR.match(tok):
            if previous and previous + tok not in neutral:
                units.append(previous + tok)
            previous = tok
            continue
        previous = ""
        if tok.isdigit():
            if len(tok) >= 2 and tok not in neutral:
                units.append(tok)
        elif len(tok) >= 3 and tok not in _FUNCTION_WORDS and _stem(tok) not in neutral:
            units.append(_stem(tok))
    return units


# -- grounding: specifics ----------------------------------------------------------------------

_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")
_CANDIDATE = re.compile(f"[^\\s{_CJK}\u3000-\u303f\uff00-\uffef]+")
_NUMBER = re.compile(r"(?<![A-Za-z\d])\d+(?:[.,:/-]\d+)*(?![A-Za-z\d])")
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "a.m", "p.m", "u.s"})
_EDGE_PUNCT = "\"'“”‘’()[]{}<>,;!?*"
_INNER_PUNCT = re.compile(r"[\w~][._/:@=+%][\w~/]|^--?[a-z]\w")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n])\s*(?:[-•+]\s*|\d+[.)]\s*)?$")


def _sentence_initial(text: str, start: int) -> bool:
    before = text[max(0, start - 40) : start].rstrip(" \t*#>\"'“(")
    return bool(_SENTENCE_START.search(before)) or not before


def _specifics(text: str) -> list[str]:
    """Numbers, paths, identifiers, quoted code and names in ``text`` (lower case).

    A specific is a backtick span, or a word that has two digits or a digit and a letter, inner
    punctuation (``docker.sock``, ``pool_mode=transaction``, ``/var/log``, ``--apply``), a capital
    letter inside it (``GraphQL``, ``CORS``), or a capital initial away from a sentence start
    (``Pillow``). Plain words, single digits (list numbers) and hyphenated English are not.
    """
    found: list[str] = []
    for span in _CODE_SPAN.finditer(text):
        code = " ".join(span.group(1).split()).lower()
        if code:
            found.append(code)
    rest = _CODE_SPAN.sub(" ", text)
    for m in _CANDIDATE.finditer(rest):
        word = m.group(0).strip(_EDGE_PUNCT).rstrip(".:").strip(_EDGE_PUNCT)
        if not word or word.lower() in _ABBREVIATIONS:
            continue
        digits = sum(c.isdigit() for c in word)
        letters = sum(c.isalpha() for c in word)
        if (
            digits >= 2
            or (digits and letters)
            or _INNER_PUNCT.search(word)
            or (letters >= 2 and any(c.isupper() for c in word[1:]))
            or (
                letters >= 2
                and word[0].isupper()
                and word.isalpha()
                and not _sentence_initial(rest, m.start())
            )
        ):
            found.append(word.lower())
    return found


def _verbatim(source: str, text: str) -> bool:
    return bool(re.search(rf"(?<![A-Za-z0-9_]){re.escape(text)}(?![A-Za-z0-9_])", source))


def _mentions(source: str, source_vocab: set[str], specific: str) -> bool:
    """Whether the lower-cased ``source`` (with its vocabulary) mentions ``specific``: a name by
    its stem; anything else verbatim, or else each of its words with each number verbatim
    (``-1/-2`` for ``-1, -2``; not ``pillow-11.0.2`` for ``pillow-11.0.0``)."""
    if specific.isalpha():
        return _stem(specific) in source_vocab
    if _verbatim(source, specific):
        return True
    words = [w for w in _tokens(specific) if not w.isdigit()]
    numbers = _NUMBER.findall(specific)
    return bool(words or numbers) and (
        all(w in source_vocab or _stem(w) in source_vocab for w in words)
        and all(_verbatim(source, n) for n in numbers)
    )


# -- the gate ------------------------------------------------------------------------------------


@dataclass
class _Reading:
    """The recap and its sources read once (tokens, vocabularies), and what the checks found:
    each check of :data:`CHECKS` reads it and adds its reason, its detail and its measures."""

    recap: str
    transcript: str
    context: str
    prompt: str
    finish_reason: str | None
    thresholds: RecapThresholds
    known_ids: frozenset[str]
    """The message ids the transcript shows (as written in a tag: ``"43"``)."""
    clean: str
    words: list[str]
    around: str
    transcript_clean: str
    transcript_tokens: list[str]
    around_tokens: list[str]
    source_vocab: set[str]
    neutral: set[str]
    reasons: list[str] = field(default_factory=list)
    details: dict[str, str] = field(default_factory=dict)
    leaked: tuple[str, ...] = ()
    copied: float = 0.0
    from_transcript: float = 0.0
    from_prompt: float = 0.0
    prompt_words: float = 0.0
    repetition: float = 0.0
    language: str | None = None
    allowed: set[str] = field(default_factory=set)
    cross_lingual: bool = False
    grounded: float | None = None
    content_words: int = 0
    invented_why: str = ""
    specifics: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    invented: list[str] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        recap: str,
        transcript: str,
        prompt: str,
        context: str,
        finish_reason: str | None,
        thresholds: RecapThresholds,
        known_ids: Collection[int] | None,
    ) -> _Reading:
        clean = _strip_markup(recap)
        around = f"{prompt.replace(transcript, ' ') if transcript else prompt}\n{context}"
        transcript_clean = _strip_markup(transcript)
        transcript_tokens = _tokens(transcript_clean)
        around_tokens = _tokens(_strip_markup(around))
        source_vocab = _vocabulary(transcript_tokens)
        return cls(
            recap=recap,
            transcript=transcript,
            context=context,
            prompt=prompt,
            finish_reason=finish_reason,
            thresholds=thresholds,
            known_ids=frozenset(
                {i for m in tags.INDENTED_TAG.finditer(transcript) if (i := m.group("id"))}
                if known_ids is None
                else {str(i) for i in known_ids}
            ),
            clean=clean,
            words=_tokens(clean),
            around=around,
            transcript_clean=transcript_clean,
            transcript_tokens=transcript_tokens,
            around_tokens=around_tokens,
            source_vocab=source_vocab,
            neutral=_vocabulary(around_tokens) - source_vocab,
        )

    def fail(self, reason: str, why: str) -> None:
        self.reasons.append(reason)
        self.details[reason] = why


def _check_form(r: _Reading) -> None:
    """Empty, template tokens leaked, or written as a transcript (its tags, or new turns)."""
    r.leaked = tuple(
        dict.fromkeys(
            m.group(0).strip()
            for m in _TEMPLATE_TOKEN.finditer(r.recap)
            if m.group(0).strip() not in r.transcript
        )
    )
    recap_tags = [m.group("id") or "" for m in tags.INDENTED_TAG.finditer(r.recap)]
    tag_lines = len(recap_tags)
    new_turns = [i for i in recap_tags if i and r.known_ids and i not in r.known_ids]
    if not r.words:
        r.fail(EMPTY, "no words once citations, tags and template tokens are removed")
    if r.leaked:
        r.fail(TEMPLATE_TOKENS, "leaked " + ", ".join(r.leaked[:5]))
    if tag_lines >= r.thresholds.transcript_lines:
        r.fail(TRANSCRIPT_FORMAT, f"{tag_lines} lines start with a transcript tag")
    elif new_turns:
        r.fail(TRANSCRIPT_FORMAT, f"writes a turn the transcript does not have: #{new_turns[0]}")


def _check_echo(r: _Reading) -> None:
    """Copied verbatim (from the transcript or the prompt), or made of the prompt's words."""
    thresholds, words = r.thresholds, r.words
    n = thresholds.echo_ngram
    transcript_grams = _copy_grams(r.transcript_tokens, n)
    prompt_grams = _copy_grams(r.around_tokens, n) - transcript_grams if r.prompt else set()
    r.from_transcript = _coverage(words, transcript_grams, n)
    r.from_prompt = _coverage(words, prompt_grams, n)
    r.copied = _coverage(words, transcript_grams | prompt_grams, n)
    plain = [w for w in words if len(w) >= 3 and w not in _FUNCTION_WORDS and w.isalpha()]
    r.prompt_words = sum(_stem(w) in r.neutral for w in plain) / len(plain) if plain else 0.0
    if words and r.copied >= thresholds.echo:
        source = "the prompt" if r.from_prompt > r.from_transcript else "the transcript"
        r.fail(ECHO, f"{r.copied:.0%} of the words copied verbatim, mostly from {source}")
    elif (
        len(plain) >= thresholds.min_content_words
        and r.prompt_words >= thresholds.echo_prompt_words
    ):
        r.fail(
            ECHO, f"{r.prompt_words:.0%} of the content words are the prompt's, not the session's"
        )


def _check_loop(r: _Reading) -> None:
    """Word trigrams, a line or a sentence repeated."""
    thresholds = r.thresholds
    r.repetition = _repetition(r.words) if len(r.words) >= thresholds.min_loop_words else 0.0
    repeated_line = _most_repeated_line(r.clean)
    repeated_sentence = _repeated_sentence(r.clean, thresholds.loop_sentence_words)
    if r.repetition >= thresholds.loop:
        r.fail(LOOP, f"{r.repetition:.0%} of word trigrams are repeats")
    elif repeated_line >= thresholds.loop_lines:
        r.fail(LOOP, f"one line occurs {repeated_line} times")
    elif repeated_sentence is not None:
        r.fail(LOOP, f"sentence repeated: {repeated_sentence[:80]!r}")


def _check_truncation(r: _Reading) -> None:
    """Stopped mid-sentence, or at the output budget."""
    cut = _truncation(r.recap, r.finish_reason) if r.words else None
    if cut is not None:
        r.fail(TRUNCATED, cut)


def _check_language(r: _Reading) -> None:
    """Written in a language neither the source nor the prompt uses."""
    r.language = detect_language(r.clean)
    # "latin": Latin text with too few stop words to tell (often code). It allows any Latin
    # language only when the source has no decided language at all.
    source_languages = languages_present(f"{r.transcript}\n{r.context}")
    decided = source_languages - {"latin"}
    r.allowed = set(decided) or (set(STOPWORDS) if source_languages else set())
    if r.prompt:
        r.allowed |= languages_present(r.around, share=0.3) - {"latin"}
    if r.language is not None and r.allowed and r.language not in r.allowed:
        r.fail(LANGUAGE, f"written in {r.language}; allowed: {', '.join(sorted(r.allowed))}")
    r.cross_lingual = r.language is not None and bool(decided) and r.language not in decided


def _check_invented(r: _Reading) -> None:
    """Content words or specifics (names, numbers, paths) the sources do not have."""
    thresholds = r.thresholds
    units = _content_units(r.words, r.neutral)
    r.content_words = len(units)
    if len(units) >= thresholds.min_content_words and not r.cross_lingual:
        r.grounded = sum(u in r.source_vocab for u in units) / len(units)
        if r.grounded < thresholds.grounded:
            r.invented_why = (
                f"only {r.grounded:.0%} of {len(units)} content words are in the transcript"
            )
    source_lower = r.transcript_clean.lower()
    around_lower = r.around.lower()
    around_vocab = _vocabulary(r.around_tokens)
    r.specifics = list(dict.fromkeys(_specifics(r.clean)))
    in_source = [s for s in r.specifics if _mentions(source_lower, r.source_vocab, s)]
    in_around = {s for s in r.specifics if _mentions(around_lower, around_vocab, s)}
    r.new = [s for s in in_source if s not in in_around]
    r.invented = [s for s in r.specifics if s not in in_source and s not in in_around]
    numbers = [s for s in r.invented if sum(c.isdigit() for c in s) >= 2]
    many = len(r.invented) >= thresholds.invented_specifics
    most = len(r.invented) >= thresholds.invented_specifics_share * len(r.specifics)
    if (many and most) or (
        thresholds.invented_numbers and len(numbers) >= thresholds.invented_numbers
    ):
        shown = ", ".join([*numbers, *(s for s in r.invented if s not in numbers)][:4])
        r.invented_why = "; ".join(
            filter(
                None, [r.invented_why, f"{len(r.invented)} specifics not in the source: {shown}"]
            )
        )
    if r.invented_why:
        r.fail(INVENTED, r.invented_why)


def _check_vague(r: _Reading) -> None:
    """Names none of the transcript's specifics beyond what the query and title say."""
    if not r.words or r.new:
        return
    around_lower = r.around.lower()
    around_vocab = _vocabulary(r.around_tokens)
    offered = {
        s for s in _specifics(r.transcript_clean) if not _mentions(around_lower, around_vocab, s)
    }
    if len(offered) >= r.thresholds.vague_source_specifics:
        r.fail(
            VAGUE,
            f"names none of the transcript's {len(offered)} specifics beyond the query and title",
        )


CHECKS: tuple[Callable[[_Reading], None], ...] = (
    _check_form,
    _check_echo,
    _check_loop,
    _check_truncation,
    _check_language,
    _check_invented,
    _check_vague,
)
"""The gate's checks, in :data:`REASONS` order; each adds its reason to the reading."""


def assess_recap(
    recap: str,
    *,
    transcript: str,
    prompt: str = "",
    context: str = "",
    finish_reason: str | None = None,
    thresholds: RecapThresholds = DEFAULT_THRESHOLDS,
    known_ids: Collection[int] | None = None,
) -> RecapVerdict:
    """Decide whether ``recap`` is a summary of ``transcript``.

    Args:
        recap: The model's answer as returned (citations not yet checked).
        transcript: The transcript the model was asked to summarize, as sent (redacted).
        prompt: The whole prompt as sent (system and user messages joined); it may contain the
            transcript. Copies of it are echoes; its other words (instructions, query, title)
            are neutral for ``invented`` and do not count as specifics for ``vague``; its
            instructions' language is allowed.
        context: Other text the recap may draw on, such as query and title, when ``prompt`` is
            not given; it counts like the prompt's other words.
        finish_reason: The provider's finish reason (``"stop"``, ``"length"``, ...) if known.
        thresholds: Where the checks draw their lines.
        known_ids: The ids of the messages the transcript shows (the summarizer's
            :class:`~langchain_session_recall.recall.model.ShownMessage` s whose ids it
            shows): a recap line tagged with another id writes a turn the transcript does not
            have. ``None``: the ids its tags show.

    Returns:
        A :class:`RecapVerdict`; ``reasons`` lists the failed checks in :data:`REASONS` order.

    Example:
        >>> t = "[USER #1]: rename my photos by EXIF date\\n\\n[ASSISTANT #2]: Wrote rename.py."
        >>> assess_recap("The photos were renamed by EXIF date with rename.py [#2].",
        ...              transcript=t).reasons
        ()
        >>> assess_recap("The photos were renamed by", transcript=t,
        ...              finish_reason="length").reasons
        ('truncated',)
    """
    r = _Reading.of(recap, transcript, prompt, context, finish_reason, thresholds, known_ids)
    for check in CHECKS:
        check(r)
    return RecapVerdict(
        ok=not r.reasons,
        reasons=tuple(r.reasons),
        words=len(r.words),
        copied=r.copied,
        copied_from_transcript=r.from_transcript,
        copied_from_prompt=r.from_prompt,
        prompt_words=r.prompt_words,
        repetition=r.repetition,
        grounded=r.grounded,
        content_words=r.content_words,
        specifics=len(r.specifics),
        new_specifics=len(r.new),
        invented_specifics=len(r.invented),
        language=r.language,
        allowed_languages=tuple(sorted(r.allowed)),
        template_tokens=r.leaked,
        finish_reason=finish_reason,
        details=r.details,
    )
