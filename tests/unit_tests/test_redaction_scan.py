"""redact_secrets' one-pass hint scan gives byte for byte what one ``str.find`` per rule and hint
gave (issue 22 item 8).

``_reference_redact`` is the implementation before the scan, frozen here: the scan only decides
which rules to skip (those with no hint in the text, where the old code returned the text
unchanged), so every text must come out the same, hints, overlaps, newlines, text whose
``lower()`` changes its length ("İ") and rules whose replacement brings another rule's hint
("[REDACTED:github_token]" holds "token") included.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.perf import corpus as perf_corpus
from langchain_session_recall.core.redaction import (
    DEFAULT_SECRET_PATTERNS,
    SecretPattern,
    _apply,
    _hint_scan,
    redact_secrets,
)
from langchain_session_recall.demo import demo_sessions
from langchain_session_recall.recall.tool_calls import redact_tool_calls
from tests.reliability.secrets_corpus import ORDINARY, SECRETS
from tests.unit_tests.test_redaction import LOOKALIKES, SECRET_CORPUS


def _reference_redact(text: str, patterns: Sequence[SecretPattern] | None = None) -> str:
    """``redact_secrets`` as it was before the hint scan (frozen copy): every rule through
    ``_apply``, which looks for each of its hints with ``str.find`` (``_apply`` itself is
    unchanged; the scan only decides which rules to skip)."""
    lowered: str | None = None
    for rule in DEFAULT_SECRET_PATTERNS if patterns is None else patterns:
        if rule.hints and lowered is None:
            lowered = text.lower()
        redacted = _apply(rule, text, lowered)
        if redacted is not text:
            text, lowered = redacted, None
    return text


def _perf_messages() -> list[dict[str, object]]:
    return [m for s in perf_corpus.generate(1, 3_000) for m in s.messages]


def _corpus_texts() -> list[str]:
    texts = [t for t, _ in SECRET_CORPUS] + LOOKALIKES + list(ORDINARY)
    texts += [s.text for s in SECRETS]
    texts.append("\n".join(s.text for s in SECRETS))  # many kinds in one text
    for session in demo_sessions():
        texts.append(session.get("title") or "")
        texts += [m.get("content") or "" for m in session["messages"]]
    texts += [str(m.get("content") or "") for m in _perf_messages()]
    return texts


def test_the_corpora_come_out_as_before() -> None:
    texts = _corpus_texts()
    changed = [t for t in texts if redact_secrets(t) != t]
    assert len(changed) > 50  # the corpora hold secrets: the comparison covers redaction too
    assert [redact_secrets(t) for t in texts] == [_reference_redact(t) for t in texts]


def test_tool_call_arguments_come_out_as_before() -> None:
    calls = [m["tool_calls"] for m in _perf_messages() if m.get("tool_calls")]
    calls += [
        [{"function": {"name": "sh", "arguments": json.dumps({"cmd": s.text})}}] for s in SECRETS
    ]
    assert len(calls) > 100
    ours = [redact_tool_calls(c, redact_secrets) for c in calls]  # type: ignore[arg-type]
    assert ours == [redact_tool_calls(c, _reference_redact) for c in calls]  # type: ignore[arg-type]


# Pieces that make hints, overlapping hints, secrets and length-changing lower() likely.
_HINTS = sorted({h for rule in DEFAULT_SECRET_PATTERNS for h in rule.hints})
_PIECES = st.sampled_from(
    [
        *_HINTS,
        *(h.upper() for h in _HINTS),
        *(s.value for s in SECRETS[::7]),
        "\n",
        " ",
        "=",
        ": ",
        '"',
        "'",
        "İ",
        "ß",
        "ﬁ",
        "é",
        "sk-u",
        "passwd=hunter22",
        "-----BEGIN PRIVATE KEY-----\n",
        "-----END PRIVATE KEY-----",
        "ghp_" + "a1" * 20,
        "tokens",
    ]
)
_TEXTS = st.lists(_PIECES | st.text(max_size=8), max_size=25).map("".join)


@settings(max_examples=400, deadline=None)
@given(_TEXTS)
def test_generated_text_comes_out_as_before(text: str) -> None:
    assert redact_secrets(text) == _reference_redact(text)


def _brute_force_present(rules: Sequence[SecretPattern], text: str) -> set[int]:
    lowered = text.lower()
    return {
        i
        for i, rule in enumerate(rules)
        for hint in rule.hints
        if (lowered if hint.islower() else text).find(hint) != -1
    }


_CUSTOM = (
    SecretPattern("bcd", re.compile(r"bcd\d"), "[W]", hints=("bcd",)),  # overlaps "abc"
    SecretPattern("abc", re.compile(r"abc\d+"), "[Y]", hints=("abc",)),
    SecretPattern("always", re.compile(r"zz+"), "ab"),  # no hints: always runs, writes a hint
    SecretPattern("ab", re.compile(r"ab\w*"), "[X]", hints=("ab",)),  # a prefix of "abc"
    SecretPattern("upper", re.compile(r"AB\d+"), "[Z]", hints=("AB",), whole_text=True),
    SecretPattern("loose", re.compile(r"q\d"), "[Q]", hints=("qq",)),  # matches without its hint
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", "d", "z", "q", "A", "B", "1", "\n", "İ"]), max_size=30)
)
def test_the_scan_finds_every_rule_with_a_hint(chars: list[str]) -> None:
    text = "".join(chars)
    lowered = text.lower()
    for rules in (_CUSTOM, DEFAULT_SECRET_PATTERNS):
        if len(lowered) == len(text):
            assert _hint_scan(rules).present(text, lowered) == _brute_force_present(rules, text)
    assert redact_secrets(text, _CUSTOM) == _reference_redact(text, _CUSTOM)
    assert redact_secrets(text, list(_CUSTOM)) == _reference_redact(text, _CUSTOM)


@pytest.mark.parametrize(
    "text",
    [
        "abcd1",  # "bcd" starts inside "abc": both rules' hints are there
        "abcx",  # "ab" is found as the start of "abc"
        "bcd1 zzz",  # the hint-less rule writes "ab" where none was: scanned again
        "İ q1 abc12 AB3",  # lower() longer than the text: every rule on the whole text
        "x\nAB1\nab",
    ],
)
def test_custom_rules_come_out_as_before(text: str) -> None:
    assert redact_secrets(text, _CUSTOM) == _reference_redact(text, _CUSTOM)
