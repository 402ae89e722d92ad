"""Shared pieces of the reliability suite: the figures it reports, Hypothesis settings, a small
corpus, and the environment for child processes.

Every test that tries generated cases, injects faults, runs concurrent operations or checks
messages adds to :data:`FIGURES` with :func:`count`; a test that runs on a store names its
backend, so each figure is reported per backend (``hostile.cases[postgres]``).
``tests/conftest.py`` prints the totals at the end of the run (summed over pytest-xdist's
workers) and, when the environment variable ``RELIABILITY_REPORT`` names a file, writes them
there as JSON (the numbers quoted in ``docs/reliability.md`` come from such a file).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

from langchain_session_recall.backends import SessionBackend

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
FIGURES: Counter[str] = Counter()
_FIGURES_LOCK = threading.Lock()

RELIABILITY_SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,  # fresh cases on every run; a failure prints its reproducer
)
"""Base Hypothesis settings: ``@settings(RELIABILITY_SETTINGS, max_examples=n)``."""


PG_EXAMPLES = 0.25
"""Share of a property's Hypothesis examples run on PostgreSQL, where each search is a few
round trips to the server (about three times the cost of an in-process SQLite search)."""


def count(name: str, n: int = 1, *, backend: str | None = None) -> None:
    """Add ``n`` to the figure ``name``, or to ``name[backend]`` (thread-safe)."""
    key = f"{name}[{backend}]" if backend else name
    with _FIGURES_LOCK:
        FIGURES[key] += n


def examples(n: int, backend: str) -> int:
    """Hypothesis examples of a property for ``backend``: ``n`` on SQLite, a share
    (:data:`PG_EXAMPLES`, at least 10) on PostgreSQL."""
    return n if backend == "sqlite" else max(10, round(n * PG_EXAMPLES))


# --------------------------------------------------------------------------- a small corpus

CORPUS_WORDS = (
    "nginx",
    "kubernetes",
    "postgres",
    "watercolor",
    "sourdough",
    "serialization",
    "zebrafish",
    "2fa",
    "服务",
)
"""Non-stop-words that each occur, as standalone tokens, in the corpus below."""

CORPUS: list[dict[str, Any]] = [
    {
        "id": "s-nginx",
        "title": "CORS behind nginx",
        "messages": [
            {"role": "user", "content": "the nginx proxy drops the CORS header"},
            {"role": "assistant", "content": "Add add_header to the nginx location block."},
        ],
    },
    {
        "id": "s-k8s",
        "title": "Cluster upgrade",
        "messages": [
            {"role": "user", "content": "upgrade kubernetes to 1.31 without downtime"},
            {"role": "assistant", "content": "Drain the nodes one by one."},
        ],
    },
    {
        "id": "s-pg",
        "title": "Slow query",
        "messages": [
            {"role": "user", "content": "postgres query is slow: seq scan on orders"},
            {"role": "tool", "content": "EXPLAIN ANALYZE ...", "tool_name": "psql"},
        ],
    },
    {
        "id": "s-paint",
        "title": "Painting",
        "messages": [{"role": "user", "content": "which watercolor paper for wet washes?"}],
    },
    {
        "id": "s-bread",
        "title": "Baking",
        "messages": [{"role": "user", "content": "my sourdough starter smells of acetone"}],
    },
    {
        "id": "s-json",
        "title": "Dates in JSON",
        "messages": [
            {"role": "user", "content": "datetime serialization fails in the API"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c1", "name": "search_docs", "args": {"q": "isoformat"}}],
            },
        ],
    },
    {
        "id": "s-fish",
        "title": "Lab notes",
        "messages": [{"role": "user", "content": "zebrafish embryos at 48 hpf"}],
    },
    {
        "id": "s-2fa",
        "title": "Login",
        "messages": [{"role": "user", "content": "enable 2fa for the admin account"}],
    },
    {
        "id": "s-cjk",
        "title": "配置",
        "messages": [{"role": "user", "content": "修改服务端配置 for the gateway"}],
    },
]


def load_corpus(store: SessionBackend) -> None:
    """Write :data:`CORPUS` into ``store`` (ids and titles as given)."""
    for i, session in enumerate(CORPUS):
        store.add_session(session["id"], title=session["title"], started_at=1_790_000_000.0 + i)
        store.add_messages(session["id"], session["messages"])


def subprocess_env() -> dict[str, str]:
    """The environment for a child Python that imports this checkout of the package and the
    test helpers (``store_targets``)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(REPO), str(TESTS), env.get("PYTHONPATH")])
    )
    return env
