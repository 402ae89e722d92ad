"""Deterministic corpus of realistic agent sessions for the performance benchmark.

``generate(seed, n_messages)`` yields sessions (parents before children) whose messages add up
to exactly ``n_messages``: user/assistant turns, assistant tool calls with OpenAI-style JSON,
tool outputs from a few hundred characters to 16 KB logs, code blocks, ~10% delegation children
(source ``subagent``), compression continuations (a child that starts with a compaction
summary), cron sessions with templated job output, and ~5% CJK sessions. ``QUERIES`` is the
fixed mix of 100 queries used at every size.

The same seed and size always give the same messages, so a built database can be cached.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["QUERIES", "QUERY_KINDS", "SessionSpec", "generate", "raw_bytes"]

_START = 1_735_689_600.0  # 2025-01-01 UTC

COMMON = (  # noqa: SIM905
    "error config deploy test build server request response file function update change "
    "issue fix check run output value data user service database query table index log "
    "version branch commit merge review install package module import class method return "
    "result start stop restart timeout retry cache memory disk network port host path"
).split()
FILLER = (  # noqa: SIM905
    "the a to of and in for on with that this it is we you should can will be from by as at "
    "then now first next also just need want looks like seems maybe probably because so but "
    "not all some any more less new old same other here there when after before while"
).split()
TOPICS = {
    "nginx": "nginx cors header proxy upstream location reverse ssl certificate",
    "postgres": "postgres migration vacuum replica wal schema constraint pgbouncer",
    "docker": "docker container image compose volume dockerfile registry layer",
    "kubernetes": "kubernetes pod deployment ingress helm kubelet namespace configmap",
    "python": "python virtualenv pip pytest asyncio typing pydantic traceback",
    "react": "react component hook state props render webpack vite typescript",
    "git": "git rebase cherry pick stash bisect conflict upstream remote",
    "aws": "aws lambda s3 bucket iam cloudfront route53 terraform",
    "redis": "redis eviction keyspace sentinel pubsub ttl cluster",
    "auth": "oauth token jwt session cookie login refresh scope",
    "ci": "pipeline workflow runner artifact matrix flaky cache",
    "email": "smtp dkim spf bounce mailgun inbox newsletter",
    "billing": "stripe invoice subscription webhook refund checkout",
    "search": "elasticsearch shard analyzer tokenizer relevance reindex",
    "ml": "embedding finetune checkpoint gradient tokenizer dataset epoch",
    "home": "thermostat sprinkler garage camera router firmware",
    "writing": "draft outline chapter paragraph blog headline",
    "travel": "flight hotel itinerary passport visa luggage",
    "finance": "budget spreadsheet mortgage receipts taxes invoice",
    "painting": "painting canvas acrylic watercolor palette brushes",
}
TOPIC_NAMES = sorted(TOPICS)
TOOLS = ("terminal", "read_file", "write_file", "web_search", "browser", "python", "grep")
CJK_SENTENCES = (
    "修改服务端配置以后需要重启",
    "数据库迁移失败了请检查日志",
    "部署脚本在生产环境报错",
    "用户登录令牌过期的问题",
    "缓存命中率太低需要优化",
    "设定ファイルを更新してサーバーを再起動しました",
    "テストが失敗したのでログを確認してください",
    "데이터베이스 백업이 완료되었습니다",
)
CRON_JOBS = ("nightly-backup", "disk-report", "rss-digest", "cert-renewal", "uptime-check")


def _rare_words(seed: int, n: int) -> list[str]:
    rng = random.Random(seed * 7919 + 1)
    consonants, vowels = "bcdfghjklmnprstvwxz", "aeiou"
    words: set[str] = set()
    while len(words) < n:
        syllables = rng.randint(3, 4)
        words.add(
            "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(syllables)) + "x"
        )
    return sorted(words)


RARE = _rare_words(0, 300)  # fixed across seeds and sizes so the query mix is fixed


@dataclass
class SessionSpec:
    """One session to create: ``add_session`` keyword arguments and its messages (dicts)."""

    session_id: str
    kwargs: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)


class _Writer:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def sentence(self, topic: str, n: int | None = None) -> str:
        rng = self.rng
        words = TOPICS[topic].split()
        n = n or rng.randint(8, 20)
        out = []
        for _ in range(n):
            r = rng.random()
            if r < 0.45:
                out.append(rng.choice(FILLER))
            elif r < 0.75:
                out.append(rng.choice(COMMON))
            elif r < 0.998:
                out.append(rng.choice(words))
            else:
                out.append(rng.choice(RARE))
        return " ".join(out).capitalize() + "."

    def paragraph(self, topic: str, lo: int, hi: int) -> str:
        return " ".join(self.sentence(topic) for _ in range(self.rng.randint(lo, hi)))

    def code(self, topic: str) -> str:
        rng = self.rng
        name = rng.choice(TOPICS[topic].split())
        lines = [f"def {name}_{rng.choice(COMMON)}(config):"]
        for _ in range(rng.randint(3, 10)):
            lines.append(
                f"    {rng.choice(COMMON)} = config.get('{rng.choice(TOPICS[topic].split())}', "
                f"{rng.randint(0, 999)})"
            )
        lines.append(f"    return {rng.choice(COMMON)}")
        return "```python\n" + "\n".join(lines) + "\n```"

    def log(self, topic: str, n_chars: int) -> str:
        rng = self.rng
        words = TOPICS[topic].split()
        lines: list[str] = []
        size = 0
        t = rng.randint(0, 86_000)
        while size < n_chars:
            t += rng.randint(0, 5)
            level = rng.choice(("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"))
            line = (
                f"2025-03-{rng.randint(1, 28):02d} {t // 3600 % 24:02d}:{t // 60 % 60:02d}:"
                f"{t % 60:02d} {level} [{rng.choice(words)}] {rng.choice(COMMON)} "
                f"{rng.choice(COMMON)} id={rng.randint(1000, 99999)} "
                f"took={rng.randint(1, 900)}ms"
            )
            if level == "ERROR" and rng.random() < 0.3:
                line += " connection refused"
            lines.append(line)
            size += len(line) + 1
        return "\n".join(lines)

    def tool_output(self, topic: str) -> str:
        r = self.rng.random()
        if r < 0.6:
            return self.log(topic, self.rng.randint(60, 400))
        if r < 0.9:
            return self.log(topic, self.rng.randint(500, 2000))
        return self.log(topic, self.rng.randint(4000, 16000))


def _conversation(w: _Writer, topic: str, n: int, t0: float, cjk: bool) -> list[dict[str, Any]]:
    rng = w.rng
    out: list[dict[str, Any]] = []
    t = t0
    call = 0
    while len(out) < n:
        t += rng.uniform(5, 120)
        if cjk:
            text = " ".join(rng.choice(CJK_SENTENCES) for _ in range(rng.randint(1, 3)))
            out.append({"role": "user", "content": text + " " + w.sentence(topic, 6)})
        else:
            out.append({"role": "user", "content": w.paragraph(topic, 1, 3)})
        while len(out) < n and rng.random() < 0.55:
            call += 1
            tool = rng.choice(TOOLS)
            args = {"command": w.sentence(topic, 6), "path": f"/srv/{topic}/{rng.choice(COMMON)}"}
            out.append(
                {
                    "role": "assistant",
                    "content": "",
                    "timestamp": t,
                    "tool_calls": [{"id": f"c{call}", "name": tool, "args": args}],
                }
            )
            if len(out) < n:
                out.append(
                    {
                        "role": "tool",
                        "tool_name": tool,
                        "tool_call_id": f"c{call}",
                        "content": w.tool_output(topic),
                    }
                )
        if len(out) < n:
            body = w.paragraph(topic, 2, 6)
            if rng.random() < 0.3:
                body += "\n\n" + w.code(topic)
            if cjk and rng.random() < 0.5:
                body = rng.choice(CJK_SENTENCES) + "。" + body
            out.append({"role": "assistant", "content": body})
    for m in out:
        t += rng.uniform(1, 30)
        m["timestamp"] = t
    return out[:n]


def generate(seed: int, n_messages: int) -> Iterator[SessionSpec]:
    """Sessions with exactly ``n_messages`` messages in total, parents first.

    Example:
        >>> sum(len(s.messages) for s in generate(1, 500))
        500
    """
    rng = random.Random(seed)
    w = _Writer(rng)
    remaining = n_messages
    t = _START
    serial = 0
    recent_roots: list[str] = []
    while remaining > 0:
        serial += 1
        sid = f"s{serial:07d}"
        t += rng.uniform(60, 4 * 3600)
        topic = rng.choice(TOPIC_NAMES)
        kind = rng.random()
        if kind < 0.12:  # cron run: short templated job output
            job = rng.choice(CRON_JOBS)
            n = min(remaining, rng.randint(3, 8))
            msgs = [
                {"role": "user", "content": f"Scheduled job {job}: run and report.", "timestamp": t}
            ]
            msgs += _conversation(w, topic, n - 1, t, cjk=False) if n > 1 else []
            spec = SessionSpec(sid, {"source": "cron", "title": f"cron {job}", "started_at": t})
            spec.messages = msgs[:n]
        else:
            cjk = rng.random() < 0.05
            n = min(remaining, max(2, int(rng.lognormvariate(3.0, 0.8))))
            parent = None
            source = rng.choice(("cli", "cli", "telegram", "discord"))
            title = f"{topic} {rng.choice(COMMON)}"
            first: dict[str, Any] | None = None
            if recent_roots and kind < 0.22:  # delegation child of a recent session
                parent, source = rng.choice(recent_roots[-20:]), "subagent"
                title = f"subtask: {title}"
            elif recent_roots and kind < 0.27:  # compression continuation
                parent = recent_roots[-1]
                first = {
                    "role": "user",
                    "content": "[CONTEXT COMPACTION] Summary of the earlier conversation: "
                    + w.paragraph(topic, 3, 8),
                    "timestamp": t,
                }
            msgs = _conversation(w, topic, n - (first is not None), t, cjk=cjk)
            if first is not None:
                msgs.insert(0, first)
            spec = SessionSpec(
                sid,
                {
                    "source": source,
                    "title": title,
                    "started_at": t,
                    "parent_session_id": parent,
                    "model": "gpt-4.1-mini",
                },
            )
            spec.messages = msgs[:n]
            if parent is None:
                recent_roots.append(sid)
        remaining -= len(spec.messages)
        t = max(t, spec.messages[-1]["timestamp"]) if spec.messages else t
        yield spec


def raw_bytes(message: dict[str, Any]) -> int:
    """UTF-8 bytes of the text a message carries (content, tool name, tool-call JSON)."""
    content = message.get("content") or ""
    n = len(content.encode("utf-8"))
    if message.get("tool_name"):
        n += len(message["tool_name"])
    if message.get("tool_calls"):
        n += len(json.dumps(message["tool_calls"]))
    return n


def _queries() -> list[tuple[str, str]]:
    rng = random.Random(4242)
    out: list[tuple[str, str]] = []
    for word in rng.sample(RARE, 20):
        out.append(("rare", word))
    for _ in range(5):
        out.append(
            ("rare", f"{rng.choice(RARE)} {rng.choice(TOPICS[rng.choice(TOPIC_NAMES)].split())}")
        )
    for word in rng.sample(COMMON, 15):
        out.append(("common", word))
    for _ in range(5):
        out.append(("common", f"{rng.choice(COMMON)} {rng.choice(COMMON)}"))
    phrases = ["connection refused", "permission denied"]
    for topic in rng.sample(TOPIC_NAMES, 18):
        a, b = rng.sample(TOPICS[topic].split(), 2)
        phrases.append(f"{a} {b}")
    for p in phrases:
        out.append(("phrase", f'"{p}"'))
    templates = (
        "how did we fix the {a} {b} problem?",
        "what was the {a} setting we changed for {b}",
        "remind me what we decided about {a} and {b}",
        "when did the {a} {c} fail last time",
        "which {c} did we use for the {a} {b}",
    )
    for _ in range(25):
        topic = rng.choice(TOPIC_NAMES)
        a, b = rng.sample(TOPICS[topic].split(), 2)
        out.append(("question", rng.choice(templates).format(a=a, b=b, c=rng.choice(COMMON))))
    cjk_words = (
        "服务端",
        "数据库迁移",
        "部署脚本",
        "登录令牌",
        "缓存",
        "设定ファイル",
        "ログ",
        "백업",
    )
    for word in cjk_words:
        out.append(("cjk", word))
    out.append(("cjk", "生产环境 报错"))
    out.append(("cjk", "重启 nginx"))
    return out


QUERIES: list[tuple[str, str]] = _queries()
QUERY_KINDS = ("rare", "common", "phrase", "question", "cjk")
assert len(QUERIES) == 100, len(QUERIES)
