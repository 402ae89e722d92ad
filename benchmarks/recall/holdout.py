"""Held-out questions: written after the ranking was tuned, never used to tune it.

Same format as ``EXTRA_QUESTIONS``: ``(session key, category, text)``. The runner reports
them separately so the tuned set and the held-out set can be compared.
"""

from __future__ import annotations

HOLDOUT: list[tuple[str, str, str]] = [
    ("cors-nginx", "natural", "what did we do about the Access-Control-Allow-Origin header?"),
    ("photo-rename", "natural", "the python thing that renames my trip pictures"),
    ("fence-paint", "natural", "wood stain for the fence, how much did I need"),
    ("k8s-ingress", "keyword", "504 gateway timeout ingress annotations"),
    ("pg-vacuum", "natural", "how did we reclaim space in postgres?"),
    ("backup-rsync", "keyword", "rsync code 23 exclude"),
    ("disk-full", "natural", "how did we free up space on build-02?"),
    ("cert-renew", "keyword", "well-known acme-challenge nginx location"),
    ("api-design", "keyword", "ADR invoices idempotency keys"),
    ("blog-post-wal", "natural", "what was the outline of the SQLite article?"),
    ("trip-plan", "natural", "which day did we put Sintra on?"),
    ("flaky-test", "natural", "why did the checkout test fail on CI only?"),
    ("oom-worker", "natural", "why was the celery pod killed?"),
    ("git-bisect", "natural", "who broke the csv line endings?"),
    ("python-upgrade", "delegation", "what did the sub-agent find for the 3.13 migration?"),
    ("competitor-research", "delegation", "competitor prices Linear Business plan"),
    ("security-audit", "delegation", "npm audit finding before launch"),
    ("migration-long", "continuation", "billing migration failed rows timestamps"),
    ("grant-proposal", "continuation", "how much for tile hosting in the grant?"),
    ("novel-outline", "continuation", "the ambiguous ending we chose for the story"),
    ("regex-log", "keyword", "awk NF slowest paths"),
    ("ssh-tunnel", "natural", "port forward to redis on staging"),
    ("budget-sheet", "natural", "how do I sum transactions by category per month?"),
    ("dns-mx", "keyword", "include:spf.mtasv.net"),
    ("memory-leak-node", "natural", "why did the node process keep growing?"),
    ("terraform-state", "natural", "the github actions run that left a lock"),
    ("standup-notes", "natural", "what key results did we set for activation?"),
    ("gpu-driver", "keyword", "nvidia driver dkms kernel 6.8"),
    ("sql-slow-query", "keyword", "explain analyze seq scan orders"),
    ("webhook-signature", "natural", "the express raw body fix for webhooks"),
    ("cors-nginx", "cron_flood", "api.acme.io CORS fix"),
    ("cert-renew", "cron_flood", "certificate expired certbot challenge"),
    ("disk-full", "cron_flood", "docker disk space weekly prune"),
    ("photo-rename", "inflection", "renaming the photographs"),
    ("flaky-test", "inflection", "the test that was flaking near midnight"),
    ("pg-vacuum", "inflection", "vacuuming the bloated events table"),
    ("photo-rename", "typo_partial", "renam photo scrpt"),
    ("k8s-ingress", "typo_partial", "ingres anotations"),
    ("webhook-signature", "typo_partial", "stripe signatur payload"),
    ("cert-renew", "typo_partial", "certbt renewl"),
    ("zh-deploy", "zh", "发布以后要手动重启服务"),
    ("zh-db-index", "zh", "索引"),
    ("zh-wedding", "zh", "备用金"),
    ("zh-crawler", "zh", "随机延时"),
    ("zh-redis-cache", "zh", "哨兵"),
    ("ja-docker", "ja", "依存関係"),
    ("ja-translation", "ja", "英語に翻訳"),
    ("ja-cron-timezone", "ja", "日本時間"),
    ("mixed-k8s-zh", "mixed", "requests 改成 500m"),
    ("mixed-vue-zh", "mixed", "rollup-plugin-visualizer 体积"),
    ("zh-deploy", "mixed", "youer.service"),
    ("zh-redis-cache", "mixed", "缓存雪崩 Redis"),
]

# Near-duplicate sessions added with the held-out questions: same topics and words as the
# sessions above, different problems (a user's recurring topics).
SESSIONS = [
    {
        "key": "cors-websocket",
        "user": "alice",
        "src": "cli",
        "day": 62,
        "title": "Websocket handshake rejected",
        "msgs": [
            (
                "u",
                "The live feed websocket to api.acme.io fails with 403 during the handshake, "
                "is it CORS again?",
            ),
            (
                "a",
                "Websockets are not covered by CORS; the server checks the Origin header "
                "itself. socket.io's allowedOrigins did not list app.acme.io. Added it and "
                "the handshake succeeds.",
            ),
        ],
        "q": [("natural", "the websocket origin problem on the live feed")],
    },
    {
        "key": "backup-restore",
        "user": "bob",
        "src": "telegram",
        "day": 57,
        "title": "Restore a deleted Grafana dashboard from backup",
        "msgs": [
            (
                "u",
                "Someone deleted the ops Grafana dashboard. Can we get it back from the "
                "nightly backup?",
            ),
            ("c", "terminal", '{"command": "ssh nas ls /backup/data/grafana/"}'),
            ("t", "terminal", "grafana.db  grafana.db.2026-08-25"),
            (
                "a",
                "Copied grafana.db from last night's rsync backup to a scratch container, "
                "exported the dashboard JSON and imported it into production.",
            ),
        ],
        "q": [("natural", "how did we get the deleted grafana dashboard back?")],
    },
    {
        "key": "cert-wildcard",
        "user": "alice",
        "src": "cli",
        "day": 85,
        "title": "Wildcard certificate for preview environments",
        "msgs": [
            ("u", "I need a wildcard certificate for *.preview.acme.io."),
            (
                "a",
                "Wildcards need the dns-01 challenge. I set up certbot-dns-cloudflare with an "
                "API token limited to the acme.io zone and issued the certificate; renewal "
                "runs with the same plugin.",
            ),
        ],
        "q": [("keyword", "wildcard certificate dns-01 cloudflare")],
    },
    {
        "key": "photo-dedupe",
        "user": "alice",
        "src": "cli",
        "day": 74,
        "title": "Find duplicate photos",
        "msgs": [
            ("u", "My photo library has lots of duplicates from phone backups. Find them."),
            (
                "a",
                "I wrote a script that hashes each photo with imagehash (perceptual hash), "
                "groups near-identical ones and moves all but the largest file of each "
                "group to ~/Pictures/duplicates.",
            ),
        ],
        "q": [("natural", "the script that found duplicate photos")],
    },
    {
        "key": "zh-rollback",
        "user": "chen",
        "src": "telegram",
        "day": 63,
        "title": "服务端回滚",
        "msgs": [
            ("u", "新版本上线后服务端一直报错，怎么快速回滚？"),
            (
                "a",
                "部署目录保留了上一个版本，把软链接 current 指回 releases/20260801，"
                "然后重启服务即可。"
                "以后可以在部署脚本里加一个 rollback 命令。",
            ),
        ],
        "q": [("zh", "服务端回滚")],
    },
    {
        "key": "ja-compose",
        "user": "yuki",
        "src": "cli",
        "day": 70,
        "title": "docker compose の環境変数",
        "msgs": [
            ("u", "docker compose で環境変数が反映されません。"),
            (
                "a",
                ".env ファイルは compose.yaml と同じディレクトリに置く必要があります。"
                "env_file の指定も追加しました。",
            ),
        ],
        "q": [("ja", "環境変数が反映されない")],
    },
]
