"""The behavioural suite: the same expectations of search, the retriever and the tool on the
SQLite and the PostgreSQL store. The store contract itself is the conformance suite
(``langchain_session_recall.testing``, run by ``test_conformance.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from langchain_session_recall import (
    SessionRecallRetriever,
)
from langchain_session_recall.errors import InvalidArgumentError
from langchain_session_recall.search.pipeline import search_sessions


def _say(store: Any, sid: str, *texts: str, role: str = "user", **session: Any) -> list[int]:
    store.add_session(sid, **session)
    return list(
        store.add_messages(
            sid,
            [{"role": role, "content": t, "timestamp": 1000.0 + i} for i, t in enumerate(texts)],
        )
    )


def _roots(store: Any, text: str, **kw: Any) -> list[str]:
    return [r.root_id for r in search_sessions(store, text, **kw).sessions]


# ------------------------------------------------------------------ lineage in search


def test_hits_in_sub_agents_collapse_to_the_root(store: Any) -> None:
    _say(store, "root", "plan the database migration")
    _say(
        store, "sub1", "run alembic migration upgrade", parent_session_id="root", source="subagent"
    )
    _say(
        store, "sub2", "the migration failed on a lock", parent_session_id="sub1", source="subagent"
    )
    _say(store, "else", "unrelated talk about lunch")
    outcome = search_sessions(store, "migration")
    assert [r.root_id for r in outcome.sessions] == ["root"]
    assert set(outcome.sessions[0].session_ids) == {"root", "sub1", "sub2"}
    assert outcome.sessions[0].match_count == 3


def test_current_chain_is_excluded(store: Any) -> None:
    _say(store, "old", "kubernetes ingress certificates")
    _say(store, "now", "kubernetes question again")
    _say(store, "now-sub", "kubernetes pods", parent_session_id="now", source="subagent")
    assert set(_roots(store, "kubernetes")) == {"old", "now"}
    assert _roots(store, "kubernetes", current_session_id="now-sub") == ["old"]


# ------------------------------------------------------------------ query readings


@pytest.fixture
def corpus(store: Any) -> Any:
    _say(store, "phrase", "the exact phrase appears here about deployment")
    _say(store, "scattered", "phrase words are exact but scattered")
    _say(store, "docker", "docker-compose up failed")
    _say(store, "k8s", "kubernetes helm chart")
    _say(store, "python", "python script only")
    _say(store, "both", "python and java together")
    _say(store, "paths", "edit /etc/nginx/nginx.conf then reload; mail ops@example.com")
    return store


def test_strict_reading_honours_syntax(corpus: Any) -> None:
    assert _roots(corpus, '"exact phrase"') == ["phrase"]
    assert set(_roots(corpus, "docker OR kubernetes")) == {"docker", "k8s"}
    assert _roots(corpus, "python NOT java") == ["python"]
    assert _roots(corpus, "python AND java") == ["both"]
    assert _roots(corpus, "python java")[0] == "both"  # natural: any word, both ranks first
    assert _roots(corpus, "kube*") == ["k8s"]
    assert set(_roots(corpus, "docker-compose")) == {"docker"}
    assert search_sessions(corpus, '"exact phrase"').reading == "strict"


def test_strict_falls_back_to_relaxed(corpus: Any) -> None:
    outcome = search_sessions(corpus, "python AND zzyzx")
    assert outcome.reading == "relaxed"
    assert {r.root_id for r in outcome.sessions} == {"python", "both"}


def test_natural_question_uses_any_content_word(corpus: Any) -> None:
    outcome = search_sessions(corpus, "how did we get kubernetes working?")
    assert outcome.reading == "natural"
    assert [r.root_id for r in outcome.sessions] == ["k8s"]


def test_stemming_and_punctuation_split_words(corpus: Any) -> None:
    assert _roots(corpus, "deployments") == ["phrase"]
    assert _roots(corpus, "nginx") == ["paths"]
    assert _roots(corpus, "example") == ["paths"]


@pytest.mark.parametrize(
    "text",
    [
        "it's",
        "back\\slash",
        "a & b | !c",
        "x:* <-> y",
        "'); DROP TABLE messages; --",
        '"unclosed',
        "日本",
    ],
)
def test_hostile_query_text_never_breaks_the_query(corpus: Any, text: str) -> None:
    search_sessions(corpus, text)  # must not raise
    assert corpus.get_session("python") is not None  # and nothing was dropped


def test_k_is_capped(store: Any) -> None:
    for i in range(8):
        _say(store, f"s{i}", f"redis cache eviction note {i}")
    retriever = SessionRecallRetriever(store=store, k=4, max_k=4)
    assert len(retriever.invoke("redis")) == 4
    assert len(retriever.invoke("redis", k=2)) == 2
    # over the cap: refused, not clamped (issue 34 item 7)
    with pytest.raises(InvalidArgumentError, match="more than 4"):
        retriever.invoke("redis", k=10)


# ------------------------------------------------------------------ recent mode, tenants, CJK


def test_recent_mode_lists_roots_newest_first(store: Any) -> None:
    _say(store, "a", "first question", started_at=100.0)
    _say(store, "b", "second question", started_at=200.0)
    _say(store, "b-sub", "sub work", started_at=300.0, parent_session_id="b", source="subagent")
    _say(store, "cron", "nightly job", started_at=400.0, source="tool")
    docs = SessionRecallRetriever(store=store, k=5).invoke("")
    assert [d.metadata["session_id"] for d in docs] == ["b", "a"]
    assert docs[0].metadata["preview"] == "second question"
    docs = SessionRecallRetriever(store=store, k=5).invoke("", current_session_id="b-sub")
    assert [d.metadata["session_id"] for d in docs] == ["a"]
    assert docs[0].metadata["mode"] == "recent"


def test_tenant_scoping(store: Any) -> None:
    _say(store, "alice-1", "salary spreadsheet budget", user_id="alice")
    _say(store, "bob-1", "budget for the offsite", user_id="bob")
    _say(store, "bob-sub", "budget numbers", user_id="bob", parent_session_id="alice-1")
    assert _roots(store, "budget", user_id="alice") == ["alice-1"]
    assert set(_roots(store, "budget", user_id="bob")) == {"bob-1", "bob-sub"}
    docs = SessionRecallRetriever(store=store, user_id="alice").invoke("budget")
    assert [d.metadata["session_id"] for d in docs] == ["alice-1"]
    assert "offsite" not in docs[0].page_content and "numbers" not in docs[0].page_content


def test_cjk_two_character_words(store: Any) -> None:
    _say(store, "zh", "请帮我修改youer服务端的配置")
    _say(store, "ja", "東京の天気はどうですか")
    _say(store, "en", "plain english only")
    assert _roots(store, "服务") == ["zh"]
    assert _roots(store, "服务端") == ["zh"]
    assert _roots(store, "youer") == ["zh"]
    assert _roots(store, "天気") == ["ja"]
    assert _roots(store, "服") == ["zh"]


def test_retriever_end_to_end(store: Any) -> None:
    _say(store, "fix", "CORS error in nginx when calling the API", title="CORS")
    store.add_messages(
        "fix",
        [
            {"role": "assistant", "content": "add the Access-Control-Allow-Origin header"},
            {"role": "tool", "content": "x" * 2000, "tool_name": "bash"},
        ],
    )
    _say(store, "other", "lunch plans")
    retriever = SessionRecallRetriever(store=store, show_message_ids=True)
    docs = retriever.invoke("how did we fix the CORS error?")
    assert [d.metadata["session_id"] for d in docs] == ["fix"]
    meta = docs[0].metadata
    assert meta["mode"] == "search" and meta["title"] == "CORS"
    assert meta["store_id"] == store.store_id
    assert meta["last_message_id"] == max(m.id for m in store.get_messages("fix"))
    assert "[USER #" in docs[0].page_content and "[TOOL:bash #" in docs[0].page_content
    assert "...[truncated]..." in docs[0].page_content
    assert meta["matched_message_ids"][0] in {m.id for m in store.get_messages("fix")}


# ------------------------------------------------------------------ summary cache across processes

_FRESH_PROCESS = r"""
import json, sys
from summarizer_support import ScriptedChatModel
from store_targets import StoreTarget
from langchain_session_recall import create_session_search_tool

store = StoreTarget.parse(sys.argv[1]).open()  # the same store: a file, or a DSN


def recap(messages, n):
    prompt = str(messages[-1].content)
    asked = next(ln for ln in prompt.splitlines() if ln.startswith("[USER"))
    return "The user asked: " + asked.split("]: ", 1)[1] + " The assistant answered it."


llm = ScriptedChatModel(script=recap)
tool = create_session_search_tool(store, llm=llm, max_attempts=1)
payload = json.loads(tool.invoke({"query": "flamingo migration", "limit": 3}))
print(json.dumps({"calls": len(llm.calls), "count": payload["count"]}))
"""


@pytest.mark.slow  # two child processes, each importing LangChain
def test_summaries_cached_in_the_store_serve_a_fresh_process(
    store: Any, store_factory: Any
) -> None:
    """Issue: on PostgreSQL the cache was in memory only. A new process now pays no LLM call."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    for sid, text in (("f1", "the flamingo migration script"), ("f2", "flamingo feeding log")):
        _say(store, sid, text, "we ran the migration at noon")
    target = store_factory.target().argv()  # where `store` lives
    tests = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": f"{tests}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}

    def run() -> dict[str, int]:
        out = subprocess.run(
            [sys.executable, "-c", _FRESH_PROCESS, target],
            capture_output=True, text=True, env=env, timeout=120, check=True,
        )  # fmt: skip
        return json.loads(out.stdout.strip().splitlines()[-1])

    first, second = run(), run()
    assert first == {"calls": 2, "count": 2}
    assert second == {"calls": 0, "count": 2}


def test_a_value_holding_nul_matches_nothing(store: Any) -> None:
    """A looked-up value holding NUL (a user id from the app, a role filter from the model)
    matches nothing: PostgreSQL text cannot hold NUL (such a value used to fail the query with
    psycopg's DataError), and SQLite's ``json_each`` cut it at the NUL (a role filter
    ``"user\\x00"`` matched every user message). Lists leave it out (exclusions exclude nothing
    more). The store's own lookups with such values: the conformance suite."""
    import json

    from langchain_session_recall import SessionRecallRetriever, create_session_search_tool

    store.add_session("a", user_id="alice")
    store.add_messages("a", [{"role": "user", "content": "rollout"}])

    def roots(**kw: object) -> list[str]:
        return [r.root_id for r in search_sessions(store, "rollout", **kw).sessions]

    assert roots(user_id="alice\x00") == []
    # a role filter holding NUL names no role: refused before any query (issue 34 item 7)
    with pytest.raises(InvalidArgumentError, match="unknown role"):
        roots(role_filter=["user\x00", "user"])
    assert roots(exclude_sources=["cli\x00"]) == ["a"]
    assert roots(current_session_id="a\x00") == ["a"]
    retriever = SessionRecallRetriever(store=store, current_session_id="a\x00")
    assert [d.metadata["session_id"] for d in retriever.invoke("rollout")] == ["a"]
    tool = create_session_search_tool(store)
    payload = json.loads(tool.invoke({"query": "rollout", "role_filter": "user\x00"}))
    assert payload["success"] is False and "unknown role" in payload["error"]
