"""Issue 32 §6: a redacted secret cannot be read back through search, on both backends.

The index holds what was stored, secrets included. Before the fix, asking whether
``key-sk-proj-<known prefix><c>*`` matches, one character at a time, read an OpenAI key back
(401 calls) through the retriever, the tool and MCP alike (all of them go through
``recall.build.recall``). Now a session found only by text that redaction removes is not returned
(``langchain_session_recall/recall/evidence.py``), and no metadata names such text.

The property tested for every kind of the secrets corpus: a query made of a prefix of the secret
finds its session no more than it would in a store that held only what redaction leaves (the
*visible* store), or whose words all begin words it shows (``npm_`` is ``npm``, which begins
``npmjs`` in ``registry.npmjs.org``). Nearly every prefix finds nothing there.
"""

from __future__ import annotations

import json
import re
import string
from typing import Any

import pytest
from reliability.secrets_corpus import SECRETS, Secret
from store_targets import StoreFactory

from langchain_session_recall import create_session_search_tool, redact_secrets
from langchain_session_recall.errors import EmptyQueryError
from langchain_session_recall.recall.build import search_results

PROJECT = next(s for s in SECRETS if s.kind == "openai_project_key")
OPENAI = next(s for s in SECRETS if s.kind == "openai_key")
AWS_ID = next(s for s in SECRETS if s.kind == "aws_access_key_id")
_MARKER = re.compile(r"\[REDACTED[^\]\n]*\]")
# What FTS can tell apart in a key: letters (either case folds to one) and digits.
_ALPHABET = string.ascii_lowercase + string.digits
PREFIX_LENGTHS = (4, 12)
ALL_PREFIX_LENGTHS = (*range(4, 25), 32, 40, 64)


def _found(store: Any, query: str, session_id: str) -> bool:
    try:
        results = search_results(store, query, k=50, redact=redact_secrets)
    except EmptyQueryError:  # "----*": no letter or digit, nothing searched
        return False
    return any(r.metadata["session_id"] == session_id for r in results)


def _probe(found: Any, known: str, steps: int) -> str:
    """The per-character attack: extend ``known`` while some next character still matches."""
    learned = ""
    for _ in range(steps):
        step = next((c for c in _ALPHABET if found(known + learned + c)), None)
        if step is None:
            break
        learned += step
    return learned


def _victims(store: Any) -> None:
    store.add_session("deploy", title="deploy notes")
    store.add_messages("deploy", [{"role": "user", "content": "the deploy key rotation is done"}])
    store.add_session("victim", title="setup")
    store.add_messages("victim", [{"role": "user", "content": PROJECT.text}])
    store.add_session("tool-victim", title="setup")
    store.add_messages(
        "tool-victim",
        [
            {
                "role": "assistant",
                "content": "setting it",
                "tool_calls": [
                    {"id": "c1", "name": "terminal", "args": {"command": f"echo {OPENAI.value}"}}
                ],
            }
        ],
    )


def test_the_per_character_attack_learns_nothing(store_factory: StoreFactory) -> None:
    """The issue's attack, three characters deep, on a key in a message and one in a tool
    call's arguments (before the fix: both read back, lower-cased)."""
    store = store_factory.open("attack")
    _victims(store)
    known = PROJECT.value[len("sk-proj-") :][:4]

    def project(guess: str) -> bool:
        return _found(store, f"key-sk-proj-{guess}*", "victim")

    def tool(guess: str) -> bool:
        return _found(store, f"sk-{guess}*", "tool-victim")

    assert project(known) is False  # what the attacker knows no longer finds it either
    assert _probe(project, known, 3) == ""
    assert _probe(tool, OPENAI.value[3:7], 3) == ""
    # the defence drops nothing legitimate: the same sessions are found by what they show
    assert _found(store, "OPENAI_API_KEY", "victim")
    assert _found(store, "echo", "tool-victim")
    assert _found(store, "deploy key", "deploy")


def _visible(secret: Secret) -> str:
    return _MARKER.sub(" ", redact_secrets(secret.text))


def _one_per_kind(store: Any, secrets: list[Secret], *, visible: bool) -> None:
    for secret in secrets:
        store.add_session(f"k-{secret.kind}")
        text = _visible(secret) if visible else secret.text
        store.add_messages(f"k-{secret.kind}", [{"role": "user", "content": text}])


def _starts_visible_words(query: str, visible: str) -> bool:
    """Each word of ``query`` begins a word the redacted text shows (``npm`` in ``npmjs``): the
    check sees words so, as highlighting does."""
    words = re.findall(r"[^\W_]+", query)
    return all(re.search(r"(?<![^\W_])" + re.escape(w), visible, re.IGNORECASE) for w in words)


def _prefix_leaks(factory: StoreFactory, lengths: tuple[int, ...]) -> list[tuple[str, str]]:
    """Each prefix of each secret (of ``lengths``, with and without ``*``) that finds its
    session where the visible store does not; asserts nearly every probe is a real one."""
    store, visible = factory.open("secrets"), factory.open("visible")
    _one_per_kind(store, SECRETS, visible=False)
    _one_per_kind(visible, SECRETS, visible=True)
    leaks, probed = [], 0
    for secret in SECRETS:
        sid = f"k-{secret.kind}"
        for n in lengths:
            for query in (secret.value[:n], secret.value[:n] + "*"):
                if _found(store, query, sid):
                    shown = _starts_visible_words(query, _visible(secret))
                    if not shown and not _found(visible, query, sid):
                        leaks.append((secret.kind, query))
                else:
                    probed += 1
    # nearly every probe is a real one (its session holds the prefix, only inside the secret)
    assert probed >= 0.95 * 2 * len(lengths) * len(SECRETS)
    return leaks


def test_no_prefix_of_any_secret_finds_its_session(store_factory: StoreFactory) -> None:
    """For every kind, a prefix of 4 and 12 characters finds its session only as the
    visible store finds it (before the fix: 49 of the 51 kinds were found)."""
    assert _prefix_leaks(store_factory, PREFIX_LENGTHS) == []


@pytest.mark.slow
def test_no_prefix_of_any_length_finds_its_session(store_factory: StoreFactory) -> None:
    """Every prefix length from 4 to 24, and 32, 40, 64 characters."""
    assert _prefix_leaks(store_factory, ALL_PREFIX_LENGTHS) == []


def test_metadata_names_no_fragment_of_a_secret(store_factory: StoreFactory) -> None:
    """``deploy akia``: ``akia`` matches nothing but the key ``AKIA...`` (searched as the prefix
    ``akia*``); the deploy session is returned, and its metadata must not say that ``akia*``
    matched, nor count the key's session as searched. A typo one letter off an all-letter
    password (``zorglubiam``) is not corrected to it either."""
    store = store_factory.open("meta")
    _victims(store)
    store.add_session("aws")
    store.add_messages("aws", [{"role": "user", "content": AWS_ID.text}])
    store.add_session("pw")
    store.add_messages("pw", [{"role": "user", "content": "DB_PASSWORD=Zorglubian\nDB_HOST=db"}])
    assert "zorglubian" not in redact_secrets("DB_PASSWORD=Zorglubian").lower()
    for query in ("deploy akia", "deploy zorglubiam"):
        [result] = search_results(store, query, redact=redact_secrets)
        meta = result.metadata
        assert meta["session_id"] == "deploy"
        assert meta["query_expansions"] == {}, query
        assert meta["sessions_searched"] == 1, query
    # a query of NOT terms alone lists recent sessions: a key in a title drops none of them
    store.add_session("titled", title=f"rotate {PROJECT.value}")
    store.add_messages("titled", [{"role": "user", "content": "rotate it"}])
    listed = search_results(store, "NOT zebra", k=50, redact=redact_secrets)
    assert "titled" in {r.metadata["session_id"] for r in listed}
    # without redaction, the stored text is searched and named as it is
    raw = search_results(store, "deploy akia", redact=None)
    assert {r.metadata["session_id"] for r in raw} == {"deploy", "aws"}
    assert raw[0].metadata["query_expansions"] == {"akia": "akia*"}


def test_a_session_dropped_for_redaction_gives_its_place_to_the_next(
    store_factory: StoreFactory,
) -> None:
    """``k=1``: the best-ranked session matched the key's prefix only inside the key; the next
    one is returned in its place. A session that also shows a query word stays, its metadata
    naming only what it shows."""
    store = store_factory.open("next")
    store.add_session("best")
    store.add_messages("best", [{"role": "user", "content": f"token {PROJECT.value}"}])
    for i in range(3):
        store.add_session(f"r{i}")
        store.add_messages(f"r{i}", [{"role": "user", "content": f"key rotation number {i}"}])
    query = f"{PROJECT.value[:16]}* rotation"
    raw = search_results(store, query, k=1, redact=None)
    assert [r.metadata["session_id"] for r in raw] == ["best"]
    [shown] = search_results(store, query, k=1, redact=redact_secrets)
    assert shown.metadata["session_id"].startswith("r")
    assert shown.metadata["sessions_searched"] == raw[0].metadata["sessions_searched"] - 1
    store.add_messages("best", [{"role": "user", "content": "rotation is due"}])
    every = search_results(store, query, k=10, redact=redact_secrets)
    [best] = [r.metadata for r in every if r.metadata["session_id"] == "best"]
    assert best["matched_terms"] == ["rotation"]
    assert len(best["matched_message_ids"]) == best["match_count"] == 1


@pytest.mark.parametrize("mode", ["tool", "mcp"])
async def test_the_tool_and_mcp_do_not_answer_the_oracle(
    store_factory: StoreFactory, mode: str
) -> None:
    """The next character of the key, asked through the ``session_search`` tool and over MCP
    (before the fix both answered with the victim's session)."""
    store = store_factory.open("surfaces")
    _victims(store)
    known = PROJECT.value[len("sk-proj-") :][:5]
    queries = [f"key-sk-proj-{known}*", f"key-sk-proj-{known}{PROJECT.value[13].lower()}*"]
    if mode == "tool":
        tool = create_session_search_tool(store)
        replies = [json.loads(tool.invoke({"query": q})) for q in queries]
    else:
        from mcp.shared.memory import create_connected_server_and_client_session

        from langchain_session_recall.mcp_server import create_mcp_server

        async with create_connected_server_and_client_session(create_mcp_server(store)) as c:
            replies = []
            for q in queries:
                reply = await c.call_tool("session_search", {"query": q})
                replies.append(json.loads(reply.content[0].text))  # type: ignore[union-attr]
    assert all(r["success"] for r in replies), replies
    assert [r["count"] for r in replies] == [0, 0], replies
