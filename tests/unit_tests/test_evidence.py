"""recall/evidence.py: which matches survive redaction (pure; the end-to-end attack is in
tests/reliability/test_redaction_oracle.py)."""

from __future__ import annotations

from langchain_session_recall import redact_secrets
from langchain_session_recall.core.query import parse_query
from langchain_session_recall.models import StoredMessage
from langchain_session_recall.recall.build import redact_messages
from langchain_session_recall.recall.evidence import evidence_words, surviving_evidence

KEY = "sk-proj-wTCEAlPJbQr7x2Zk9"


def _pair(content: str, **extra: object) -> tuple[StoredMessage, StoredMessage]:
    stored = StoredMessage(1, "s", "user", content, 0.0, **extra)  # type: ignore[arg-type]
    [shown] = redact_messages([stored], redact_secrets)
    return stored, shown


def _words(query: str) -> list[str]:
    return list(evidence_words(parse_query(query), {}))


def test_a_word_only_inside_the_secret_is_hidden() -> None:
    pair = _pair(f"export OPENAI_API_KEY='{KEY}'")
    out = surviving_evidence([pair], ("", ""), _words("key-sk-proj-wTCE*"))
    assert (out.found, out.message_ids, out.hidden) == (False, (), {"key sk proj wTCE"})


def test_a_form_the_patterns_cannot_see_is_no_excuse_in_a_redacted_message() -> None:
    """``wtcey*`` is searched as ``wtce*`` (the stemmer turns y into i): the pattern does not
    see it in the stored text either, and the message, which redaction changed, is dropped."""
    pair = _pair(f"export OPENAI_API_KEY='{KEY}'")
    assert not surviving_evidence([pair], ("", ""), _words("sk-proj-wTCEy*")).found


def test_a_marker_shows_no_word() -> None:
    pair = _pair("GH_TOKEN=github_pat_11AAAAAAA0abcdefghijklmnopqrstuvwxyz0123456789abcdef")
    assert "github" in pair[1].content.lower()  # in the marker "[REDACTED:github_token]"
    assert not surviving_evidence([pair], ("", ""), _words("gith*")).found


def test_a_visible_word_keeps_the_message_and_unchanged_ones_stand() -> None:
    secret = _pair(f"export OPENAI_API_KEY='{KEY}'")
    plain = StoredMessage(2, "s", "user", "nothing secret", 0.0)
    out = surviving_evidence([secret, (plain, plain)], ("", ""), _words("openai wTCEAl*"))
    assert out.found and out.message_ids == (1, 2) and out.hidden == {"wTCEAl"}
    # nothing redacted: every match stands, whatever the words (a stemmed form, a date word)
    fast = surviving_evidence([(plain, plain)], ("", ""), _words("zebra"))
    assert fast.found and fast.message_ids == (2,)


def test_tool_call_arguments_are_checked() -> None:
    calls = [{"id": "c", "name": "terminal", "args": {"command": f"echo {KEY}"}}]
    pair = _pair("running it", tool_calls=calls)
    assert pair[0] != pair[1]
    assert not surviving_evidence([pair], ("", ""), _words("sk-proj-wTCEAl*")).found
    assert surviving_evidence([pair], ("", ""), _words("echo")).found


def test_the_header_counts_as_evidence_when_it_still_matches() -> None:
    title = f"deploy {KEY}"
    headers = (f"{title}\nMonday 8 May 2023", f"{redact_secrets(title)}\nMonday 8 May 2023")
    assert redact_secrets(title) != title
    assert not surviving_evidence([], headers, _words("sk-proj-wTCE*")).found
    assert surviving_evidence([], headers, _words("may 2023")).found
    assert surviving_evidence([], headers, _words("deploy")).found
