"""Recent mode and automation runs, on both backends (issue 16 §3)."""

from __future__ import annotations

import json
from typing import Any

from langchain_session_recall import SessionRecallRetriever, create_session_search_tool


def _session(store: Any, sid: str, text: str, started_at: float, **kw: Any) -> None:
    store.add_session(sid, started_at=started_at, **kw)
    store.add_messages(sid, [{"role": "user", "content": text, "timestamp": started_at}])


def _fill(store: Any, cron_runs: int = 3) -> None:
    _session(store, "cors", "CORS blocked /api/v2/orders", 100.0, title="CORS fix")
    _session(store, "k8s", "ingress 502 after deploy", 200.0, title="Ingress 502")
    for n in range(cron_runs):
        _session(
            store,
            f"disk-{n}",
            "Run df -h and report",
            1000.0 + n,
            source="cron",
            title="Nightly disk usage check",
        )
    _session(store, "board", "Move card 12 to done", 500.0, source="kanban", title="Card 12")


def test_recent_mode_shows_one_run_of_each_automation_job_by_default(store: Any) -> None:
    _fill(store)
    docs = SessionRecallRetriever(store=store, k=5).invoke("")
    assert [d.metadata["session_id"] for d in docs] == ["disk-2", "board", "k8s", "cors"]
    assert {d.metadata["mode"] for d in docs} == {"recent"}
    every = SessionRecallRetriever(store=store, k=5, collapse_automation=False).invoke("")
    assert [d.metadata["session_id"] for d in every] == [
        "disk-2",
        "disk-1",
        "disk-0",
        "board",
        "k8s",
    ]


def test_the_tool_browses_collapsed_with_its_json_unchanged(store: Any) -> None:
    _fill(store)
    payload = json.loads(create_session_search_tool(store, llm=None).invoke({"query": ""}))
    ids = [r["session_id"] for r in payload["results"]]
    assert ids == ["disk-2", "board", "k8s"]
    assert set(payload["results"][0]) == {
        "session_id",
        "when",
        "source",
        "title",
        "preview",
        "message_count",
    }
