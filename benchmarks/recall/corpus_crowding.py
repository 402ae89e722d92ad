"""Crowding cases of the recall evaluation set (issue 23 §1): the session with the answer
against sessions of many short lines that repeat its words.

bm25 favours short messages, so 150 log lines that each say ``kafka`` outrank every message of
the session where the lag was fixed; a search that keeps the best hits of a word over the whole
store (100 per term) then never sees that session. Each case here is an old, long session of
short lines (a log tail, a watch loop, a chat of one-word replies) that repeats the words of a
question, and a newer session, of a few longer messages, that answers it. The dicts have the
shape of :mod:`corpus_en`'s; the long sessions are generated (they are repetitive on purpose).
"""

from __future__ import annotations

from typing import Any

__all__ = ["SESSIONS"]


def _lines(template: str, n: int) -> list[tuple[str, ...]]:
    """``n`` short tool-output lines, numbered (a log tail)."""
    return [("t", "terminal", template.format(i=i)) for i in range(n)]


def _noisy(key: str, day: int, user: str, title: str, ask: str, line: str) -> dict[str, Any]:
    """An old session of 150 short log lines, each holding the question's words."""
    return {
        "key": key,
        "user": user,
        "src": "cli",
        "day": day,
        "title": title,
        "msgs": [
            ("u", ask),
            ("c", "terminal", '{"command": "tail -f /var/log/app.log"}'),
            *_lines(line, 150),
            ("a", "Streaming the log; nothing stands out yet."),
        ],
    }


_CASES: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (
        _noisy(
            "crowd-kafka-tail",
            5,
            "bob",
            "Tail the consumer logs",
            "tail the orders consumer logs for a while",
            "kafka consumer lag partition {i}: 12 msgs",
        ),
        {
            "key": "crowd-kafka-fix",
            "user": "bob",
            "src": "cli",
            "day": 80,
            "title": "Orders service falling behind",
            "msgs": [
                (
                    "u",
                    "The orders service falls behind again: kafka consumer lag keeps growing "
                    "since Monday and the dashboard shows minutes of delay.",
                ),
                (
                    "a",
                    "The consumer group rebalances every few minutes because a batch takes "
                    "longer than max.poll.interval.ms to process; each rebalance stops every "
                    "consumer, so the lag grows.",
                ),
                (
                    "a",
                    "I lowered max.poll.records from 500 to 100 and raised max.poll.interval.ms "
                    "to 600000 in the consumer config; after a restart the lag drained to zero "
                    "in ten minutes.",
                ),
            ],
            "q": [
                ("crowding", "how did we fix the kafka consumer lag?"),
                ("crowding", "kafka lag max.poll.records"),
            ],
        },
    ),
    (
        _noisy(
            "crowd-redis-watch",
            8,
            "alice",
            "Watch redis memory",
            "watch the redis memory while the import runs",
            "redis used_memory {i}MB evicted_keys 0",
        ),
        {
            "key": "crowd-redis-fix",
            "user": "alice",
            "src": "cli",
            "day": 84,
            "title": "Sessions logged out at random",
            "msgs": [
                (
                    "u",
                    "Users get logged out at random during the day; sessions live in redis, "
                    "could redis be evicting them?",
                ),
                (
                    "a",
                    "Yes: maxmemory is 2gb with the allkeys-lru policy, so under load redis "
                    "evicts session keys along with the cache.",
                ),
                (
                    "a",
                    "I moved the sessions to their own redis database with the volatile-lru "
                    "policy and gave the cache keys a TTL; no logout since.",
                ),
            ],
            "q": [
                ("crowding", "what did we change when redis evicted the user sessions?"),
                ("crowding", "redis eviction policy sessions"),
            ],
        },
    ),
    (
        _noisy(
            "crowd-nginx-tail",
            11,
            "alice",
            "Access log during the load test",
            "show me the nginx access log during the load test",
            "nginx upstream 502 GET /api/items/{i}",
        ),
        {
            "key": "crowd-nginx-fix",
            "user": "alice",
            "src": "cli",
            "day": 86,
            "title": "502s behind the proxy",
            "msgs": [
                (
                    "u",
                    "After the deploy nginx answers 502 for one request in twenty; the app "
                    "logs show nothing.",
                ),
                (
                    "a",
                    "The upstream keepalive connections are closed by gunicorn after 2 s "
                    "while nginx keeps them for 60 s, so nginx reuses a dead connection and "
                    "returns 502.",
                ),
                (
                    "a",
                    "I set gunicorn --keep-alive 75 (above nginx's keepalive_timeout) and "
                    "added proxy_next_upstream error timeout; the 502s are gone.",
                ),
            ],
            "q": [
                ("crowding", "how did we get rid of the nginx 502 errors?"),
                ("crowding", "nginx 502 keepalive"),
            ],
        },
    ),
]

# Four equal sessions that each mention the word in every message (60 each): a search that keeps
# 100 hits of the word over the store sees only the first two; the question's session is the
# newest of them and the only one that says what was decided.
_EQUAL = [
    {
        "key": f"crowd-celery-{n}",
        "user": "bob",
        "src": "cli",
        "day": 20 + n * 15,
        "title": f"Celery worker check {n}",
        "msgs": [
            ("u", f"check the celery workers, round {n}"),
            *_lines(f"celery worker {n}.{{i}} ok", 58),
            (
                ("a", "Decision: celery retries now back off exponentially, max 5 retries.")
                if n == 3
                else ("a", "All celery workers answered.")
            ),
        ],
        **({"q": [("crowding", "what did we decide about celery retries?")]} if n == 3 else {}),
    }
    for n in range(4)
]

SESSIONS: list[dict[str, Any]] = [*(s for case in _CASES for s in case), *_EQUAL]
