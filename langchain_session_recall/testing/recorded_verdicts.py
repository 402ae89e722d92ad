"""The verdicts of the recorded recaps: what the summarizer decided on each model answer in
``cassettes/``, read by the tests and the notebooks, updated by ``scripts/review_verdicts.py``.

``cassettes/verdicts.json`` maps cassette -> session title -> ``{"verdict": [...], "note": ...}``
where the verdict is ``["summarized"]``, ``["rejected", *reasons]`` or ``["fallback", reason]``
and the note is a person's reading of the recorded answer (is an accepted recap a recap of its
session? is a rejected one rightly rejected?). A note that starts with ``UNREVIEWED`` was written
by the review script for a verdict nobody has read yet: the tests fail until it is replaced.

With ``SESSION_RECALL_VERDICTS_DUMP=<file>`` set, :func:`check` records what replay produced
(verdict, the recap or the rejected answer, its citations) in that file, one JSON object a line,
instead of asserting it; the review script runs the tests that way and prints the differences.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from langchain_core.documents import Document

from langchain_session_recall.testing.cassettes import CASSETTE_DIR

__all__ = ["VERDICTS_FILE", "check", "expected", "observe", "verdict"]

VERDICTS_FILE = CASSETTE_DIR / "verdicts.json"
DUMP_VAR = "SESSION_RECALL_VERDICTS_DUMP"
UNREVIEWED = "UNREVIEWED"


def verdict(doc: Document) -> tuple[str, ...]:
    """``("rejected", *reasons)``, ``("fallback", reason)`` or ``(status,)``."""
    meta = doc.metadata
    status = meta["summary_status"]
    if status == "rejected":
        return (status, *meta["summary_rejected_because"])
    if status == "fallback":
        return (status, meta["summary_fallback_reason"])
    return (status,)


def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(VERDICTS_FILE.read_text("utf-8"))
    return data


def expected(cassette: str) -> dict[str, tuple[str, ...]]:
    """Session title -> recorded verdict, for one cassette."""
    entries = load()["cassettes"][cassette]
    return {title: tuple(e["verdict"]) for title, e in entries.items()}


def _observation(cassette: str, doc: Document) -> dict[str, Any]:
    meta = doc.metadata
    return {
        "cassette": cassette,
        "title": meta.get("title"),
        "verdict": list(verdict(doc)),
        "text": meta.get("summary_rejected_text") or doc.page_content,
        "citations": meta.get("citations"),
        "unsupported": meta.get("unsupported_text", []),
        "cut_off": meta.get("summary_cut_off", False),
    }


def observe(cassette: str, docs: Iterable[Document]) -> bool:
    """With the dump variable set, write down what each answered session of ``docs`` got and
    return True; otherwise do nothing and return False."""
    dump = os.environ.get(DUMP_VAR)
    if not dump:
        return False
    with open(dump, "a", encoding="utf-8") as f:
        for doc in docs:
            if doc.metadata.get("summary_status") in {"summarized", "cached", "rejected"}:
                f.write(json.dumps(_observation(cassette, doc), ensure_ascii=False) + "\n")
    return True


def check(cassette: str, docs: Iterable[Document]) -> None:
    """Assert that each answered session of ``docs`` got its recorded verdict (or, with the dump
    variable set, write down what it got). Sessions the table does not list are not checked:
    a fallback of the deadline test, say, is asserted by the test itself."""
    docs = list(docs)
    if observe(cassette, docs):
        return
    table = load()["cassettes"][cassette]
    unread = [t for t, e in table.items() if str(e.get("note", "")).startswith(UNREVIEWED)]
    assert not unread, f"{cassette}: verdicts not reviewed yet: {unread}"
    wanted = expected(cassette)
    got = {d.metadata["title"]: verdict(d) for d in docs if d.metadata["title"] in wanted}
    assert got == wanted
    # Only an answer recorded to be truncated (a budget cut on purpose) may stop at the budget.
    cut = [t for t, v in got.items() if "truncated" not in v and _cut_off(docs, t)]
    assert not cut, f"{cassette}: stopped at the output budget: {cut}"


def _cut_off(docs: list[Document], title: str) -> bool:
    return any(d.metadata.get("summary_cut_off") for d in docs if d.metadata["title"] == title)
