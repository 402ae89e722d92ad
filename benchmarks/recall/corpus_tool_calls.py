"""Sessions whose answer is the code an agent wrote or the command it ran (issue 23 §2).

The user asks in everyday words ("the build box keeps running out of space"); what a later
question names (``docker builder prune``, ``drop_duplicates``, the unit file) lives only in
the arguments of the assistant's tool calls: a ``write_file``'s path and content, a
``terminal``'s command, a ``run_sql``'s statement. The ``tool_call`` questions ask for them the
way a user asks for code and commands: "where is the script that prunes docker images?".
Same format as :mod:`benchmarks.recall.corpus_en`.
"""

from __future__ import annotations

import json
from typing import Any


def _call(tool: str, **args: str) -> tuple[str, str, str]:
    return ("c", tool, json.dumps(args))


_DEPLOY_SCRIPT = (
    "#!/usr/bin/env bash\n"
    "# Deploy the API: pull, install, migrate, restart, check, then tell the team.\n"
    "set -euo pipefail\n"
    "APP_DIR=/srv/api\n"
    "RELEASE=$(date +%Y%m%d%H%M%S)\n"
    "LOG=/var/log/api-deploy/$RELEASE.log\n"
    "mkdir -p /var/log/api-deploy\n"
    'exec > >(tee -a "$LOG") 2>&1\n'
    + "".join(
        f"# step {n}: keep the previous release until the health check passes\n" for n in range(8)
    )
    + 'cd "$APP_DIR"\n'
    "git fetch --tags origin\n"
    "git checkout --detach origin/main\n"
    "python -m pip install --quiet -r requirements.txt\n"
    "python manage.py migrate --noinput\n"
    "sudo systemctl restart api.service\n"
    "for i in 1 2 3 4 5; do\n"
    "  curl -fsS http://127.0.0.1:8000/health && break\n"
    "  sleep 3\n"
    "done\n"
    "notify_slack() {\n"
    "  curl -fsS -X POST -H 'Content-type: application/json' \\\n"
    '    --data "{\\"text\\": \\"$1\\"}" "$SLACK_WEBHOOK_URL"\n'
    "}\n"
    'notify_slack "api deployed: release $RELEASE"\n'
)

SESSIONS: list[dict[str, Any]] = [
    {
        "key": "deploy-api-script",
        "user": "alice",
        "src": "cli",
        "day": 82,
        "title": "A one-command deploy for the API",
        "msgs": [
            (
                "u",
                "Write me one command that updates the API on the server: fetch the code, "
                "migrate, restart it, and let the team know when it is done.",
            ),
            _call("write_file", path="/srv/api/bin/deploy.sh", content=_DEPLOY_SCRIPT),
            ("t", "write_file", "wrote 28 lines"),
            ("a", "Done: run /srv/api/bin/deploy.sh; it logs to /var/log/api-deploy."),
        ],
        "q": [
            ("tool_call", "the deploy script that posts to Slack when it finishes"),
            ("tool_call", "notify_slack SLACK_WEBHOOK_URL curl"),
        ],
    },
    {
        "key": "docker-prune-cron",
        "user": "bob",
        "src": "cli",
        "day": 27,
        "title": "Build box disk keeps filling up",
        "msgs": [
            ("u", "The build box keeps running out of space. Can you set up something weekly?"),
            ("a", "I'll add a small cleanup script and schedule it."),
            _call(
                "write_file",
                path="/usr/local/bin/prune-docker.sh",
                content="#!/bin/sh\n# weekly cleanup of dangling images and build cache\n"
                "docker image prune -af --filter until=168h\ndocker builder prune -af\n",
            ),
            ("t", "write_file", "wrote 4 lines"),
            _call(
                "terminal",
                command="echo '0 4 * * 0 root /usr/local/bin/prune-docker.sh' | "
                "sudo tee /etc/cron.d/prune-docker",
            ),
            ("t", "terminal", "0 4 * * 0 root /usr/local/bin/prune-docker.sh"),
            ("a", "Done: it runs on Sundays at 04:00."),
        ],
        "q": [
            ("tool_call", "where is the script that prunes docker images?"),
            ("tool_call", "docker builder prune weekly cron entry"),
        ],
    },
    {
        "key": "orders-pg-dump",
        "user": "carol",
        "src": "cli",
        "day": 33,
        "title": "Nightly copies of the shop database",
        "msgs": [
            ("u", "I need a nightly copy of the shop's database kept somewhere safe."),
            _call(
                "write_file",
                path="~/bin/dump_orders.sh",
                content="#!/bin/sh\nset -e\npg_dump --format=custom "
                "--file=/backup/orders-$(date +%F).dump orders\n"
                "find /backup -name 'orders-*.dump' -mtime +14 -delete\n",
            ),
            ("t", "write_file", "wrote 4 lines"),
            ("a", "Written; it keeps two weeks of copies. I added it to your crontab for 01:30."),
        ],
        "q": [
            ("tool_call", "which command did we use to dump the orders database?"),
            ("tool_call", "pg_dump custom format script that deletes dumps after 14 days"),
        ],
    },
    {
        "key": "crm-dedupe",
        "user": "alice",
        "src": "cli",
        "day": 46,
        "title": "Clean up the CRM export",
        "msgs": [
            ("u", "The export from the CRM has the same customer many times. Clean it up?"),
            _call(
                "write_file",
                path="~/scripts/dedupe_customers.py",
                content="import pandas as pd\n\ndf = pd.read_csv('customers.csv')\n"
                "df = df.drop_duplicates(subset=['email'], keep='last')\n"
                "df.to_csv('customers_clean.csv', index=False)\n",
            ),
            ("t", "write_file", "wrote 5 lines"),
            _call("terminal", command="python ~/scripts/dedupe_customers.py && wc -l *.csv"),
            ("t", "terminal", "  12408 customers.csv\n   9931 customers_clean.csv"),
            ("a", "9,931 rows left of 12,408; the newest row per address is kept."),
        ],
        "q": [
            ("tool_call", "the pandas script with drop_duplicates on email"),
            ("tool_call", "where did I put the dedupe script?"),
        ],
    },
    {
        "key": "leaderboard-matview",
        "user": "bob",
        "src": "telegram",
        "day": 52,
        "title": "Game leaderboard page is slow",
        "msgs": [
            (
                "u",
                "The leaderboard page takes eight seconds to load now that we have more players.",
            ),
            _call(
                "run_sql",
                query="CREATE MATERIALIZED VIEW top_scores AS SELECT player_id, max(score) AS "
                "best FROM rounds GROUP BY player_id ORDER BY best DESC LIMIT 100;",
            ),
            ("t", "run_sql", "SELECT 100"),
            _call(
                "terminal",
                command="echo '*/5 * * * * psql -c \"REFRESH MATERIALIZED VIEW top_scores\"' "
                "| crontab -",
            ),
            ("t", "terminal", ""),
            ("a", "The page reads a precomputed table refreshed every five minutes: 40 ms now."),
        ],
        "q": [
            ("tool_call", "the SQL that created the top_scores materialized view"),
            ("tool_call", "REFRESH MATERIALIZED VIEW every five minutes"),
        ],
    },
    {
        "key": "s3-lifecycle",
        "user": "carol",
        "src": "cli",
        "day": 58,
        "title": "Old upload files cost too much",
        "msgs": [
            ("u", "Our storage bill doubled; most of it is old uploads nobody opens."),
            _call(
                "terminal",
                command="aws s3api put-bucket-lifecycle-configuration --bucket acme-uploads "
                "--lifecycle-configuration file://lifecycle.json",
            ),
            ("t", "terminal", ""),
            (
                "a",
                "Uploads older than 30 days now move to Glacier and are deleted after a year.",
            ),
        ],
        "q": [
            ("tool_call", "the aws command that set the bucket lifecycle configuration"),
        ],
    },
    {
        "key": "jq-failed-runs",
        "user": "alice",
        "src": "cli",
        "day": 64,
        "title": "Which pipeline runs failed?",
        "msgs": [
            ("u", "Which of last night's pipeline runs failed? The export is in runs.json."),
            _call(
                "terminal",
                command="jq -r '.items[] | select(.status == \"failed\") | .id' runs.json",
            ),
            ("t", "terminal", "run-8812\nrun-8830"),
            ("a", "Two of them: run-8812 and run-8830."),
        ],
        "q": [
            ("tool_call", "the jq filter that selected failed items"),
        ],
    },
    {
        "key": "webhook-unit",
        "user": "bob",
        "src": "cli",
        "day": 70,
        "title": "Start the webhook listener on boot",
        "msgs": [
            ("u", "Make the webhook listener start on boot and come back if it crashes."),
            _call(
                "write_file",
                path="/etc/systemd/system/webhook-listener.service",
                content="[Unit]\nDescription=Webhook listener\nAfter=network-online.target\n\n"
                "[Service]\nExecStart=/opt/webhook/bin/listen --port 9090\n"
                "Restart=on-failure\nUser=webhook\n\n[Install]\nWantedBy=multi-user.target\n",
            ),
            ("t", "write_file", "wrote 11 lines"),
            _call(
                "terminal",
                command="sudo systemctl daemon-reload && sudo systemctl enable --now "
                "webhook-listener",
            ),
            ("t", "terminal", "Created symlink ... -> webhook-listener.service."),
            ("a", "It runs now and starts with the machine."),
        ],
        "q": [
            ("tool_call", "where is the systemd unit file we wrote?"),
            ("tool_call", "ExecStart listen port 9090 Restart=on-failure"),
        ],
    },
    {
        "key": "ffmpeg-clip",
        "user": "carol",
        "src": "discord",
        "day": 76,
        "title": "Cut a clip from the conference talk",
        "msgs": [
            (
                "u",
                "Can you cut the part of my talk where I show the demo, around minute one-thirty?",
            ),
            _call(
                "terminal",
                command="ffmpeg -ss 00:01:30 -to 00:02:10 -i talk.mp4 -c copy demo-clip.mp4",
            ),
            ("t", "terminal", "video:5120kB audio:640kB"),
            ("a", "demo-clip.mp4 is 40 seconds, cut without re-encoding."),
        ],
        "q": [
            ("tool_call", "the ffmpeg command that cut the clip without re-encoding"),
        ],
    },
]
