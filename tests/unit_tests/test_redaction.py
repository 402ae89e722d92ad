"""redact_secrets: a corpus of secrets that must go, and of look-alikes that must stay."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_session_recall.core.redaction import (
    DEFAULT_SECRET_PATTERNS,
    SecretPattern,
    redact_secrets,
)
from tests.summarizer_support import SECRETS, sample_documents

SECRET_CORPUS = [
    ("export OPENAI_API_KEY=sk-proj-Qx7Lm2Vb9Tr4Wz8Kp1Hn6Yd3Fs5Gj0Ac", "sk-proj-Qx7Lm2"),
    ("key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv", "sk-ant-api03-AbCd"),
    ("aws_access_key_id = AKIAQ4XZ7RT2MNBV5LKD", "AKIAQ4XZ7RT2MNBV5LKD"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY", "wJalrXUtnFEMI"),
    ("git clone https://ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s12@github.com/x/y", "ghp_R4nd0m"),
    ("GH_PAT=github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11"),
    ("slack xoxb-123456789012-abcdefghijkl", "xoxb-1234567"),
    ("google AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA12345"),
    ("curl -H 'Authorization: Bearer abc.DEF-ghi_jkl~mno'", "abc.DEF-ghi"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA"),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXk",
    ),
    ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN (cut off)", "MIIEvQIBADAN"),
    ("password=hunter2-prod-db", "hunter2-prod-db"),
    ('{"password": "c0rrect horse"}', "c0rrect"),
    ("DB_PASSWORD='s3cr3t!'", "s3cr3t!"),
    ("mysql -u root --password hunter22 -h db", "hunter22"),
    ("gh auth login --with-token abcdefg123", "abcdefg123"),
    ("postgres://app:Sup3rS3cretPgPass@db.internal:5432/billing", "Sup3rS3cretPgPass"),
    ("https://api.example.com/v1?token=abc123def&page=2", "abc123def"),
    ("client_secret: 9f8e7d6c5b4a", "9f8e7d6c5b4a"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjaS1ib3QifQ.c2lnbmF0dXJlLWZvci10ZXN0cw", "eyJhbGciOi"),
]

LOOKALIKES = [
    "The password was reset by the admin yesterday.",
    "run pytest --passwords -x",
    "permissions: id-token: write",
    "max_tokens=500 and total_tokens: 812",
    "Secrets are stored in Vault.",
    "git checkout sk-learn-upgrade",
    "ls -la /var/run/docker.sock",
    "token budget exceeded",
    "See https://docs.python.org/3/library/re.html",
]


@pytest.mark.parametrize(("text", "secret"), SECRET_CORPUS, ids=lambda v: str(v)[:24])
def test_secrets_are_redacted(text: str, secret: str) -> None:
    cleaned = redact_secrets(text)
    assert secret not in cleaned
    assert "[REDACTED" in cleaned


@pytest.mark.parametrize("text", LOOKALIKES)
def test_lookalikes_are_left_alone(text: str) -> None:
    assert redact_secrets(text) == text


def test_names_stay_so_the_summary_can_say_what_was_set() -> None:
    assert redact_secrets("DB_PASSWORD=abc123") == "DB_PASSWORD=[REDACTED]"
    assert redact_secrets("export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx") == (
        "export OPENAI_API_KEY=[REDACTED:openai_key]"
    )


def test_the_sample_transcripts_are_clean_after_redaction() -> None:
    for doc in sample_documents():
        cleaned = redact_secrets(doc.page_content)
        assert not [s for s in SECRETS if s in cleaned]


def test_patterns_are_configurable() -> None:
    ticket = SecretPattern("ticket", re.compile(r"TICKET-\d+"), "[REDACTED:ticket]")
    assert redact_secrets("see TICKET-42", [ticket]) == "see [REDACTED:ticket]"
    assert redact_secrets("see TICKET-42 sk-abcdefghijklmnopqrstuv", [ticket]).endswith("uv")
    both = (*DEFAULT_SECRET_PATTERNS, ticket)
    assert "sk-abc" not in redact_secrets("TICKET-42 sk-abcdefghijklmnopqrstuv", both)


@given(st.text(max_size=300))
def test_redaction_is_idempotent(text: str) -> None:
    once = redact_secrets(text)
    assert redact_secrets(once) == once
