"""Grounding of a recap in its transcript: which messages support each sentence (pure, no I/O).

Two steps, both on message ids:

- :func:`check_citations` validates the ``[#42]`` citations a model wrote. Small models invent
  ids; a citation that points at no message of the transcript is worse than none, so it is
  removed (or kept and flagged) and reported.
- :func:`ground_recap` aligns every sentence of the recap with the transcript's messages
  (the :class:`~langchain_session_recall.recall.model.ShownMessage` s the summarizer reads:
  id and text, from the search result, not parsed back out of its text) and returns, per
  sentence, the ids that support it and whether anything supports it at all. Models rarely
  cite (Qwen2.5-Coder-1.5B wrote no citation in any recorded recap), so the library computes
  the citations itself.

How a sentence is aligned (lexical and entity alignment, no model):

1. Its *terms* are its content words (stop words and recap meta words such as "user" or
   "session" left out, matched by their first five letters, CJK text by character bigrams) and
   its *specifics*: numbers, paths, identifiers, quoted code and names, the quality gate's
   definition (:mod:`langchain_session_recall.summarize.quality`).
2. Citations: the model's own valid citations, else a greedy cover: the message that covers the
   most term weight (rare terms weigh more: inverse document frequency over the messages), then
   further messages while each adds a specific or at least ``min_gain`` of the weight, at most
   ``max_citations`` of them.
3. The sentence is *supported* when every specific occurs in the transcript (or in the prompt's
   context: query, title, date), every number sits in some message next to
   one of the words it sits next to in the sentence (so "connections dropped from 100 to 20"
   is not supported by "default_pool_size=20"), and at least ``min_coverage`` of its content
   words occur in the cited messages.

A sentence in another language than the transcript (an English recap of a Chinese session)
is checked on its specifics only; without any it is ``unchecked`` (and cited where the words it
shares with the transcript are). A line that only labels what
follows (``**Key decisions:**``) has no terms and needs no support.

Example:
    >>> msgs = [ShownMessage(1, "s", "user", "USER",
    ...                      "prod api throws 500s, db at max_connections=100"),
    ...         ShownMessage(2, "s", "assistant", "ASSISTANT", "Put pgbouncer in front; "
    ...                      "connections dropped from 100 to 23. default_pool_size=20")]
    >>> g = ground_recap("The API threw 500s. Pgbouncer cut connections from 100 to 23. "
    ...                  "Connections dropped from 100 to 20.", msgs)
    >>> [(s.status, s.citations) for s in g.sentences]
    [('supported', (1,)), ('supported', (2,)), ('unsupported', (2,))]
    >>> g.render()
    'The API threw 500s [#1]. Pgbouncer cut connections from 100 to 23 [#2].'
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Literal

from langchain_session_recall.recall.model import ShownMessage
from langchain_session_recall.summarize.language import detect_language, languages_present

# The quality gate's text primitives: one definition of a word, a stem, a specific and a
# mention for both the gate and the alignment.
from langchain_session_recall.summarize.quality import (
    _CJK_CHAR,
    _LOOSE_CITATION,
    _content_units,
    _mentions,
    _specifics,
    _stem,
    _tokens,
    _vocabulary,
)

__all__ = [
    "DEFAULT_GROUNDING",
    "CitationCheck",
    "GroundingThresholds",
    "RecapGrounding",
    "SentenceSupport",
    "check_citations",
    "ground_recap",
    "split_sentences",
]

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


def _group_ids(group: str) -> list[int]:
    return [int(x) for x in _ID.findall(group[group.index("#") :])]


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
        ids = _group_ids(group)
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


# -- sentences -----------------------------------------------------------------------------------

_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "approx", "no", "nr", "fig", "mr"})
# A sentence ends at . ! ? (closing quotes or brackets may follow) before a space, or at a CJK
# full stop; the next one starts on a capital, a digit, a quote, a bracket or code.
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'”’)\]]*[ \t]+(?=[\"'“‘(\[`*A-Z0-9])|(?<=[。！？])")
_LIST_MARK = re.compile(r"^[ \t>]*(?:#{1,6}[ \t]+|[-*•+][ \t]+|\d{1,2}[.)][ \t]+)*")
_LIST_ONLY = re.compile(r"[ \t>]*\d{1,2}[.)]")
_LEADING_CITATION = re.compile(r"^(?:[ \t]*[\[(]\s*#\s*\d+(?:\s*[,;]\s*#?\s*\d+)*\s*[\])])+")


def _ends_abbreviation(text: str) -> bool:
    word = re.split(r"[\s(\[]", text.rstrip(".!?"))[-1].lower()
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Spans ``(start, end)`` of the sentences of ``text``: every non-empty line is split at
    sentence ends; list markers stay with their sentence; a citation written after the full
    stop (``It worked. [#7]``) belongs to the sentence before it.

    Example:
        >>> t = "Fixed it, e.g. with nginx 1.24. It works. [#7]\\n- Port 9000.\\n"
        >>> [t[a:b] for a, b in split_sentences(t)]
        ['Fixed it, e.g. with nginx 1.24.', 'It works. [#7]', '- Port 9000.']
    """
    spans: list[tuple[int, int]] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        start = len(body) - len(body.lstrip())
        pieces: list[tuple[int, int]] = []
        for m in _BOUNDARY.finditer(body):
            before = body[start : m.start()]
            if m.start() <= start or _ends_abbreviation(before) or _LIST_ONLY.fullmatch(before):
                continue
            pieces.append((start, m.start()))
            start = m.end()
        if body[start:].strip():
            pieces.append((start, len(body.rstrip())))
        for k, (a, b) in enumerate(pieces):
            lead = _LEADING_CITATION.match(body[a:b]) if k else None
            if lead:  # "It works. [#7] Next": the citation closes the sentence before
                spans[-1] = (spans[-1][0], offset + a + lead.end())
                a += lead.end()
                a += len(body[a:b]) - len(body[a:b].lstrip())
                if a >= b:
                    continue
            spans.append((offset + a, offset + b))
        offset += len(line)
    return spans


# -- alignment -----------------------------------------------------------------------------------

_META_WORDS = frozenset(
    {"user", "users", "assistant", "agent", "session", "sessions", "conversation",
     "conversations", "transcript", "recap", "summary", "asked", "ask", "asking", "wanted",
     "want", "discussed", "mentioned", "explained", "noted", "stated", "said", "provided",
     "suggested", "requested", "inquired", "nothing", "left", "open", "unresolved",
     "outstanding", "remaining", "further", "notable",
     # narration: how a recap tells what happened, not what happened
     "able", "unable", "issue", "issues", "problem", "problems", "resolve", "resolved",
     "solution", "solve", "solved", "successfully", "successful", "encountered", "encounter",
     "trying", "tried", "attempted", "process", "involved", "steps", "following", "followed",
     "making", "changes", "helped", "help"}
)  # fmt: skip
"""Words a recap uses about the conversation itself or to narrate it: they need no support."""
_HEADING_WORDS = 5
"""A line of at most this many words ending with a colon only announces what follows."""
_CITED_ID = re.compile(r"#\s*(\d+)\b")
_MARKUP = re.compile(r"\*\*|__")


@dataclass(frozen=True, slots=True)
class GroundingThresholds:
    """Where :func:`ground_recap` draws its lines (see the module docstring)."""

    min_coverage: float = 0.5
    """Least share of a sentence's content words found in the cited messages (or the context)."""
    max_citations: int = 3
    """Most messages cited for one sentence by the library."""
    min_gain: float = 0.15
    """A further message is cited when it adds a specific or this share of the term weight."""
    anchor_window: int = 3
    """Content words on each side of a number in the sentence that anchor it: one of them must
    occur in a clause of a message that holds the number."""


DEFAULT_GROUNDING = GroundingThresholds()


@dataclass(frozen=True, slots=True)
class SentenceSupport:
    """One sentence of the recap and what supports it."""

    text: str
    """The sentence as written (markup and citations included)."""
    start: int
    end: int
    status: Literal["supported", "unsupported", "unchecked", "label"]
    """``label``: no content words (a heading); ``unchecked``: another language than the
    transcript and no specific to check (cited where the words it shares with the transcript
    are, if any)."""
    citations: tuple[int, ...] = ()
    """Message ids supporting the sentence: the model's valid citations, else computed."""
    cited_by: Literal["model", "library", "none"] = "none"
    coverage: float = 0.0
    """Share of the sentence's content words found in the cited messages or the context."""
    missing: tuple[str, ...] = ()
    """Specifics found nowhere in the transcript or the context."""
    misplaced: tuple[str, ...] = ()
    """Numbers found in the transcript, but never next to the words they stand next to in the
    sentence."""

    @property
    def claim(self) -> bool:
        """Whether this sentence states something (not a heading)."""
        return self.status != "label"

    @property
    def supported(self) -> bool:
        """Not unsupported (headings and unchecked sentences are kept)."""
        return self.status != "unsupported"


@dataclass(frozen=True, slots=True)
class RecapGrounding:
    """The outcome of :func:`ground_recap`: every sentence with its support."""

    recap: str
    sentences: tuple[SentenceSupport, ...]

    @property
    def citations(self) -> list[int]:
        """Ids cited by the supported sentences, sorted."""
        return sorted({i for s in self.sentences if s.supported for i in s.citations})

    @property
    def unsupported(self) -> list[SentenceSupport]:
        """The sentences nothing in the transcript supports."""
        return [s for s in self.sentences if s.status == "unsupported"]

    @property
    def unchecked(self) -> list[SentenceSupport]:
        """Sentences in another language than the transcript, with no specific to check."""
        return [s for s in self.sentences if s.status == "unchecked"]

    @property
    def claims(self) -> list[SentenceSupport]:
        """Sentences that state something (headings left out)."""
        return [s for s in self.sentences if s.claim]

    def render(self, *, unsupported: Literal["remove", "mark", "keep"] = "remove") -> str:
        """The recap with each supported sentence's citations written in (``[#4, #5]`` before
        its full stop, unless the model cited it) and each unsupported one removed (a list item
        left empty goes with it), marked ``[unsupported]`` or kept as it is.

        Example:
            >>> g = ground_recap("Ran pytest. Deployed on Mars.",
            ...                  [ShownMessage(3, "s", "tool", "TOOL", "pytest: 12 passed")])
            >>> g.render(), g.render(unsupported="mark")
            ('Ran pytest [#3].', 'Ran pytest [#3]. Deployed on Mars [unsupported].')
        """
        out: list[str] = []
        position = 0
        for s in self.sentences:
            out.append(self.recap[position : s.start])
            position = s.end
            if s.status == "unsupported":
                if unsupported == "mark":
                    out.append(_insert_tag(s.text, "[unsupported]"))
                elif unsupported == "keep":
                    out.append(s.text)
                continue
            if s.cited_by == "library" and s.citations:
                out.append(_insert_tag(s.text, "[" + ", ".join(f"#{i}" for i in s.citations) + "]"))
            else:
                out.append(s.text)
        out.append(self.recap[position:])
        return _tidy("".join(out))


_TAIL = re.compile(r"([.!?。！？:;]?[\"'”’)\]*`]*)$")


def _insert_tag(sentence: str, tag: str) -> str:
    """``tag`` before the sentence's final punctuation: ``Fixed it [#4].``"""
    body = sentence.rstrip()
    tail = _TAIL.search(body)
    cut = tail.start() if tail and tail.group(0) else len(body)
    if tail and tail.group(0) and not re.match(r"[.!?。！？:;]", tail.group(0)):
        cut = len(body)  # closing quote or code with no full stop: the tag goes after it
    return body[:cut].rstrip() + " " + tag + body[cut:]


_BARE_ITEM = re.compile(r"^[ \t>]*(?:[-*•+]|\d{1,2}[.)])?[ \t]*$")


def _tidy(text: str) -> str:
    """Drop list items left empty, trailing spaces and runs of blank lines."""
    lines = [ln.rstrip() for ln in text.splitlines()]
    kept = [ln for ln in lines if not (ln and _BARE_ITEM.match(ln))]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


@dataclass(frozen=True, slots=True)
class _Indexed:
    """A message prepared for alignment."""

    id: int
    lower: str
    vocab: frozenset[str]
    sequence: tuple[str, ...]
    """Its content units in order, clauses separated (for the neighbourhood of a number)."""


_TOKEN = re.compile(r"\d+(?:[.,:/]\d+)+|[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)


def _words(text: str) -> list[str]:
    """Lower-cased words, number expressions whole (``1.9``, ``11:20:03``, ``172.19.0.0/16``),
    CJK runs split into characters."""
    out: list[str] = []
    for word in _TOKEN.findall(text.lower()):
        if _CJK_CHAR.search(word):
            out.extend(ch for ch in re.split(f"({_CJK_CHAR.pattern})", word) if ch)
        else:
            out.append(word)
    return out


def _units(tokens: Sequence[str], skip: Collection[str] = ()) -> list[str]:
    """Content units of ``tokens`` (the gate's: stems of content words, numbers of 2+ digits,
    CJK character bigrams), ``skip`` left out."""
    return _content_units(list(tokens), set(skip))


_CLAUSE_END = re.compile(r"(?<=[.!?;。！？])\s+|\n+")
_STOP = "|"
"""Clause boundary in a message's unit sequence: a neighbourhood does not cross it."""


def _index(message: ShownMessage) -> _Indexed:
    tokens = _tokens(message.text)
    sequence: list[str] = []
    for clause in _CLAUSE_END.split(message.text):
        sequence.extend(_units(_words(clause)))
        sequence.append(_STOP)
    return _Indexed(
        message.id,
        message.text.lower(),
        frozenset(_vocabulary(tokens)),
        tuple(sequence),
    )


_QUANTITY = re.compile(r"\d+(?:[.,]\d+)?")


def _anchorable(specific: str) -> bool:
    """Quantities (``23``, ``1.9``): found anywhere in the transcript, they may still stand in
    the wrong place. Addresses, versions and paths are specific enough by themselves."""
    return bool(_QUANTITY.fullmatch(specific))


def _near(sequence: Sequence[str], unit: str, window: int | None) -> set[str]:
    """Units within ``window`` positions (None: anywhere) of any occurrence of ``unit`` in
    ``sequence``, without crossing a clause boundary."""
    out: set[str] = set()
    for i, u in enumerate(sequence):
        if u != unit:
            continue
        for step in (-1, 1):
            j = i + step
            while (
                0 <= j < len(sequence)
                and (window is None or abs(j - i) <= window)
                and sequence[j] != _STOP
            ):
                out.add(sequence[j])
                j += step
    out.discard(unit)
    return out


@dataclass(frozen=True, slots=True)
class _Source:
    """The transcript's messages indexed once, with what every sentence is aligned against:
    word rarity, the context's words and specifics, the words that need no support."""

    indexed: list[_Indexed]
    known: set[int]
    df: dict[str, int]
    idf: dict[str, float]
    strongest: float
    context_lower: str
    context_vocab: set[str]
    context_units: set[str]
    neutral: Collection[str]
    transcript_languages: set[str]

    @classmethod
    def of(cls, messages: Sequence[ShownMessage], context: str, instructions: str) -> _Source:
        messages = [m for m in messages if m.id_known]  # what a citation can refer to
        indexed = [_index(m) for m in messages if m.text.strip()]
        n = len(indexed)
        df: dict[str, int] = {}
        for m in indexed:
            for unit in set(m.sequence) | m.vocab:
                df[unit] = df.get(unit, 0) + 1
        context_tokens = _tokens(context)
        # Words of the prompt need no support, unless the transcript has them: then they are
        # the session's own words (the query's and the title's usually are) and must match.
        neutral_meta = _META_WORDS | {_stem(w) for w in _META_WORDS}
        neutral = neutral_meta | set(_units(_tokens(instructions)))
        neutral -= set(df) - neutral_meta
        return cls(
            indexed=indexed,
            known={m.id for m in indexed},
            df=df,
            idf={u: math.log((n + 1) / (d + 0.5)) for u, d in df.items()},
            strongest=math.log((n + 1) / 0.5),
            context_lower=context.lower(),
            context_vocab=_vocabulary(context_tokens),
            context_units=set(_units(context_tokens)),
            neutral=neutral,
            transcript_languages=languages_present("\n".join(m.text for m in messages)) - {"latin"},
        )

    def support(
        self, text: str, start: int, end: int, thresholds: GroundingThresholds
    ) -> SentenceSupport:
        """Align one sentence of the recap (``recap[start:end]``) with its messages."""
        cited = [int(i) for i in _CITED_ID.findall(text)]
        model_ids = tuple(dict.fromkeys(i for i in cited if i in self.known))
        clean = _MARKUP.sub("", _LOOSE_CITATION.sub(" ", _GROUP.sub(" ", text)))
        clean = clean[_LIST_MARK.match(clean).end() :]  # type: ignore[union-attr]
        specifics = list(dict.fromkeys(_specifics(clean)))
        sequence = [u for u in _units(_words(clean), self.neutral) if u not in self.neutral]
        units = list(dict.fromkeys(sequence))
        heading = clean.rstrip().endswith(":") and len(_words(clean)) <= _HEADING_WORDS
        if heading or (not units and not specifics):
            return SentenceSupport(text, start, end, "label")
        language = detect_language(clean)
        cross = bool(
            language and self.transcript_languages and language not in self.transcript_languages
        )
        # Across languages only the words the transcript shares (names, commands) can align.
        terms = [u for u in units if u in self.df] if cross else units
        holders = {
            s: [m for m in self.indexed if _mentions(m.lower, set(m.vocab), s)] for s in specifics
        }
        in_context = {s for s in specifics if _mentions(self.context_lower, self.context_vocab, s)}
        missing = tuple(s for s in specifics if not holders[s] and s not in in_context)
        chosen, covered, covers = self._cover(specifics, terms, holders, model_ids, thresholds)
        misplaced = self._anchor(
            specifics, sequence, holders, in_context, chosen, covered, covers, thresholds
        )
        cited_vocab: set[str] = (
            set().union(*(set(m.vocab) | set(m.sequence) for m in self.indexed if m.id in chosen))
            if chosen
            else set()
        )
        hits = sum(1 for t in terms if t in cited_vocab or t in self.context_units)
        coverage = hits / len(terms) if terms else 1.0
        enough = coverage >= thresholds.min_coverage if len(terms) >= 3 else (hits > 0 or not terms)
        ok = not missing and not misplaced and enough and (bool(chosen) or bool(in_context))
        status: Literal["supported", "unsupported", "unchecked"] = (
            "supported" if ok else "unsupported"
        )
        if cross and not specifics:
            status = "unchecked"  # nothing to check; cited where its shared words are
        return SentenceSupport(
            text,
            start,
            end,
            status,
            citations=tuple(sorted(chosen)) if not model_ids else tuple(chosen),
            cited_by="model" if model_ids else ("library" if chosen else "none"),
            coverage=round(coverage, 3),
            missing=missing,
            misplaced=tuple(misplaced),
        )

    def _cover(
        self,
        specifics: Sequence[str],
        terms: Sequence[str],
        holders: dict[str, list[_Indexed]],
        model_ids: tuple[int, ...],
        thresholds: GroundingThresholds,
    ) -> tuple[list[int], set[tuple[str, str]], dict[int, set[tuple[str, str]]]]:
        """The messages a sentence cites: the model's, else a greedy cover in which specifics
        weigh as much as the rarest word and words by their rarity."""
        weight = {("s", s): self.strongest for s in specifics if holders[s]}
        weight.update({("t", t): self.idf.get(t, 0.0) for t in terms if t in self.df})
        covers = {
            m.id: {
                key
                for key in weight
                if (key[0] == "s" and m in holders[key[1]])
                or (key[0] == "t" and (key[1] in m.vocab or key[1] in m.sequence))
            }
            for m in self.indexed
        }
        chosen: list[int] = list(model_ids)
        covered: set[tuple[str, str]] = (
            set().union(*(covers[i] for i in chosen)) if chosen else set()
        )
        # fsum: exact whatever the order of the set being summed (a plain sum of floats varies
        # with Python's per-process hash order, and so did the citations of a tie).
        total = math.fsum(weight.values()) or 1.0
        if not chosen:
            while len(chosen) < thresholds.max_citations:
                best, gain, adds_specific = None, 0.0, False
                for m in self.indexed:
                    if m.id in chosen:
                        continue
                    new = covers[m.id] - covered
                    g = math.fsum(weight[k] for k in new)
                    if g > gain:
                        best, gain = m.id, g
                        adds_specific = any(k[0] == "s" for k in new)
                if best is None or (
                    chosen and not adds_specific and gain < thresholds.min_gain * total
                ):
                    break
                chosen.append(best)
                covered |= covers[best]
        return chosen, covered, covers

    @staticmethod
    def _anchor(
        specifics: Sequence[str],
        sequence: Sequence[str],
        holders: dict[str, list[_Indexed]],
        in_context: set[str],
        chosen: list[int],
        covered: set[tuple[str, str]],
        covers: dict[int, set[tuple[str, str]]],
        thresholds: GroundingThresholds,
    ) -> list[str]:
        """A number must stand next to one of its sentence neighbours somewhere: the numbers
        that do nowhere; a message where one does is cited (added to ``chosen``)."""
        misplaced: list[str] = []
        for s in specifics:
            if not _anchorable(s) or not holders[s]:
                continue
            unit = s
            around = _near(sequence, unit, thresholds.anchor_window)
            if not around or not any(unit in m.sequence for m in holders[s]):
                continue  # nothing to anchor it by, or written differently ("40" of "40.12s")
            anchors = [m for m in holders[s] if _near(m.sequence, unit, None) & around]
            if not anchors:
                if s not in in_context:
                    misplaced.append(s)
            elif not set(chosen) & {m.id for m in anchors}:
                chosen.append(anchors[0].id)
                covered |= covers[anchors[0].id]
        return misplaced


def ground_recap(
    recap: str,
    messages: Sequence[ShownMessage],
    *,
    context: str = "",
    instructions: str = "",
    thresholds: GroundingThresholds = DEFAULT_GROUNDING,
) -> RecapGrounding:
    """Align each sentence of ``recap`` with the ``messages`` that support it.

    Args:
        recap: The model's recap, its invalid citations already removed
            (:func:`check_citations`).
        messages: The transcript's messages, with their ids (those it shows: a message whose
            id is not known, ``id_known`` False, is left out).
        context: Other text the recap may draw on and that no message holds (the session's
            title and date): its specifics count as found, its words as covered. Not the
            search query: a small model writes that the session was about the query when it
            was not, and only the transcript can say so.
        instructions: The prompt's instructions: their words need no support (a recap that
            follows "1. What the user asked" keeps the label).
        thresholds: Where the lines are drawn.

    Returns:
        A :class:`RecapGrounding`, one :class:`SentenceSupport` per sentence in order.
    """
    source = _Source.of(messages, context, instructions)
    sentences = [
        source.support(recap[start:end], start, end, thresholds)
        for start, end in split_sentences(recap)
    ]
    return RecapGrounding(recap, tuple(sentences))
