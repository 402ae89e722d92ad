"""Deterministic evaluation set for session recall: sessions, distractors and questions.

``build_dataset(seed)`` returns the same :class:`Dataset` for the same seed. It holds

* the hand-written sessions of :mod:`corpus_en`, :mod:`corpus_cjk` and :mod:`corpus_tool_calls`
  (whose answers live in tool-call arguments), each with questions
  whose answer lives in that session's chain (sub-agent runs and compression continuations
  are child sessions, so the expected answer is always the root);
* the crowding cases of :mod:`corpus_crowding`: long sessions of short lines that repeat the
  words of a question whose answer is in another session;
* near-duplicate automation sessions (``source="cron"``): nightly backups, certificate and
  uptime checks, disk reports and a Chinese daily report, one per job per day, written with
  the same words the questions use, so they flood keyword hits;
* filler interactive sessions built from templates over a shared technical vocabulary (in
  English and Chinese), which match the common words of many questions.

Example:
    >>> ds = build_dataset(7)
    >>> len(ds.questions) > 100 and ds == build_dataset(7)
    True
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from benchmarks.recall import corpus_cjk, corpus_crowding, corpus_en, corpus_tool_calls
from benchmarks.recall.holdout import HOLDOUT
from benchmarks.recall.holdout import SESSIONS as HOLDOUT_SESSIONS

EPOCH = 1_780_272_000.0  # 2026-06-01 00:00 UTC
DAY = 86_400.0
USERS_EN = ("alice", "bob", "carol")
USERS_CJK = ("chen", "yuki")

CATEGORIES = (
    "natural",
    "keyword",
    "cron_flood",
    "tool_output",
    "delegation",
    "continuation",
    "inflection",
    "typo_partial",
    "zh",
    "ja",
    "mixed",
    "punctuated",
    "tool_call",
    "crowding",
)
CJK_CATEGORIES = frozenset({"zh", "ja", "mixed", "punctuated"})


@dataclass(frozen=True)
class SessionSpec:
    """One session to load: store fields plus its messages (dicts for ``add_messages``)."""

    id: str
    source: str
    user_id: str
    title: str
    started_at: float
    messages: tuple[dict[str, Any], ...]
    parent_session_id: str | None = None
    end_reason: str | None = None


@dataclass(frozen=True)
class Question:
    """A recall question and the root session that answers it.

    ``holdout`` questions were written after the ranking was tuned and never used to tune it.
    """

    text: str
    category: str
    target: str
    holdout: bool = False


@dataclass(frozen=True)
class Dataset:
    """Sessions (parents before children) and questions."""

    sessions: tuple[SessionSpec, ...]
    questions: tuple[Question, ...]
    seed: int = field(default=0)

    def roots(self) -> list[str]:
        """Ids of the root sessions."""
        return [s.id for s in self.sessions if s.parent_session_id is None]


# --------------------------------------------------------------------------- messages


def _messages(spec: list[tuple[str, ...]], start: float, tag: str) -> tuple[dict[str, Any], ...]:
    out: list[dict[str, Any]] = []
    ts = start
    calls = 0
    for item in spec:
        ts += 20.0
        kind = item[0]
        if kind == "u":
            out.append({"role": "user", "content": item[1], "timestamp": ts})
        elif kind == "a":
            out.append({"role": "assistant", "content": item[1], "timestamp": ts})
        elif kind == "c":
            calls += 1
            out.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": f"call_{tag}_{calls}",
                            "type": "function",
                            "function": {"name": item[1], "arguments": item[2]},
                        }
                    ],
                    "timestamp": ts,
                }
            )
        elif kind == "t":
            out.append(
                {
                    "role": "tool",
                    "content": item[2],
                    "tool_name": item[1],
                    "tool_call_id": f"call_{tag}_{calls}",
                    "timestamp": ts,
                }
            )
        else:  # pragma: no cover - corpus typo
            raise ValueError(f"unknown message kind {kind!r} in {tag}")
    return tuple(out)


def _authored(rng: random.Random) -> tuple[list[SessionSpec], list[Question]]:
    sessions: list[SessionSpec] = []
    questions: list[Question] = []
    hand_written = [
        *corpus_en.SESSIONS,
        *corpus_cjk.SESSIONS,
        *corpus_crowding.SESSIONS,
        *corpus_tool_calls.SESSIONS,
    ]
    authored = [(False, s) for s in hand_written]
    for held_out, raw in [*authored, *((True, s) for s in HOLDOUT_SESSIONS)]:
        key = raw["key"]
        start = EPOCH + raw["day"] * DAY + rng.randint(8, 20) * 3600.0
        msgs = _messages(raw["msgs"], start, key)
        sessions.append(
            SessionSpec(key, raw["src"], raw["user"], raw["title"], start, msgs, None, "idle")
        )
        parent = key
        for i, child in enumerate(raw.get("children", ()), 1):
            child_start = start + 600.0 * i
            kind = child["kind"]
            cid = f"{key}-{'sub' if kind == 'subagent' else 'cont'}{i}"
            sessions.append(
                SessionSpec(
                    cid,
                    "subagent" if kind == "subagent" else raw["src"],
                    raw["user"],
                    raw["title"] if kind == "compression" else f"sub-agent: {raw['title']}",
                    child_start,
                    _messages(child["msgs"], child_start, cid),
                    parent,
                    "compression" if kind == "compression" else "done",
                )
            )
            if kind == "compression":  # a continuation continues the chain
                parent = cid
        for category, text in raw.get("q", ()):
            if category not in CATEGORIES:  # pragma: no cover - corpus typo
                raise ValueError(f"unknown category {category!r} in {key}")
            questions.append(Question(text, category, key, held_out))
    keys = {s.id for s in sessions}
    extra = [*corpus_en.EXTRA_QUESTIONS, *corpus_cjk.EXTRA_QUESTIONS]
    for holdout, items in ((False, extra), (True, HOLDOUT)):
        for key, category, text in items:
            if key not in keys or category not in CATEGORIES:  # pragma: no cover - corpus typo
                raise ValueError(f"bad extra question {(key, category)!r}")
            questions.append(Question(text, category, key, holdout))
    return sessions, questions


# --------------------------------------------------------------------------- automation

_CRON_JOBS: dict[str, tuple[str, list[tuple[str, ...]]]] = {
    "backup": (
        "bob",
        [
            ("u", "[cron] Run the nightly backup script and report errors."),
            ("c", "terminal", '{"command": "/usr/local/bin/nightly-backup.sh"}'),
            (
                "t",
                "terminal",
                "rsync -a /srv/data/ nas:/backup/data/\nsent {n1} bytes  received "
                "{n2} bytes\nnightly backup finished: {n3} files, {err} errors",
            ),
            ("a", "Nightly backup done: {n3} files synced with rsync, {err} errors. {note}"),
        ],
    ),
    "certs": (
        "alice",
        [
            ("u", "[cron] Check TLS certificate expiry for all domains and renew if needed."),
            ("c", "terminal", '{"command": "certbot certificates"}'),
            (
                "t",
                "terminal",
                "Certificate Name: blog.alice.dev\n  Expiry Date: {date} (VALID: "
                "{d1} days)\nCertificate Name: api.acme.io\n  Expiry Date: {date} (VALID: "
                "{d2} days)",
            ),
            (
                "a",
                "Certificates: blog.alice.dev expires in {d1} days, api.acme.io in {d2} days. "
                "No renew needed today; certbot timer will renew them. No expired "
                "certificate, no error.",
            ),
        ],
    ),
    "uptime": (
        "alice",
        [
            (
                "u",
                "[cron] Uptime check of the public endpoints (api.acme.io, app.acme.io, "
                "upload.acme.io).",
            ),
            ("c", "terminal", '{"command": "curl -sI https://api.acme.io/health"}'),
            (
                "t",
                "terminal",
                "HTTP/2 200\naccess-control-allow-origin: https://app.acme.io\n"
                "server: nginx\nx-response-time: {ms}ms",
            ),
            (
                "a",
                "All endpoints up. api.acme.io answered in {ms} ms, CORS headers present, "
                "no CORS error, nginx healthy, ingress timeout 0, upload OK. Dashboard "
                "reachable.",
            ),
        ],
    ),
    "disk": (
        "bob",
        [
            ("u", "[cron] Disk space report for the build server and the database server."),
            ("c", "terminal", '{"command": "df -h / /var"}'),
            (
                "t",
                "terminal",
                "Filesystem  Size  Used Avail Use%\n/dev/sda1  200G  {gb}G  "
                "{free}G {pct}% /\n/var/lib/docker {dock}G",
            ),
            (
                "a",
                "Build server disk space: {pct}% used ({free} GB free); docker uses {dock} GB. "
                "Database server postgres volume fine. No action needed, no ENOSPC error.",
            ),
        ],
    ),
    "deps": (
        "alice",
        [
            ("u", "[cron] Weekly dependency audit of the python services."),
            ("c", "terminal", '{"command": "pip list --outdated --format=columns"}'),
            (
                "t",
                "terminal",
                "Package  Version  Latest\nrequests 2.31.0 2.32.{n}\npsycopg2-"
                "binary 2.9.{m} 2.9.10\nurllib3 2.2.{n} 2.3.0",
            ),
            (
                "a",
                "{k} python packages outdated (requests, psycopg2-binary, urllib3). No "
                "blocker for the upgrade; wheel available for each. Test suite passed.",
            ),
        ],
    ),
    "zh-report": (
        "chen",
        [
            ("u", "[定时任务] 生成每日运营报表：订单、接口、服务端状态。"),
            ("c", "terminal", '{"command": "python daily_report.py"}'),
            (
                "t",
                "terminal",
                "订单 {n1} 条，接口平均耗时 {ms} 毫秒，服务端 正常，缓存命中率 {pct}%",
            ),
            (
                "a",
                "每日报表已生成：订单 {n1} 条，"
                "订单接口 正常，服务端部署版本 v{m}，缓存 正常，爬虫任务 完成。",
            ),
        ],
    ),
    "ja-report": (
        "yuki",
        [
            ("u", "[定期実行] 毎朝のレポート送信とビルド状況の確認。"),
            ("c", "terminal", '{"command": "./send_report.sh"}'),
            ("t", "terminal", "レポート送信 完了 ({n1} 件)\nビルド時間 {ms} 秒\nキャッシュ ヒット"),
            (
                "a",
                "毎朝のレポート送信が完了しました。ビルドは {ms} 秒、Docker キャッシュは正常、"
                "タイムゾーン設定 Asia/Tokyo。",
            ),
        ],
    ),
}


_SLOT = re.compile(r"\{(\w+)\}")


def _fill(template: str, values: dict[str, Any]) -> str:
    # Not str.format: the templates carry JSON braces.
    return _SLOT.sub(lambda m: str(values.get(m.group(1), m.group(0))), template)


# The uptime check runs every 6 hours, the others once a day.
_RUNS_PER_DAY = {"uptime": 4}


def _cron_sessions(rng: random.Random, days: int) -> list[SessionSpec]:
    out: list[SessionSpec] = []
    notes = ["", "", "Skipped 2 sockets.", "Previous run was slower."]
    runs = [
        (job, day * _RUNS_PER_DAY.get(job, 1) + i, day, i)
        for job in _CRON_JOBS
        for day in range(days)
        for i in range(_RUNS_PER_DAY.get(job, 1))
    ]
    for job, run_no, day, i in runs:
        user, spec = _CRON_JOBS[job]
        hours = 24.0 / _RUNS_PER_DAY.get(job, 1)
        start = EPOCH + day * DAY + (3 + i * hours) * 3600.0 + rng.randint(0, 600)
        values = {
            "n1": rng.randint(10_000, 99_999_999),
            "n2": rng.randint(1_000, 99_999),
            "n3": rng.randint(1_000, 9_999),
            "err": rng.choice([0, 0, 0, 1]),
            "note": rng.choice(notes),
            "date": f"2026-{rng.randint(9, 12):02d}-{rng.randint(1, 28):02d}",
            "d1": rng.randint(5, 89),
            "d2": rng.randint(5, 89),
            "ms": rng.randint(20, 400),
            "gb": rng.randint(60, 180),
            "free": rng.randint(10, 140),
            "pct": rng.randint(30, 95),
            "dock": rng.randint(5, 60),
            "n": rng.randint(1, 9),
            "m": rng.randint(1, 9),
            "k": rng.randint(1, 6),
        }
        filled = [tuple(_fill(part, values) for part in item) for item in spec]
        sid = f"cron-{job}-{run_no:04d}"
        out.append(
            SessionSpec(
                sid,
                "cron",
                user,
                f"cron: {job}",
                start,
                _messages(filled, start, sid),
                None,
                "done",
            )
        )
    return out


# --------------------------------------------------------------------------- filler

_EN_VERBS = ["fix", "refactor", "review", "debug", "document", "speed up", "test", "clean up"]
_EN_THINGS = [
    "login form",
    "upload handler",
    "dashboard chart",
    "config loader",
    "API client",
    "deploy script",
    "database migration",
    "payment page",
    "search box",
    "CSV import",
    "email template",
    "backup job",
    "photo gallery",
    "settings page",
    "error page",
    "invoice PDF",
    "test fixtures",
    "nginx config",
    "docker image",
    "cron schedule",
]
_EN_PROJECTS = ["shop", "blog", "infra", "billing", "mobile app", "admin panel", "reports"]
_EN_PROBLEMS = [
    "it throws an error on empty input",
    "the page is slow on first load",
    "the tests fail on CI but pass locally",
    "it logs a timeout warning",
    "the date shows in the wrong timezone",
    "a user reported it broke after the last release",
    "the output file is empty",
    "memory usage grows over time",
]
_EN_ANSWERS = [
    "I changed {thing} to validate its input and added a test for the edge case.",
    "The {thing} now caches the result; the page loads in half the time.",
    "I added logging around the {thing} and fixed an off-by-one in the loop.",
    "Renamed a few functions in the {thing} and split the long file into two modules.",
    "The {thing} used the server timezone; it now stores UTC and converts on display.",
    "Updated the {thing} and the script that deploys it; all tests pass.",
]

_ZH_THINGS = [
    "登录页面",
    "上传接口",
    "报表页面",
    "配置文件",
    "部署脚本",
    "数据库迁移",
    "支付页面",
    "搜索功能",
    "消息队列",
    "日志系统",
    "定时任务",
    "用户接口",
]
_ZH_PROBLEMS = [
    "偶尔报错",
    "速度很慢",
    "测试不通过",
    "内存一直增长",
    "时间显示不对",
    "上线后出问题",
]
_ZH_ANSWERS = [
    "已经修改了{thing}的参数校验，并补充了测试。",
    "给{thing}加了缓存，速度快了一倍。",
    "在{thing}里加了日志，修复了一个边界问题。",
    "{thing}的时区改成了 UTC，显示时再转换。",
]
_JA_THINGS = [
    "ログイン画面",
    "アップロード処理",
    "設定ファイル",
    "デプロイ手順",
    "テスト環境",
    "請求画面",
]
_JA_PROBLEMS = ["エラーが出ます", "とても遅いです", "テストが失敗します", "時間がずれます"]
_JA_ANSWERS = [
    "{thing}の入力チェックを追加して、テストも書きました。",
    "{thing}にキャッシュを入れたので速くなりました。",
    "{thing}のタイムゾーンを修正しました。",
]


def _filler_sessions(rng: random.Random, count: int) -> list[SessionSpec]:
    out: list[SessionSpec] = []
    for i in range(count):
        start = EPOCH + rng.uniform(0, 90) * DAY
        sid = f"misc-{i:03d}"
        lang = rng.random()
        if lang < 0.7:
            thing, verb = rng.choice(_EN_THINGS), rng.choice(_EN_VERBS)
            project = rng.choice(_EN_PROJECTS)
            spec: list[tuple[str, ...]] = [
                ("u", f"Can you {verb} the {thing} in {project}? {rng.choice(_EN_PROBLEMS)}."),
                ("a", rng.choice(_EN_ANSWERS).format(thing=thing)),
            ]
            if rng.random() < 0.5:
                spec.append(
                    (
                        "u",
                        rng.choice(
                            [
                                "thanks",
                                "great, ship it",
                                "ok, also check the error handling",
                                "looks good",
                            ]
                        ),
                    )
                )
            user, title = rng.choice(USERS_EN), f"{verb} {thing}"
        elif lang < 0.88:
            thing = rng.choice(_ZH_THINGS)
            spec = [
                ("u", f"帮我看看{thing}，{rng.choice(_ZH_PROBLEMS)}。"),
                ("a", rng.choice(_ZH_ANSWERS).format(thing=thing)),
            ]
            user, title = "chen", thing
        else:
            thing = rng.choice(_JA_THINGS)
            spec = [
                ("u", f"{thing}で{rng.choice(_JA_PROBLEMS)}。"),
                ("a", rng.choice(_JA_ANSWERS).format(thing=thing)),
            ]
            user, title = "yuki", thing
        out.append(
            SessionSpec(
                sid,
                rng.choice(["cli", "cli", "telegram"]),
                user,
                title,
                start,
                _messages(spec, start, sid),
                None,
                "idle",
            )
        )
    return out


def build_dataset(seed: int = 7, *, cron_days: int = 90, filler: int = 240) -> Dataset:
    """The evaluation set for ``seed`` (same seed, same data)."""
    rng = random.Random(seed)
    authored, questions = _authored(rng)
    sessions = [*authored, *_cron_sessions(rng, cron_days), *_filler_sessions(rng, filler)]
    # Parents before children; otherwise by start time, as an agent would have written them.
    roots = sorted((s for s in sessions if s.parent_session_id is None), key=lambda s: s.started_at)
    children = [s for s in sessions if s.parent_session_id is not None]
    return Dataset(tuple(roots + children), tuple(questions), seed)
