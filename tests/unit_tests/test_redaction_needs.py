"""A rule's regex is not run on a line that holds none of the text its every match holds
(``_NEEDS``: the ``=`` or ``:`` of ``password=...``, the dash of ``--token``, the ``-p`` of
``mysql -p...``): the output is byte for byte what running it gives (issue 22 item 8).

The reference is ``_apply`` without ``needs`` (the regex run on every line holding a hint, as
before). Hostile text: case-insensitive look-alikes (the Kelvin sign "K" and the long s "ſ"
match "k" and "s" under ``re.IGNORECASE`` but ``str.lower()`` keeps them), full-width "＝" and
"：", dashes of other kinds, newlines between a key and its value.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_session_recall.core.redaction import (
    _NEEDS,
    DEFAULT_SECRET_PATTERNS,
    _apply,
    _hint_scan,
    redact_secrets,
)
from tests.unit_tests.test_redaction_scan import _reference_redact

_GUARDED = [
    (rule, _NEEDS[rule.pattern.pattern, rule.pattern.flags])
    for rule in DEFAULT_SECRET_PATTERNS
    if (rule.pattern.pattern, rule.pattern.flags) in _NEEDS
]

_PIECES = st.sampled_from(
    [
        "password",
        "paſsword",  # "ſ" matches "s" under IGNORECASE; lower() keeps it
        "PASSWD",
        "secret",
        "ſecret",
        "api_key",
        "api-Key",  # Kelvin sign
        "token",
        "TOKEN",
        "auth_token",
        "client-secret",
        "mysql",
        "login",
        "--",
        "-",
        "‐",  # a hyphen that is not "-"
        "-p",
        "-P",
        " -p ",
        "-u",
        "--user ",
        "|",
        "sshpass",
        "pwd",
        "PASSWORD",
        "=",
        ":",
        "＝",
        "：",
        " ",
        "\n",
        "\t",
        '"',
        "'",
        "hunter22",
        "correct horse",
        "[REDACTED]",
        "İ",
    ]
)
_TEXTS = st.lists(_PIECES | st.text(max_size=4), max_size=20).map("".join)


def test_the_guarded_rules_are_the_expected_ones() -> None:
    names = {rule.name for rule, _ in _GUARDED}
    assert names == {
        "quoted_assignment",
        "assignment",
        "env_assignment",
        "table_cell",
        "pwd_assignment",
        "mysql_password",
        "login_password",
        "sshpass",
        "cli_flag",
    }
    assert all(
        _hint_scan(DEFAULT_SECRET_PATTERNS).needs[i]
        for i, r in enumerate(DEFAULT_SECRET_PATTERNS)
        if r.name in names
    )


@settings(max_examples=500, deadline=None)
@given(_TEXTS)
def test_every_match_holds_what_its_rule_needs(text: str) -> None:
    for rule, needs in _GUARDED:
        for match in rule.pattern.finditer(text):
            assert any(need in match.group() for need in needs), (rule.name, match.group())


@settings(max_examples=500, deadline=None)
@given(_TEXTS)
def test_guarded_rules_give_what_running_them_gives(text: str) -> None:
    lowered = text.lower()
    for rule, needs in _GUARDED:
        assert _apply(rule, text, lowered, needs) == _apply(rule, text, lowered)
    assert redact_secrets(text) == _reference_redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "paſsword=hunter22 token",  # a key word lower() does not show, on a hinted line
        "api_Key: hunter22\nno token here",
        "token\n=\nhunter22",  # the separator on another line: each line on its own
        "password = 'correct horse'",
        "mysql -u root -phunter22",
        "login admin -p hunter22",
        "run --token abcdef123 now",
        "password＝hunter22 token",  # full-width separators are guarded too
        "API_KEY：hunter22",
        "| password | hunter22 |",
    ],
)
def test_hostile_lines_come_out_as_before(text: str) -> None:
    assert redact_secrets(text) == _reference_redact(text)
