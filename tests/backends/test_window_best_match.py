"""Issue 33, second defect: a window holds the best match, not the densest run of common words.

In a 2,000-message session of near-identical log lines, every line matches "terraform plan";
only one matches "vpc-1500". The window must show that line, on both backends.
"""

from __future__ import annotations

from store_targets import StoreFactory

from langchain_session_recall.recall.build import search_results

LINE = "terraform plan vpc-{i}: Refreshing state... no changes, infrastructure matches"


def test_the_window_shows_the_line_with_the_rare_word(store_factory: StoreFactory) -> None:
    store = store_factory.open("logs")
    store.add_session("logs", started_at=1000.0)
    store.add_messages(
        "logs",
        [
            {"role": "tool", "tool_name": "terminal", "content": LINE.format(i=i),
             "timestamp": 1000.0 + i}
            for i in range(2000)
        ],
    )  # fmt: skip
    [result] = search_results(store, "terraform plan vpc-1500", k=1, max_chars=600)
    assert "vpc-1500:" in result.page_content
    assert result.metadata["truncated"] is True
