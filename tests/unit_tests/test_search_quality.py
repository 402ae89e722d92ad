"""Behaviour the recall ranking must keep: each test pins one quality property on a tiny store.

Assertions are about which session comes first (or at all), never about scores or timings.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hermes_fixtures import build_hermes_db

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.demo import build_demo_store, demo_sessions
from langchain_session_recall.search.pipeline import search_sessions

T0 = 1_780_000_000.0


def _add(
    store: SessionStore,
    sid: str,
    messages: list[tuple[str, str]],
    *,
    source: str = "cli",
    parent: str | None = None,
    day: float = 0.0,
    user_id: str | None = None,
) -> None:
    started = T0 + day * 86_400
    store.add_session(
        sid, source=source, parent_session_id=parent, started_at=started, user_id=user_id
    )
    rows: list[dict[str, Any]] = []
    for i, (role, text) in enumerate(messages):
        row: dict[str, Any] = {"role": role, "content": text, "timestamp": started + i}
        if role == "tool":
            row["tool_name"] = "terminal"
        rows.append(row)
    store.add_messages(sid, rows)


def _roots(store: SessionStore, text: str, **kwargs: Any) -> list[str]:
    return [r.root_id for r in search_sessions(store, text, **kwargs).sessions]


@pytest.fixture
def store() -> SessionStore:
    s = SessionStore(":memory:")
    _add(
        s,
        "cors",
        [
            ("user", "The dashboard gets a CORS error calling the API through nginx."),
            ("assistant", "Added add_header Access-Control-Allow-Origin and a 204 for OPTIONS."),
        ],
        day=1,
    )
    for n in range(40):  # near-identical automation runs sharing every word of the question
        _add(
            s,
            f"cron-{n:02d}",
            [
                ("user", "[cron] uptime check of the API behind nginx"),
                ("assistant", "API up, CORS headers present, no CORS error, nginx healthy."),
            ],
            source="cron",
            day=2 + n,
        )
    _add(
        s,
        "fence",
        [("user", "I'm painting the garden fence, how many litres of stain do I need?")],
        day=3,
    )
    _add(
        s,
        "ingress",
        [
            ("user", "Large uploads fail with 504 behind our Kubernetes ingress."),
            ("assistant", "Raised proxy-read-timeout on the ingress to 600 seconds."),
        ],
        day=4,
    )
    _add(
        s,
        "deploy-zh",
        [
            ("user", "帮我修改youer服务端的部署脚本，每次发布都要手动重启。"),
            ("assistant", "改成了 systemd 单元，部署后自动重启服务。"),
        ],
        day=5,
    )
    _add(
        s,
        "other-zh",
        [("user", "帮我看看登录页面，速度很慢。"), ("assistant", "给登录页面加了缓存。")],
        day=6,
    )
    _add(
        s,
        "docker-ja",
        [
            ("user", "Dockerのビルドが遅くて、キャッシュが効いていないみたいです。"),
            ("assistant", "package.json だけ先にコピーする順番に変更しました。"),
        ],
        day=7,
    )
    _add(
        s,
        "upgrade",
        [("user", "Upgrade the services to Python 3.13."), ("assistant", "Delegated the audit.")],
        day=8,
    )
    _add(
        s,
        "upgrade-sub",
        [("assistant", "Blocker: psycopg2-binary 2.9.5 has no cp313 wheel; bump it.")],
        source="subagent",
        parent="upgrade",
        day=8,
    )
    _add(s, "python-misc", [("user", "Explain Python decorators with an example.")], day=9)
    _add(s, "wheel-misc", [("user", "What is a wheel file in packaging?")], day=10)
    return s


def test_cron_runs_do_not_outrank_the_interactive_session(store: SessionStore) -> None:
    roots = _roots(store, "CORS error nginx API")
    assert roots[0] == "cors"


def test_cron_runs_are_demoted_not_excluded(store: SessionStore) -> None:
    roots = _roots(store, "uptime check")
    assert roots and all(r.startswith("cron-") for r in roots)


def test_an_inflected_word_finds_the_session(store: SessionStore) -> None:
    assert _roots(store, "when I painted the fence")[0] == "fence"


@pytest.mark.parametrize("query", ["kuberntes ingres", "ingress timout", "kube ingress"])
def test_typos_and_partial_words_find_the_session(store: SessionStore, query: str) -> None:
    assert _roots(store, query)[0] == "ingress"


def test_a_word_nothing_resembles_finds_nothing(store: SessionStore) -> None:
    assert _roots(store, "xylophone") == []


@pytest.mark.parametrize("query", ["部署", "服务端", "youer", "修改youer服务端", "手动重启"])
def test_chinese_words_find_the_session(store: SessionStore, query: str) -> None:
    assert _roots(store, query)[0] == "deploy-zh"


def test_a_chinese_question_with_filler_words_finds_the_session(store: SessionStore) -> None:
    assert _roots(store, "上次怎么修改的部署脚本")[0] == "deploy-zh"


@pytest.mark.parametrize("query", ["ビルドが遅い", "キャッシュが効かない", "Dockerのキャッシュ"])
def test_japanese_questions_with_particles_find_the_session(
    store: SessionStore, query: str
) -> None:
    assert _roots(store, query)[0] == "docker-ja"


def test_words_spread_over_a_delegation_chain_rank_its_root_first(store: SessionStore) -> None:
    roots = _roots(store, "python upgrade psycopg2 wheel")
    assert roots[0] == "upgrade"
    assert {"python-misc", "wheel-misc"} <= set(roots[1:])


def test_a_session_covering_more_terms_outranks_one_repeating_a_word() -> None:
    s = SessionStore(":memory:")
    _add(s, "repeats", [("user", "backup backup backup")] * 6)
    _add(s, "covers", [("user", "the backup of photos with rsync failed")])
    assert _roots(s, "backup photos rsync")[0] == "covers"


def test_explicit_syntax_is_honoured_before_coverage(store: SessionStore) -> None:
    outcome = search_sessions(store, '"proxy-read-timeout" OR "psycopg2"')
    assert outcome.reading == "strict"
    assert {r.root_id for r in outcome.sessions} == {"ingress", "upgrade"}


def test_the_current_conversation_and_other_users_stay_out(store: SessionStore) -> None:
    assert "deploy-zh" not in _roots(store, "部署", current_session_id="deploy-zh")
    _add(store, "mine", [("user", "部署 notes of bob")], user_id="bob")
    assert _roots(store, "部署", user_id="bob") == ["mine"]


def test_documents_explain_their_rank(store: SessionStore) -> None:
    doc = SessionRecallRetriever(store=store, k=1).invoke("how did we fix the CORS error?")[0]
    assert doc.metadata["session_id"] == "cors"
    assert doc.metadata["score"] > 0
    texts = {m.id: m.content for m in store.get_messages("cors")}
    matched = doc.metadata["matched_message_ids"]
    assert matched and all("CORS" in texts[m] for m in matched[:1])


def test_typo_correction_on_a_read_only_hermes_file_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    build_hermes_db(path, 3)
    before = path.read_bytes()
    with SessionStore.open_hermes(path) as hermes:
        roots = [r.root_id for r in search_sessions(hermes, "postgrse conections").sessions]
    assert roots
    assert path.read_bytes() == before
    assert not os.path.exists(f"{path}-wal")
    conn = sqlite3.connect(path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    assert not any("vocab" in t for t in tables)


@pytest.mark.parametrize(
    ("query", "title_word"),
    [
        ("how did we fix the CORS error?", "CORS"),
        ("that script for renaming photos", "rename"),
        ("which API design did we settle on?", "API design"),
        ("服务端 部署", "服务端"),
        ("renmae photos", "rename"),
    ],
)
def test_demo_questions_find_their_session(query: str, title_word: str) -> None:
    titles = {s["id"]: s.get("title") or "" for s in demo_sessions()}
    roots = _roots(build_demo_store(), query)
    assert roots and title_word.lower() in titles[roots[0]].lower()


def test_cron_runs_cannot_use_up_the_hit_budget(store: SessionStore) -> None:
    # 80 cron messages match every word; only 10 hits per term are fetched.
    assert _roots(store, "CORS error nginx API", hit_limit=10)[0] == "cors"


def test_an_any_of_query_is_ranked_by_coverage(store: SessionStore) -> None:
    outcome = search_sessions(store, "CORS OR nginx OR OPTIONS")
    assert outcome.reading == "strict"
    assert outcome.sessions[0].root_id == "cors"


def test_a_session_of_many_short_lines_does_not_crowd_out_the_answer() -> None:
    # bm25 favours short messages: 150 log lines that say "kafka" used to take all 100 hits of
    # the word, and the session with the fix never reached the ranking (issue 23 §1)
    store = SessionStore(":memory:")
    lines = [("tool", f"kafka consumer poll {n}: ok") for n in range(150)]
    _add(store, "old-debug", [("user", "tail the consumer logs"), *lines], day=-60)
    _add(store, "kafka-fix", [
        ("user", "the kafka lag keeps growing on the orders consumer"),
        ("assistant", "Fixed: max.poll.records lowered to 100, the kafka lag is back to zero."),
    ], day=-2)  # fmt: skip
    assert "kafka-fix" in _roots(store, "kafka")
    assert _roots(store, "how did we fix the kafka lag?")[0] == "kafka-fix"
    assert _roots(store, '"kafka" OR "consumer"')[:2] == ["old-debug", "kafka-fix"]


def test_every_session_with_a_match_competes_for_a_shared_word() -> None:
    store = SessionStore(":memory:")
    for n in range(4):  # four equal 60-message sessions
        _add(store, f"s{n}", [("user", f"kafka broker {n} check {i}") for i in range(60)], day=n)
    assert sorted(_roots(store, "kafka")) == ["s0", "s1", "s2", "s3"]
    assert len(SessionRecallRetriever(store=store, k=3).invoke("kafka")) == 3
