"""``session_search`` within a token budget (issue 34, deliverable 3)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from langchain_session_recall import SessionStore, create_session_search_tool
from langchain_session_recall.summarize.budget import CODE_CUT_MARKER, Recap, estimate_tokens
from langchain_session_recall.tool import BUDGET_NOTE

CORS = "20261103_091512_a1b2c3"
QUERY = "docker OR nginx OR postgres OR backup OR CORS"


def _output(tool: Any, args: dict[str, Any]) -> str:
    call = {"name": "session_search", "args": args, "id": "c1", "type": "tool_call"}
    return str(tool.invoke(call).content)


@pytest.mark.parametrize("budget", [150, 300, 600, 1000])
def test_the_output_fits_the_budget(demo_store: SessionStore, budget: int) -> None:
    tool = create_session_search_tool(demo_store, max_tokens=budget)
    output = _output(tool, {"query": QUERY, "limit": 5})
    assert estimate_tokens(output) <= budget
    assert json.loads(output)["success"] is True


def test_the_best_session_is_filled_first(demo_store: SessionStore) -> None:
    unbounded = json.loads(_output(create_session_search_tool(demo_store), {"query": QUERY}))
    assert len(unbounded["results"]) == 3
    tight = json.loads(
        _output(create_session_search_tool(demo_store, max_tokens=200), {"query": QUERY})
    )
    shown = [r["session_id"] for r in tight["results"]]
    assert shown and shown == [r["session_id"] for r in unbounded["results"]][: len(shown)]
    assert len(json.dumps(tight)) < len(json.dumps(unbounded))
    # the best session keeps its best message (the recap's first piece), whole if it was clipped
    call = {"name": "session_search", "args": {"query": QUERY}, "id": "c1", "type": "tool_call"}
    recap = Recap.of(create_session_search_tool(demo_store).invoke(call).artifact[0].metadata, "")
    best = recap.order[0]
    assert (recap.wide[best] or recap.pieces[best]) in tight["results"][0]["summary"]


def test_a_generous_budget_keeps_every_recap_and_adds_more_of_it(demo_store: SessionStore) -> None:
    args = {"query": "how did we fix the CORS error?"}
    plain = json.loads(_output(create_session_search_tool(demo_store), args))["results"]
    tool = create_session_search_tool(demo_store, max_tokens=100_000)
    generous = json.loads(_output(tool, args))["results"]
    assert [r["session_id"] for r in generous] == [r["session_id"] for r in plain]
    for wide, default in zip(generous, plain, strict=True):
        lines, more = default["summary"].split("\n"), wide["summary"].split("\n")
        assert lines[1].startswith(f"Session {default['session_id']}")  # the header, not shown
        for line in lines[2:]:  # every message of the recap, clipped ones at more length
            assert all(part in wide["summary"] for part in line.split("…"))
        assert sum(line.startswith("[") for line in more) >= sum(
            line.startswith("[") for line in lines[2:]
        )
    assert sum(len(r["summary"]) for r in generous) > sum(len(r["summary"]) for r in plain)


def test_any_len_like_token_counter_is_used(demo_store: SessionStore) -> None:
    counted: list[str] = []

    def words(text: str) -> int:
        counted.append(text)
        return len(text.split())

    tool = create_session_search_tool(demo_store, max_tokens=120, token_counter=words)
    output = _output(tool, {"query": QUERY})
    assert counted and len(output.split()) <= 120


def test_recent_sessions_fit_the_budget_too(demo_store: SessionStore) -> None:
    output = _output(create_session_search_tool(demo_store, max_tokens=80), {"limit": 5})
    payload = json.loads(output)
    assert estimate_tokens(output) <= 80 and 0 < len(payload["results"]) < 5


def test_a_code_block_cut_by_the_budget_is_closed_and_marked(store: SessionStore) -> None:
    script = "```bash\n" + "\n".join(f"rsync -a /srv/data{n} backup:/b{n}" for n in range(60))
    store.add_session("s1", title="Backups")
    store.add_messages(
        "s1",
        [
            {"role": "user", "content": "write the backup script"},
            {"role": "assistant", "content": f"Here is the backup script:\n{script}\n```"},
        ],
    )
    tool = create_session_search_tool(store, max_tokens=600)
    summary = json.loads(_output(tool, {"query": "backup script"}))["results"][0]["summary"]
    assert CODE_CUT_MARKER in summary and summary.count("```") % 2 == 0


def test_a_budgeted_reply_says_each_thing_once(demo_store: SessionStore) -> None:
    """A budget is spent on messages: no null fields, no ``count`` (the results say it), no
    query echoed back, the results' session line (their fields say it) and each recap's "not
    summarized" label (said once, shortly, as ``summary_note``) left out."""
    plain = json.loads(_output(create_session_search_tool(demo_store), {"query": QUERY}))
    output = _output(create_session_search_tool(demo_store, max_tokens=1000), {"query": QUERY})
    lean = json.loads(output)
    label = plain["results"][0]["summary"].split("\n")[0]
    assert label.startswith("[Not summarized") and lean["summary_note"] == BUDGET_NOTE
    assert "count" not in lean and "query" not in lean and plain["query"] == QUERY
    assert lean["results"] and all(None not in r.values() for r in lean["results"])
    for result in lean["results"]:
        assert "Not summarized" not in result["summary"]
        assert f"Session {result['session_id']}," not in result["summary"]
    assert output == json.dumps(lean, ensure_ascii=False, separators=(",", ":"))


def test_a_budgeted_reply_echoes_the_query_when_a_notice_says_what_changed(
    demo_store: SessionStore,
) -> None:
    tool = create_session_search_tool(demo_store, max_tokens=1000)
    lean = json.loads(_output(tool, {"query": QUERY, "limit": 50}))
    assert "cap" in lean["notice"] and lean["query"] == QUERY


def test_a_budget_too_small_for_any_result_says_so_not_that_nothing_matched(
    demo_store: SessionStore,
) -> None:
    tight = json.loads(
        _output(create_session_search_tool(demo_store, max_tokens=40), {"query": QUERY})
    )
    assert tight["results"] == []
    assert "matched, but none fits this tool's max_tokens (40)" in tight["message"]
    nothing = json.loads(
        _output(create_session_search_tool(demo_store, max_tokens=40), {"query": "zzqxv"})
    )
    assert nothing["message"].startswith("No past session matched")
