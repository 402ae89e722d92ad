"""Secrets: the redaction applied before summarization, against a corpus of realistic secrets.

* Each secret of ``secrets_corpus.py``, in its realistic context, is gone after
  ``redact_secrets`` (no 12-character piece of it survives). Kinds the default rules miss are
  listed in ``KNOWN_GAPS`` (strict xfail: fixing one makes the suite say so) and closed by
  ``PROPOSED_PATTERNS``, which the second test proves sufficient and harmless on benign text.
* End to end: no secret reaches the model (every request body the stub receives is checked),
  and none is in a fallback summary or its error text.
* No recorded cassette holds a secret of the corpus, an unredacted match of the rules, or an
  auth header.
"""

from __future__ import annotations

import contextlib
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.documents import Document
from langchain_openai import ChatOpenAI
from reliability.llm_stub import FaultyLLMServer
from reliability.reliability_support import REPO, count
from reliability.secrets_corpus import ISSUE_21_KINDS, ISSUE_32_KINDS, ORDINARY, SECRETS, Secret

from langchain_session_recall.core import redaction
from langchain_session_recall.summarize import summarizer

SecretPattern = redaction.SecretPattern
DEFAULT = tuple(redaction.DEFAULT_SECRET_PATTERNS)

pytestmark = pytest.mark.allow_hosts(["127.0.0.1"])

KNOWN_GAPS: dict[str, str] = {}
"""Corpus entries the default rules let through (none since the proposed rules were adopted)."""


PROPOSED_PATTERNS: tuple[Any, ...] = ()
"""Rules proposed by this suite; all adopted into ``DEFAULT_SECRET_PATTERNS``."""

BENIGN = [
    "mkdir -p build && docker run -p 8080:80 nginx",
    "ssh -p 2222 deploy@host",
    "set max_tokens=500 and temperature 0.2",
    "the Stripe key prefix is sk_live_ followed by the key",
    "curl -u $USER https://example.com",
    "mysql -p app  # asks for the password interactively",
    "see https://hooks.slack.com/ for webhook docs",
    "postgres://localhost:5432/app",
]


def leaked(secret: Secret, text: str) -> str | None:
    """A 12-character piece of the secret (or all of a shorter one) found in ``text``."""
    value, n = secret.value, min(12, len(secret.value))
    for i in range(len(value) - n + 1):
        if value[i : i + n] in text:
            return value[i : i + n]
    return None


def _param(secret: Secret) -> Any:
    marks = []
    if secret.kind in KNOWN_GAPS:
        marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[secret.kind]))
    return pytest.param(secret, id=secret.kind, marks=marks)


@pytest.mark.parametrize("secret", [_param(s) for s in SECRETS])
def test_default_rules_remove_the_secret(secret: Secret) -> None:
    count("secrets.corpus_checks")
    out = redaction.redact_secrets(secret.text)
    assert leaked(secret, out) is None, out
    assert "[REDACTED" in out


def test_proposed_rules_close_every_gap_and_spare_benign_text() -> None:
    rules = (*DEFAULT, *PROPOSED_PATTERNS)
    for secret in SECRETS:
        out = redaction.redact_secrets(secret.text, rules)
        assert leaked(secret, out) is None, (secret.kind, out)
        count("secrets.corpus_checks")
    for text in BENIGN:
        assert redaction.redact_secrets(text) == text
        count("secrets.benign_checks")


def test_every_kind_issue_21_named_is_in_the_corpus() -> None:
    assert set(ISSUE_21_KINDS) <= {s.kind for s in SECRETS}


def test_every_form_issue_32_named_is_in_the_corpus() -> None:
    """Item 7's forms (each redacted by ``test_default_rules_remove_the_secret``; every one
    of them leaked with the rules before)."""
    assert set(ISSUE_32_KINDS) <= {s.kind for s in SECRETS}


@pytest.mark.parametrize("text", ORDINARY, ids=lambda t: t[:30])
def test_ordinary_text_is_left_alone(text: str) -> None:
    """UUIDs, paths, URLs, version pins, git SHAs in prose (next to "aws secret" too), and
    near misses of issue 32's forms (``pwd:``, ports before ``/@``, a three-column table)."""
    assert redaction.redact_secrets(text) == text


def test_redaction_is_idempotent() -> None:
    """Redacted text comes out unchanged, so a prompt built from the retriever's (redacted)
    Documents is the prompt built from the raw ones."""
    for secret in SECRETS:
        once = redaction.redact_secrets(secret.text)
        assert redaction.redact_secrets(once) == once, secret.kind


# The demo data's one .env paste plants fake credentials (AWS's documented example keys too).
DEMO_PLANTED = ("sk-test-FAKE", "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI", "postgresql://shop:shop@")


def test_no_false_redaction_on_the_demo_data_or_the_recall_set() -> None:
    from benchmarks.recall.dataset import build_dataset
    from langchain_session_recall.demo import demo_sessions

    texts = [s.get("title") or "" for s in demo_sessions()]
    texts += [m.get("content") or "" for s in demo_sessions() for m in s["messages"]]
    planted = [t for t in texts if any(p in t for p in DEMO_PLANTED)]
    assert planted  # the demo still plants them: the check below would be empty otherwise
    for session in build_dataset(7).sessions:
        texts += [session.title or "", *(m.get("content") or "" for m in session.messages)]
    changed = [t for t in texts if redaction.redact_secrets(t) != t]
    assert changed and set(changed) <= set(planted)
    for text in planted:
        kept = redaction.redact_secrets(text)
        assert not [p for p in DEMO_PLANTED if p in kept]


def _strings(value: Any) -> str:
    """Every string inside a parsed JSON value, newline-joined (what the model would read)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_strings(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_strings(v) for v in value)
    return ""


def _documents() -> list[Document]:
    docs = []
    for i, secret in enumerate(SECRETS):
        docs.append(
            Document(
                page_content=f"[USER #{i * 2 + 1}]: deploy is failing, here is my setup\n\n"
                f"[TOOL:terminal #{i * 2 + 2}]: {secret.text}",
                metadata={
                    "session_id": f"s{i}",
                    "query": "deploy",
                    "mode": "search",
                    "title": "deploy",
                    "last_message_id": i * 2 + 2,
                    "matched_message_ids": [i * 2 + 2],
                },
            )
        )
    return docs


@pytest.mark.parametrize("rules", ["default", "proposed"])
@pytest.mark.parametrize("fault", ["ok", "500"])
def test_no_secret_reaches_the_model_or_the_fallback(rules: str, fault: str) -> None:
    patterns = DEFAULT if rules == "default" else (*DEFAULT, *PROPOSED_PATTERNS)
    expected_leaks = set(KNOWN_GAPS) if rules == "default" else set()
    docs = _documents()
    with FaultyLLMServer(default=fault, reply=lambda body: "Summary [#2].") as server:
        llm = ChatOpenAI(
            model="stub", base_url=server.base_url, api_key="stub-key", max_retries=0, timeout=5
        )
        out = summarizer.SessionSummarizer(
            llm=llm,
            secret_patterns=patterns,
            cache=False,
            max_attempts=1,
            max_concurrency=8,
        ).invoke(docs)
        sent = "\n".join(_strings(body) for body in server.requests)
        count("secrets.requests_scanned", server.served)
        count("llm.requests_served", server.served)
        count("llm.faults_injected", server.faults_injected)
    assert len(out) == len(docs)
    assert server.served == len(docs)
    shown = "\n".join(d.page_content + str(d.metadata.get("summary_error", "")) for d in out)
    leaks = {s.kind for s in SECRETS if leaked(s, sent) or leaked(s, shown)}
    assert leaks == expected_leaks
    count("secrets.corpus_checks", 2 * len(SECRETS))


_AUTH_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "cookie", "set-cookie"})


def _cassette_texts(path: Path) -> list[str]:
    """Every string of a vcrpy cassette (bodies decoded, JSON bodies also unescaped)."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    texts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, bytes):
            if value[:2] == b"\x1f\x8b":
                value = gzip.decompress(value)
            value = value.decode("utf-8", errors="replace")
        if isinstance(value, str):
            texts.append(value)
            with contextlib.suppress(ValueError):  # JSON bodies: their strings unescaped too
                texts.append(_strings(json.loads(value)))
        elif isinstance(value, dict):
            for key, item in value.items():
                if str(key).lower() in _AUTH_HEADERS and item:
                    texts.append(f"UNFILTERED HEADER {key}")
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(yaml.safe_load(raw))
    return texts


def cassette_problems(path: Path) -> list[str]:
    """Secrets of the corpus, unredacted rule matches and auth headers found in a cassette."""
    rules = (*DEFAULT, *PROPOSED_PATTERNS)
    problems: list[str] = []
    texts = _cassette_texts(path)
    count("secrets.cassette_texts_scanned", len(texts))
    for text in texts:
        if text.startswith("UNFILTERED HEADER"):
            problems.append(text)
            continue
        problems += [f"{s.kind} secret" for s in SECRETS if leaked(s, text)]
        # anything a rule still matches was not redacted before it was recorded
        if redaction.redact_secrets(text, rules) != text:
            problems.append(f"unredacted match in {text[:60]!r}")
    return problems


def test_no_recorded_cassette_holds_a_secret() -> None:
    cassettes = sorted(REPO.glob("cassettes/**/*.yaml*")) + sorted(
        REPO.glob("tests/**/cassettes/**/*.yaml*")
    )
    assert cassettes, "the repository ships recorded cassettes; none were found"
    for path in cassettes:
        count("secrets.cassettes_scanned")
        assert cassette_problems(path) == [], path.name


def test_the_cassette_scan_finds_planted_secrets(tmp_path: Path) -> None:
    key = next(s for s in SECRETS if s.kind == "openai_key")
    body = json.dumps({"messages": [{"role": "user", "content": key.text}]}).encode()
    cassette = {
        "requests": [{"body": body, "headers": {"authorization": ["Bearer x"]}}],
        "responses": [{"body": {"string": gzip.compress(b"password=hunter2hunter2")}}],
    }
    path = tmp_path / "planted.yaml.gz"
    path.write_bytes(gzip.compress(yaml.safe_dump(cassette).encode()))
    problems = cassette_problems(path)
    assert "openai_key secret" in problems
    assert "UNFILTERED HEADER authorization" in problems
    assert any("hunter2" in p for p in problems)
