"""The behavioural suite: the same expectations for the SQLite and the PostgreSQL store."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langchain_session_recall import (
    InvalidMessageError,
    LineageCycleError,
    SessionNotFoundError,
    SessionRecallRetriever,
)
from langchain_session_recall.search.pipeline import search_sessions
from langchain_session_recall.search.query import parse_query


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


# ------------------------------------------------------------------ write path


def test_add_and_get_round_trip(store: Any) -> None:
    s = store.add_session(
        "s1", source="telegram", model="gpt", title="T", user_id="u1", started_at=5.0
    )
    assert (s.id, s.source, s.model, s.title, s.user_id, s.started_at) == (
        "s1",
        "telegram",
        "gpt",
        "T",
        "u1",
        5.0,
    )
    ids = store.add_messages(
        "s1",
        [
            HumanMessage("list files"),
            AIMessage("", tool_calls=[{"name": "ls", "args": {"path": "/"}, "id": "c1"}]),
            ToolMessage("bin etc", tool_call_id="c1", name="ls"),
        ],
    )
    assert ids == sorted(ids) and len(set(ids)) == 3
    messages = store.get_messages("s1")
    assert [m.role for m in messages] == ["user", "assistant", "tool"]
    assert [m.id for m in messages] == ids
    assert messages[1].tool_call_names == ["ls"]
    assert (messages[2].tool_name, messages[2].tool_call_id, messages[2].content) == (
        "ls",
        "c1",
        "bin etc",
    )
    assert store.get_session("s1").message_count == 3
    store.add_session("s1", title="New title")
    assert store.get_session("s1").title == "New title"
    assert store.get_session("s1").source == "telegram"
    store.end_session("s1", end_reason="done", ended_at=9.0)
    ended = store.get_session("s1")
    assert (ended.ended_at, ended.end_reason) == (9.0, "done")
    assert store.get_session("nope") is None


def test_invalid_message_stores_nothing_of_the_batch(store: Any) -> None:
    store.add_session("s1")
    with pytest.raises(InvalidMessageError, match="unknown message role"):
        store.add_messages(
            "s1", [{"role": "user", "content": "ok"}, {"role": "alien", "content": "x"}]
        )
    with pytest.raises(InvalidMessageError, match="timestamp"):
        store.add_messages("s1", [{"role": "user", "content": "ok", "timestamp": "noon"}])
    assert store.get_messages("s1") == []
    assert store.get_session("s1").message_count == 0


def test_batches_larger_than_one_insert_statement_keep_order_and_ids(store: Any) -> None:
    store.add_session("big")
    texts = [f"step {i} of the migration" + (" 部署脚本" if i % 3 == 0 else "") for i in range(257)]
    ids = store.add_messages("big", [{"role": "user", "content": t} for t in texts])
    assert len(ids) == 257 and ids == sorted(ids) and len(set(ids)) == 257
    stored = store.get_messages("big")
    assert [m.id for m in stored] == ids
    assert [m.content for m in stored] == texts
    assert store.get_session("big").message_count == 257
    found = {h.message_id for h in store.match_messages(parse_query("部署"), "relaxed", limit=500)}
    assert found == {ids[i] for i in range(0, 257, 3)}


def test_transaction_groups_writes_and_rolls_back_as_one(store: Any) -> None:
    with store.transaction() as tx:
        assert tx is store
        for n in range(3):
            store.add_session(f"s{n}", title=f"run {n}")  # reads its own write inside the block
            store.add_messages(f"s{n}", [{"role": "user", "content": f"deploy number {n}"}])
    assert {r.root_id for r in search_sessions(store, "deploy").sessions} == {"s0", "s1", "s2"}

    with pytest.raises(RuntimeError, match="boom"), store.transaction():
        store.add_session("lost")
        store.add_messages("s0", [{"role": "user", "content": "never stored"}])
        raise RuntimeError("boom")
    assert store.get_session("lost") is None
    assert [m.content for m in store.get_messages("s0")] == ["deploy number 0"]


def test_a_failed_write_inside_a_transaction_is_undone_alone(store: Any) -> None:
    with store.transaction():
        store.add_session("keep")
        store.add_messages("keep", [{"role": "user", "content": "first"}])
        with pytest.raises(InvalidMessageError):
            store.add_messages(
                "keep", [{"role": "user", "content": "half"}, {"role": "alien", "content": "x"}]
            )
        with pytest.raises(SessionNotFoundError):
            store.add_messages("ghost", [{"role": "user", "content": "x"}])
        with store.transaction():  # nested blocks are savepoints
            store.add_messages("keep", [{"role": "user", "content": "second"}])
        store.add_messages("keep", [{"role": "user", "content": "third"}])
    assert [m.content for m in store.get_messages("keep")] == ["first", "second", "third"]
    assert store.get_session("keep").message_count == 3


def test_automation_runs_get_their_own_hit_budget(store: Any) -> None:
    for n in range(12):  # near-identical cron runs that outrank the session the user wants
        _say(store, f"cron-{n:02d}", "nightly backup backup backup finished", source="cron")
    _say(store, "chat", "how do we restore the backup from last week")
    query = parse_query("backup")
    everything = store.match_messages(query, "relaxed", limit=8)
    assert {h.session_id for h in everything} <= {f"cron-{n:02d}" for n in range(12)}
    budgeted = store.match_messages(query, "relaxed", limit=8, automation=("cron",))
    sources = [h.source for h in budgeted]
    assert "chat" in {h.session_id for h in budgeted}
    assert sources.count("cron") == 2  # a quarter of the limit
    few = store.match_messages(parse_query("restore"), "relaxed", limit=8, automation=("cron",))
    assert [h.session_id for h in few] == ["chat"]


def test_write_errors_say_what_to_do(store: Any) -> None:
    with pytest.raises(SessionNotFoundError, match="add_session"):
        store.add_messages("ghost", [{"role": "user", "content": "hi"}])
    with pytest.raises(SessionNotFoundError, match="parent session"):
        store.add_session("child", parent_session_id="ghost")
    with pytest.raises(ValueError, match="session_id"):
        store.add_session("")
    with pytest.raises(SessionNotFoundError):
        store.end_session("ghost")
    store.add_session("a")
    store.add_session("b", parent_session_id="a")
    with pytest.raises(LineageCycleError, match="cycle"):
        store.add_session("a", parent_session_id="b")
    with pytest.raises(LineageCycleError, match="own parent"):
        store.add_session("a", parent_session_id="a")


def test_summary_cache(store: Any) -> None:
    assert store.get_cached_summary("k") is None
    store.put_cached_summary("k", session_id="s", summary="first", model="m")
    store.put_cached_summary("k", session_id="s", summary="second", model="m", status="rejected")
    cached = store.get_cached_summary("k")
    assert (cached.summary, cached.status, cached.model) == ("second", "rejected", "m")


# ------------------------------------------------------------------ lineage


def test_lineage_and_chain(store: Any) -> None:
    store.add_session("root", started_at=1.0)
    store.add_session("mid", parent_session_id="root", started_at=2.0)
    store.add_session("leaf", parent_session_id="mid", started_at=3.0)
    store.add_session("other", started_at=4.0)
    assert store.lineage("leaf") == ["leaf", "mid", "root"]
    assert store.root_of("leaf") == "root"
    assert store.chain("root") == ["root", "mid", "leaf"]
    assert store.parents_of(["leaf"]) == {"leaf": "mid", "mid": "root", "root": None}


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
    retriever = SessionRecallRetriever(store=store, k=10, max_k=4)
    assert len(retriever.invoke("redis")) == 4
    assert len(retriever.invoke("redis", k=2)) == 2


# ------------------------------------------------------------------ recent mode, tenants, CJK


def test_recent_mode_lists_roots_newest_first(store: Any) -> None:
    _say(store, "a", "first question", started_at=100.0)
    _say(store, "b", "second question", started_at=200.0)
    _say(store, "b-sub", "sub work", started_at=300.0, parent_session_id="b", source="subagent")
    _say(store, "cron", "nightly job", started_at=400.0, source="tool")
    recent = store.recent_sessions(10)
    assert [r.id for r in recent] == ["b", "a"]
    assert recent[0].preview == "second question"
    docs = SessionRecallRetriever(store=store, k=5).invoke("", current_session_id="b-sub")
    assert [d.metadata["session_id"] for d in docs] == ["a"]
    assert docs[0].metadata["mode"] == "recent"


def test_tenant_scoping(store: Any) -> None:
    _say(store, "alice-1", "salary spreadsheet budget", user_id="alice")
    _say(store, "bob-1", "budget for the offsite", user_id="bob")
    _say(store, "bob-sub", "budget numbers", user_id="bob", parent_session_id="alice-1")
    assert _roots(store, "budget", user_id="alice") == ["alice-1"]
    assert set(_roots(store, "budget", user_id="bob")) == {"bob-1", "bob-sub"}
    assert [r.id for r in store.recent_sessions(10, user_id="alice")] == ["alice-1"]
    assert store.chain("alice-1", user_id="bob") == []
    assert [m.session_id for m in store.chain_messages("alice-1", user_id="alice")] == ["alice-1"]
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


def test_stats(store: Any) -> None:
    _say(store, "root", "hello", source="cli", started_at=10.0)
    store.add_session("kid", parent_session_id="root", source="subagent", started_at=20.0)
    store.add_messages(
        "kid", [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]
    )
    stats = store.stats()
    assert (stats["sessions"], stats["root_sessions"], stats["messages"]) == (2, 1, 3)
    assert stats["sources"] == {"cli": 1, "subagent": 1}
    assert (stats["first_started_at"], stats["last_started_at"]) == (10.0, 20.0)
    assert stats["size_bytes"] > 0


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


def test_stats_of_one_user(store: Any) -> None:
    """``stats(user_id=)`` counts that user's sessions and their messages only."""
    store.add_session("a1", user_id="ana", source="cli", started_at=10.0)
    store.add_session("a2", user_id="ana", source="telegram", parent_session_id="a1",
                      started_at=20.0)  # fmt: skip
    store.add_session("b1", user_id="bob", source="cli", started_at=5.0)
    store.add_messages("a1", [{"role": "user", "content": "one"}] * 2)
    store.add_messages("a2", [{"role": "user", "content": "two"}])
    store.add_messages("b1", [{"role": "user", "content": "three"}] * 4)
    ana = store.stats(user_id="ana")
    assert (ana["sessions"], ana["root_sessions"], ana["messages"]) == (2, 1, 3)
    assert ana["sources"] == {"cli": 1, "telegram": 1}
    assert (ana["first_started_at"], ana["last_started_at"], ana["user_id"]) == (10.0, 20.0, "ana")
    everyone = store.stats()
    assert (everyone["sessions"], everyone["messages"], everyone["user_id"]) == (3, 7, None)
    nobody = store.stats(user_id="carol")
    assert (nobody["sessions"], nobody["messages"], nobody["sources"]) == (0, 0, {})
    assert nobody["first_started_at"] is None
