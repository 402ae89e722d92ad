"""Hand-written English sessions of the recall evaluation set, with their questions.

Each session is a dict: ``key`` (stable id stem), ``user``, ``src`` (session source), ``day``
(days after the epoch of the set), ``title``, ``msgs`` and optionally ``children`` (sub-agent
runs and compression continuations, each with ``kind`` and ``msgs``) and ``q`` (questions whose
answer lives in this session's chain, as ``(category, text)``).

Messages are tuples: ``("u", text)`` user, ``("a", text)`` assistant, ``("c", tool, args)`` an
assistant tool call, ``("t", tool, output)`` the tool's output.
"""

from __future__ import annotations

from typing import Any

SESSIONS: list[dict[str, Any]] = [
    {
        "key": "cors-nginx",
        "user": "alice",
        "src": "cli",
        "day": 3,
        "title": "Dashboard API calls blocked by the browser",
        "msgs": [
            (
                "u",
                "The dashboard at app.acme.io gets a CORS error calling api.acme.io. Chrome: "
                "Access to fetch has been blocked by CORS policy: No "
                "'Access-Control-Allow-Origin' header is present on the requested resource.",
            ),
            (
                "a",
                "The API is behind nginx, so the header has to come from nginx or from the "
                "app. Let me look at the site config.",
            ),
            ("c", "read_file", '{"path": "/etc/nginx/sites-enabled/api.conf"}'),
            (
                "t",
                "read_file",
                "server {\n  listen 443 ssl;\n  server_name api.acme.io;\n"
                "  location / {\n    proxy_pass http://127.0.0.1:8080;\n  }\n}",
            ),
            (
                "a",
                "There is no add_header for the origin and OPTIONS preflight requests are "
                "proxied to the app, which answers 405. I added `add_header "
                "Access-Control-Allow-Origin https://app.acme.io always;` plus the "
                "Allow-Methods/Allow-Headers lines and `if ($request_method = OPTIONS) "
                "{ return 204; }` in the location block, then reloaded nginx.",
            ),
            ("c", "terminal", '{"command": "sudo nginx -t && sudo systemctl reload nginx"}'),
            (
                "t",
                "terminal",
                "nginx: the configuration file /etc/nginx/nginx.conf syntax is ok\n"
                "nginx: configuration file /etc/nginx/nginx.conf test is successful",
            ),
            ("u", "works now, thanks"),
        ],
        "q": [
            ("natural", "how did we fix the CORS error?"),
            ("keyword", "CORS nginx preflight add_header"),
            ("cron_flood", "CORS error api.acme.io"),
            ("natural", "what did we change in nginx so the dashboard could call the API?"),
            ("typo_partial", "cros error dashbaord"),
        ],
    },
    {
        "key": "cors-flask",
        "user": "alice",
        "src": "cli",
        "day": 40,
        "title": "flask-cors for local development",
        "msgs": [
            (
                "u",
                "Local dev: the React app on localhost:5173 gets a CORS error from my Flask "
                "server on :5000.",
            ),
            (
                "a",
                "For local development the simplest fix is flask-cors: `pip install "
                "flask-cors` and `CORS(app, origins=['http://localhost:5173'])`. In "
                "production the nginx config already sends the headers.",
            ),
            ("u", "ok did that, fine"),
        ],
        "q": [("keyword", "flask-cors localhost 5173")],
    },
    {
        "key": "photo-rename",
        "user": "alice",
        "src": "cli",
        "day": 12,
        "title": "Script: rename vacation photos by EXIF date",
        "msgs": [
            (
                "u",
                "I have 3,000 photos from the Portugal trip named IMG_4521.JPG etc. I want "
                "them renamed by the date they were taken, like 2026-07-14_153012.jpg.",
            ),
            (
                "a",
                "I'll write a Python script that reads DateTimeOriginal from the EXIF data "
                "with Pillow and renames each file, adding a counter on collisions.",
            ),
            ("c", "write_file", '{"path": "~/bin/rename_by_exif.py"}'),
            ("t", "write_file", "wrote 41 lines to /home/alice/bin/rename_by_exif.py"),
            (
                "c",
                "terminal",
                '{"command": "python ~/bin/rename_by_exif.py ~/Pictures/portugal '
                '--dry-run | head"}',
            ),
            (
                "t",
                "terminal",
                "IMG_4521.JPG -> 2026-07-14_153012.jpg\nIMG_4522.JPG -> "
                "2026-07-14_153140.jpg\nIMG_4523.HEIC: no DateTimeOriginal, using mtime",
            ),
            (
                "a",
                "Dry run looks right. HEIC files have no EXIF via Pillow so the script falls "
                "back to the file's mtime. Run without --dry-run to apply.",
            ),
        ],
        "q": [
            ("natural", "that script for renaming photos"),
            ("inflection", "renamed pictures by the date taken"),
            ("keyword", "exif rename script DateTimeOriginal"),
            ("tool_output", "HEIC no DateTimeOriginal using mtime"),
            ("typo_partial", "renmae photos exif"),
        ],
    },
    {
        "key": "photo-resize",
        "user": "alice",
        "src": "cli",
        "day": 20,
        "title": "Resize photos for the blog",
        "msgs": [
            ("u", "Resize all photos in ~/blog/img to 1600px wide and strip metadata."),
            (
                "a",
                "`mogrify -resize 1600x -strip ~/blog/img/*.jpg` does it in place; I made a "
                "copy first.",
            ),
            (
                "c",
                "terminal",
                '{"command": "cp -r ~/blog/img ~/blog/img.bak && mogrify -resize '
                '1600x -strip ~/blog/img/*.jpg"}',
            ),
            ("t", "terminal", ""),
        ],
        "q": [("keyword", "mogrify resize strip blog")],
    },
    {
        "key": "fence-paint",
        "user": "bob",
        "src": "telegram",
        "day": 30,
        "title": "How much paint for the garden fence",
        "msgs": [
            (
                "u",
                "I'm painting the garden fence this weekend. It's 24 metres long and 1.8 m "
                "high, both sides. How many litres do I need?",
            ),
            (
                "a",
                "Area is 24 x 1.8 x 2 = 86.4 m². Exterior wood stain covers about 10 m² per "
                "litre per coat, so two coats need roughly 17-18 litres. Buy 4 x 5 L tins.",
            ),
            ("u", "what about the primer"),
            ("a", "Bare pine needs one coat of primer first: another 9 litres or so."),
        ],
        "q": [
            ("inflection", "when I painted the fence"),
            ("natural", "how many litres of paint for the fence?"),
            ("inflection", "fence painter litre estimate"),
        ],
    },
    {
        "key": "k8s-ingress",
        "user": "bob",
        "src": "cli",
        "day": 8,
        "title": "504 from the ingress on long uploads",
        "msgs": [
            (
                "u",
                "Uploads bigger than ~200 MB fail with 504 Gateway Timeout behind our "
                "Kubernetes ingress.",
            ),
            (
                "a",
                "The ingress-nginx controller defaults proxy-read-timeout to 60 seconds and "
                "proxy-body-size to 1m. Let me check the ingress annotations.",
            ),
            ("c", "terminal", '{"command": "kubectl -n media get ingress upload -o yaml"}'),
            (
                "t",
                "terminal",
                "metadata:\n  annotations:\n    nginx.ingress.kubernetes.io/"
                "proxy-body-size: 500m\nspec:\n  rules:\n  - host: upload.acme.io",
            ),
            (
                "a",
                'I added nginx.ingress.kubernetes.io/proxy-read-timeout: "600" and '
                'proxy-send-timeout: "600"; applied with kubectl apply.',
            ),
        ],
        "q": [
            ("natural", "how did we stop the 504 timeouts on big uploads?"),
            ("keyword", "ingress proxy-read-timeout upload"),
            ("typo_partial", "kuberntes ingres timeout"),
            ("typo_partial", "kube ingress upload"),
        ],
    },
    {
        "key": "pg-vacuum",
        "user": "bob",
        "src": "cli",
        "day": 15,
        "title": "Postgres table bloat on events",
        "msgs": [
            ("u", "The events table is 80 GB but only has 20 M rows. Queries got slow."),
            ("a", "That smells like bloat from dead tuples. Checking pg_stat_user_tables."),
            (
                "c",
                "terminal",
                '{"command": "psql -c \\"select relname, n_dead_tup, '
                "last_autovacuum from pg_stat_user_tables order by n_dead_tup "
                'desc limit 5\\""}',
            ),
            (
                "t",
                "terminal",
                " relname | n_dead_tup | last_autovacuum\n events  |  "
                "412003881 | \n sessions|     10233 | 2026-09-14",
            ),
            (
                "a",
                "Autovacuum never finished on events: autovacuum_vacuum_scale_factor 0.2 is "
                "too high for a table this size. I set it to 0.01 for that table and ran "
                "pg_repack to reclaim the space without a long lock.",
            ),
        ],
        "q": [
            ("natural", "why was the events table so big?"),
            ("tool_output", "n_dead_tup events"),
            ("keyword", "autovacuum scale factor pg_repack"),
            ("typo_partial", "postgres vacum bloat"),
        ],
    },
    {
        "key": "backup-rsync",
        "user": "bob",
        "src": "cli",
        "day": 22,
        "title": "Nightly backup script exits with rsync code 23",
        "msgs": [
            (
                "u",
                "The nightly backup script mailed me 'rsync error: some files/attrs were not "
                "transferred (code 23)'. What's failing?",
            ),
            ("a", "Code 23 is a partial transfer. Let me run it verbose on the NAS path."),
            (
                "c",
                "terminal",
                '{"command": "rsync -a --itemize-changes /srv/data/ '
                'nas:/backup/data/ 2>&1 | grep -v ^"}',
            ),
            (
                "t",
                "terminal",
                'rsync: [sender] opendir "/srv/data/grafana/lost+found" failed: '
                "Permission denied (13)\nrsync error: some files/attrs were not transferred "
                "(see previous errors) (code 23)",
            ),
            (
                "a",
                "Only lost+found is unreadable. I added `--exclude lost+found` to the backup "
                "script and it now exits 0.",
            ),
        ],
        "q": [
            ("cron_flood", "nightly backup rsync error"),
            ("natural", "what was wrong with the backup script?"),
            ("tool_output", "opendir lost+found permission denied"),
        ],
    },
    {
        "key": "disk-full",
        "user": "bob",
        "src": "telegram",
        "day": 45,
        "title": "Disk full on the build server",
        "msgs": [
            ("u", "build-02 is out of disk space again, CI jobs fail with ENOSPC"),
            ("c", "terminal", '{"command": "du -xh / --max-depth=2 | sort -h | tail -5"}'),
            ("t", "terminal", "18G /var/lib/docker/overlay2\n41G /var/lib/docker\n44G /var"),
            (
                "a",
                "Docker images and build cache fill /var/lib/docker. I ran `docker system "
                "prune -af --filter until=168h` (freed 31 GB) and added a weekly systemd "
                "timer for it.",
            ),
        ],
        "q": [
            ("cron_flood", "disk space build server"),
            ("keyword", "docker prune ENOSPC"),
            ("tool_output", "overlay2 41G var lib docker"),
        ],
    },
    {
        "key": "cert-renew",
        "user": "alice",
        "src": "cli",
        "day": 50,
        "title": "TLS certificate expired on the blog",
        "msgs": [
            (
                "u",
                "Firefox says the blog's certificate expired yesterday. Wasn't certbot "
                "supposed to renew it?",
            ),
            ("c", "terminal", '{"command": "sudo certbot renew --dry-run"}'),
            (
                "t",
                "terminal",
                "Attempting to renew cert (blog.alice.dev) from renewal conf "
                "... Challenge failed for domain blog.alice.dev\nhttp-01 challenge: "
                "Invalid response from http://blog.alice.dev/.well-known/acme-challenge/: "
                "404",
            ),
            (
                "a",
                "The http-01 challenge gets a 404 because the new nginx config redirects "
                "everything to the static bucket, including /.well-known. I added a location "
                "for /.well-known/acme-challenge/ served from /var/www/letsencrypt and the "
                "renewal succeeded.",
            ),
        ],
        "q": [
            ("cron_flood", "certificate renew expired"),
            ("natural", "why did the certificate renewal fail?"),
            ("tool_output", "acme-challenge 404 invalid response"),
            ("inflection", "renewing certs challenge failing"),
        ],
    },
    {
        "key": "api-design",
        "user": "carol",
        "src": "cli",
        "day": 5,
        "title": "API design for the invoices service",
        "msgs": [
            ("u", "Let's settle the API for invoices: REST or GraphQL, pagination, errors."),
            (
                "a",
                "Proposal: REST with resource URLs (/v1/invoices/{id}), cursor pagination "
                "(?cursor=...&limit=50, next_cursor in the body), RFC 7807 problem+json for "
                "errors, idempotency keys on POST.",
            ),
            ("u", "Cursor pagination yes. Problem details yes. Do we version in the URL?"),
            (
                "a",
                "URL versioning (/v1) is easiest for clients and caching; we agreed on that. "
                "Decision log written to docs/adr/0007-invoices-api.md.",
            ),
            ("c", "write_file", '{"path": "docs/adr/0007-invoices-api.md"}'),
            ("t", "write_file", "wrote 58 lines"),
        ],
        "q": [
            ("natural", "which API design did we settle on?"),
            ("keyword", "invoices cursor pagination problem+json"),
            ("natural", "did we decide on URL versioning for the invoices API?"),
        ],
    },
    {
        "key": "blog-post-wal",
        "user": "carol",
        "src": "cli",
        "day": 18,
        "title": "Draft: blog post about SQLite WAL mode",
        "msgs": [
            ("u", "Help me draft a blog post explaining SQLite WAL mode to web developers."),
            (
                "a",
                "Outline: 1) rollback journal vs write-ahead log, 2) readers don't block the "
                "writer, 3) checkpoints and the -wal file growing, 4) when not to use it "
                "(network filesystems). Title idea: 'Why your SQLite app should be in WAL "
                "mode'.",
            ),
            ("u", "nice, write section 3 with the checkpoint starvation issue"),
            (
                "a",
                "Section 3 draft: ... a long-running reader prevents the checkpoint from "
                "resetting the log, so the -wal file keeps growing (checkpoint starvation). "
                "Use wal_autocheckpoint and keep read transactions short.",
            ),
        ],
        "q": [
            ("natural", "the blog post I was writing about WAL"),
            ("keyword", "checkpoint starvation wal file growing"),
            ("inflection", "drafting the write-ahead logging article"),
        ],
    },
    {
        "key": "trip-plan",
        "user": "carol",
        "src": "telegram",
        "day": 60,
        "title": "Plan: 5 days in Lisbon",
        "msgs": [
            (
                "u",
                "Plan a 5-day Lisbon itinerary for early October, we like food and walking, "
                "no museums marathon.",
            ),
            (
                "a",
                "Day 1 Alfama and the castle, sunset at Miradouro da Senhora do Monte. Day 2 "
                "Belém (pastéis de Belém early), LX Factory. Day 3 Sintra (Pena Palace, book "
                "the 9:30 slot). Day 4 Cascais by train. Day 5 Time Out Market and Bairro "
                "Alto.",
            ),
            ("u", "swap day 3 and 4, rain forecast"),
            ("a", "Swapped: Cascais on day 3, Sintra on day 4."),
        ],
        "q": [
            ("natural", "what was the plan for Lisbon?"),
            ("keyword", "Sintra Pena Palace itinerary"),
            ("typo_partial", "lisbn itinerary sintra"),
        ],
    },
    {
        "key": "flaky-test",
        "user": "alice",
        "src": "cli",
        "day": 26,
        "title": "Flaky test in the checkout suite",
        "msgs": [
            ("u", "test_checkout_applies_coupon fails about 1 in 10 runs on CI, never locally."),
            (
                "c",
                "terminal",
                '{"command": "pytest tests/test_checkout.py -p no:randomly --count 50 -x"}',
            ),
            (
                "t",
                "terminal",
                "FAILED tests/test_checkout.py::test_checkout_applies_coupon - "
                "AssertionError: assert Decimal('9.99') == Decimal('10.00')\nfreezegun "
                "not active; datetime.now() = 2026-09-30 23:59:59.998",
            ),
            (
                "a",
                "The coupon expires at midnight and the test builds the cart with "
                "datetime.now(); when CI runs near a second boundary... actually near "
                "midnight UTC the coupon is already expired. I wrapped the test in "
                "freezegun's freeze_time('2026-06-01 12:00').",
            ),
        ],
        "q": [
            ("natural", "the flaky coupon test, what was the cause?"),
            ("tool_output", "assert Decimal 9.99 10.00"),
            ("keyword", "freeze_time coupon test flaky"),
            ("inflection", "flakiness freezing time in tests"),
        ],
    },
    {
        "key": "oom-worker",
        "user": "bob",
        "src": "cli",
        "day": 34,
        "title": "Celery worker keeps restarting",
        "msgs": [
            ("u", "The report worker pod restarts every hour or so."),
            ("c", "terminal", '{"command": "kubectl -n reports describe pod report-worker-7d9f"}'),
            (
                "t",
                "terminal",
                "State: Running\nLast State: Terminated\n  Reason: OOMKilled\n  "
                "Exit Code: 137\nLimits: memory: 512Mi",
            ),
            (
                "a",
                "It's OOMKilled at the 512Mi limit. The PDF export loads whole reports into "
                "memory; I set worker_max_tasks_per_child=50 and raised the limit to 1Gi.",
            ),
        ],
        "q": [
            ("tool_output", "OOMKilled exit code 137"),
            ("natural", "why did the report worker keep restarting?"),
            ("keyword", "celery max_tasks_per_child memory limit"),
        ],
    },
    {
        "key": "git-bisect",
        "user": "carol",
        "src": "cli",
        "day": 70,
        "title": "Which commit broke the CSV export",
        "msgs": [
            ("u", "CSV export puts all rows on one line since last week. Find the commit."),
            (
                "c",
                "terminal",
                '{"command": "git bisect start HEAD v2.3.0 && git bisect run '
                'pytest tests/test_export.py -q"}',
            ),
            (
                "t",
                "terminal",
                "a41c9e2 is the first bad commit\nAuthor: dev-bot\n    Switch "
                "csv writer to lineterminator=''",
            ),
            (
                "a",
                "git bisect points at a41c9e2 which set lineterminator='' in the csv writer. "
                "Reverted that line and added a regression test.",
            ),
        ],
        "q": [
            ("natural", "how did we find what broke the CSV export?"),
            ("keyword", "git bisect csv lineterminator"),
            ("tool_output", "a41c9e2 first bad commit"),
        ],
    },
    {
        "key": "python-upgrade",
        "user": "alice",
        "src": "cli",
        "day": 55,
        "title": "Upgrade the monorepo to Python 3.13",
        "msgs": [
            ("u", "Upgrade our services to Python 3.13. Plan it and start with the auth service."),
            (
                "a",
                "I'll delegate the dependency audit to a sub-agent while I update the "
                "Dockerfiles and CI matrix.",
            ),
            ("c", "delegate_task", '{"goal": "audit dependencies for Python 3.13 wheels"}'),
            ("t", "delegate_task", "sub-agent finished: see its report"),
            ("a", "Auth service now builds on 3.13; the CI matrix runs 3.12 and 3.13."),
        ],
        "children": [
            {
                "kind": "subagent",
                "msgs": [
                    ("u", "Audit requirements of all services for Python 3.13 wheels."),
                    (
                        "c",
                        "terminal",
                        '{"command": "pip download -r requirements.txt '
                        '--only-binary :all: --python-version 3.13 -d /tmp/w"}',
                    ),
                    (
                        "t",
                        "terminal",
                        "ERROR: Could not find a version that satisfies the "
                        "requirement psycopg2-binary==2.9.5 (no cp313 wheel)\nERROR: "
                        "uwsgi==2.0.21 needs compilation",
                    ),
                    (
                        "a",
                        "Blockers: psycopg2-binary 2.9.5 (bump to 2.9.10 which has cp313 "
                        "wheels) and uwsgi (switch the billing service to gunicorn).",
                    ),
                ],
            }
        ],
        "q": [
            ("delegation", "python 3.13 upgrade psycopg2 wheel blocker"),
            ("delegation", "which packages blocked the python upgrade?"),
            ("delegation", "uwsgi gunicorn billing 3.13"),
        ],
    },
    {
        "key": "competitor-research",
        "user": "carol",
        "src": "cli",
        "day": 64,
        "title": "Pricing page research",
        "msgs": [
            (
                "u",
                "Research how our three competitors price their team plans, then propose "
                "our new pricing page.",
            ),
            ("a", "I'll send a sub-agent to collect the competitor prices, then draft the page."),
            (
                "c",
                "delegate_task",
                '{"goal": "collect team plan prices of Linear, Height, Shortcut"}',
            ),
            ("t", "delegate_task", "done"),
            (
                "a",
                "Proposal: Free up to 3 seats, Team $8/seat/month billed yearly, Business "
                "$14 with SSO. Annual discount 20%.",
            ),
        ],
        "children": [
            {
                "kind": "subagent",
                "msgs": [
                    ("u", "Collect team plan prices of Linear, Height and Shortcut."),
                    ("c", "web_fetch", '{"url": "https://linear.app/pricing"}'),
                    (
                        "t",
                        "web_fetch",
                        "Linear Basic $10 per user/month, Business $16 per "
                        "user/month billed annually",
                    ),
                    (
                        "a",
                        "Linear: $10/$16. Height: $6.99 per seat. Shortcut: $8.50 Team, "
                        "$12 Business. All offer an annual discount of 15-20%.",
                    ),
                ],
            }
        ],
        "q": [
            ("delegation", "what did Linear charge per seat when we did the pricing research?"),
            ("delegation", "pricing page Shortcut Height competitors seat"),
        ],
    },
    {
        "key": "migration-long",
        "user": "bob",
        "src": "cli",
        "day": 75,
        "title": "Move the billing DB from MySQL to Postgres",
        "msgs": [
            ("u", "We're moving billing from MySQL 5.7 to Postgres 16. Let's plan the cut-over."),
            (
                "a",
                "Plan: pgloader for the initial copy, then a logical replication-like "
                "catch-up using the binlog with Debezium, then a short write freeze for the "
                "cut-over.",
            ),
            ("u", "ok start with pgloader on staging"),
            (
                "c",
                "terminal",
                '{"command": "pgloader mysql://billing@staging/billing postgresql:///billing"}',
            ),
            (
                "t",
                "terminal",
                "table name  read  imported  errors\ninvoices  1203311  "
                "1203311  0\npayments  98123  98120  3",
            ),
        ],
        "children": [
            {
                "kind": "compression",
                "msgs": [
                    (
                        "u",
                        "[Context was compressed. Summary: migrating billing MySQL -> "
                        "Postgres with pgloader; staging copy done, 3 payment rows "
                        "failed.]",
                    ),
                    (
                        "a",
                        "The 3 failed payments rows have zero dates ('0000-00-00') which "
                        "Postgres rejects. I added `CAST type datetime to timestamptz drop "
                        "default drop not null using zero-dates-to-null` to the pgloader "
                        "load file.",
                    ),
                    ("u", "and the sequences?"),
                    (
                        "a",
                        "pgloader resets sequences by default; I verified setval on "
                        "payments_id_seq matches max(id).",
                    ),
                ],
            }
        ],
        "q": [
            ("continuation", "zero dates 0000-00-00 pgloader cast"),
            ("continuation", "how did we handle the payments rows postgres rejected?"),
            ("continuation", "payments_id_seq setval"),
        ],
    },
    {
        "key": "novel-outline",
        "user": "carol",
        "src": "telegram",
        "day": 80,
        "title": "Short story: the lighthouse keeper",
        "msgs": [
            (
                "u",
                "Help me outline a short story about a lighthouse keeper who finds letters "
                "from the future.",
            ),
            (
                "a",
                "Three acts: the first letter warns of a storm that does come; the keeper "
                "starts answering; the last letter is in her own handwriting.",
            ),
            ("u", "Make the ending more ambiguous."),
        ],
        "children": [
            {
                "kind": "compression",
                "msgs": [
                    (
                        "u",
                        "[Context was compressed. Summary: story outline, lighthouse "
                        "keeper, letters from the future.]",
                    ),
                    (
                        "a",
                        "Ambiguous ending: the final letter is blank except for the "
                        "coordinates of the lighthouse, and the lamp goes dark as the "
                        "supply boat arrives. The reader can't tell if she left or was "
                        "never there.",
                    ),
                    ("u", "love the blank letter with coordinates"),
                ],
            }
        ],
        "q": [
            ("continuation", "the story ending with a blank letter and coordinates"),
            ("natural", "lighthouse keeper story outline"),
        ],
    },
    {
        "key": "regex-log",
        "user": "alice",
        "src": "cli",
        "day": 36,
        "title": "Parse slow requests out of the access log",
        "msgs": [
            (
                "u",
                "Give me a one-liner to list requests slower than 2 seconds from the nginx "
                "access log, we log $request_time last.",
            ),
            (
                "a",
                "`awk '$NF > 2 {print $NF, $7}' /var/log/nginx/access.log | sort -rn | head "
                "-20` prints the time and path of the slowest ones.",
            ),
            ("u", "perfect"),
        ],
        "q": [
            ("natural", "that awk one-liner for slow requests"),
            ("keyword", "awk request_time access log slow"),
        ],
    },
    {
        "key": "ssh-tunnel",
        "user": "bob",
        "src": "discord",
        "day": 48,
        "title": "Reach the staging Redis from my laptop",
        "msgs": [
            (
                "u",
                "How can I connect to the staging Redis? It only listens on the private network.",
            ),
            (
                "a",
                "Through the bastion: `ssh -N -L 6380:redis.staging.internal:6379 "
                "bastion.acme.io`, then `redis-cli -p 6380`.",
            ),
        ],
        "q": [
            ("natural", "how do I get to the staging redis from my laptop?"),
            ("keyword", "ssh tunnel bastion redis 6380"),
            ("inflection", "tunneling through the bastion"),
        ],
    },
    {
        "key": "budget-sheet",
        "user": "carol",
        "src": "telegram",
        "day": 58,
        "title": "Household budget spreadsheet formulas",
        "msgs": [
            (
                "u",
                "In my budget spreadsheet I want the monthly total per category from the "
                "transactions tab.",
            ),
            (
                "a",
                "Use =SUMIFS(Transactions!C:C, Transactions!B:B, A2, "
                'Transactions!A:A, ">="&DATE(2026,9,1), Transactions!A:A, '
                '"<"&DATE(2026,10,1)) and fill down per category.',
            ),
        ],
        "q": [
            ("natural", "the spreadsheet formula for monthly totals per category"),
            ("keyword", "SUMIFS budget category"),
            ("typo_partial", "budgt spreadshet sumifs"),
        ],
    },
    {
        "key": "dns-mx",
        "user": "alice",
        "src": "cli",
        "day": 66,
        "title": "Emails from the contact form land in spam",
        "msgs": [
            ("u", "Mails sent by the contact form go to spam at Gmail."),
            (
                "c",
                "terminal",
                '{"command": "dig +short TXT alice.dev; dig +short TXT '
                'default._domainkey.alice.dev"}',
            ),
            ("t", "terminal", '"v=spf1 include:_spf.google.com ~all"\n'),
            (
                "a",
                "SPF doesn't include the Postmark servers and there is no DKIM record. I "
                "added include:spf.mtasv.net to SPF, published the Postmark DKIM key and a "
                "DMARC p=none record.",
            ),
        ],
        "q": [
            ("natural", "why were our emails going to spam?"),
            ("keyword", "SPF DKIM DMARC postmark"),
            ("inflection", "emailing from the contact form ended up spammed"),
        ],
    },
    {
        "key": "memory-leak-node",
        "user": "alice",
        "src": "cli",
        "day": 72,
        "title": "Node API memory keeps growing",
        "msgs": [
            ("u", "The Node API's RSS grows by ~100 MB per hour until it restarts."),
            ("c", "terminal", '{"command": "node --inspect ... && take heap snapshots"}'),
            (
                "t",
                "terminal",
                "Heap snapshot diff: +412,331 objects of class Listener "
                "(EventEmitter), retained by socket.io namespace /live",
            ),
            (
                "a",
                "Each reconnect registered a new 'update' listener on the shared emitter "
                "and never removed it. Moved the subscription into the connection handler "
                "with emitter.off on disconnect.",
            ),
        ],
        "q": [
            ("natural", "the memory leak in the node API"),
            ("tool_output", "heap snapshot Listener retained socket.io"),
            ("inflection", "leaking listeners on reconnects"),
        ],
    },
    {
        "key": "terraform-state",
        "user": "bob",
        "src": "cli",
        "day": 84,
        "title": "Terraform state lock stuck",
        "msgs": [
            ("u", "terraform apply says the state is locked since yesterday"),
            ("c", "terminal", '{"command": "terraform plan"}'),
            (
                "t",
                "terminal",
                "Error: Error acquiring the state lock\nLock Info:\n  ID: "
                "8c1f...\n  Path: acme-tfstate/prod/network.tfstate\n  Who: "
                "ci-runner@gha",
            ),
            (
                "a",
                "A cancelled GitHub Actions run left the DynamoDB lock. Confirmed no run is "
                "active and ran `terraform force-unlock 8c1f...`.",
            ),
        ],
        "q": [
            ("natural", "the terraform lock that was stuck"),
            ("keyword", "terraform force-unlock dynamodb"),
            ("tool_output", "Error acquiring the state lock"),
        ],
    },
    {
        "key": "standup-notes",
        "user": "carol",
        "src": "cli",
        "day": 86,
        "title": "Quarter planning: Q4 goals",
        "msgs": [
            (
                "u",
                "Help me turn these notes into Q4 goals: faster onboarding, fewer support "
                "tickets about invoices, ship the mobile app beta.",
            ),
            (
                "a",
                "Objective 1: onboarding under 10 minutes (KR: activation 45% -> 60%). "
                "Objective 2: invoice tickets -30% via self-serve invoice editing. Objective "
                "3: mobile beta to 200 testers by Dec 1.",
            ),
        ],
        "q": [
            ("natural", "what were our Q4 goals?"),
            ("keyword", "OKR onboarding activation mobile beta"),
            ("inflection", "planned objectives for the quarter"),
        ],
    },
    {
        "key": "gpu-driver",
        "user": "bob",
        "src": "cli",
        "day": 88,
        "title": "CUDA not found after kernel update",
        "msgs": [
            (
                "u",
                "After the kernel update nvidia-smi says it couldn't communicate with the "
                "NVIDIA driver.",
            ),
            ("c", "terminal", '{"command": "dkms status"}'),
            ("t", "terminal", "nvidia/550.90.07: added\n(not built for 6.8.0-45-generic)"),
            (
                "a",
                "DKMS didn't rebuild the module for the new kernel. Ran `sudo dkms "
                "autoinstall` and rebooted; nvidia-smi works again.",
            ),
        ],
        "q": [
            ("natural", "nvidia driver broke after kernel update"),
            ("keyword", "dkms autoinstall nvidia-smi"),
        ],
    },
    {
        "key": "rename-branch",
        "user": "alice",
        "src": "cli",
        "day": 14,
        "title": "Rename master to main",
        "msgs": [
            ("u", "Rename the default branch from master to main in all our repos."),
            (
                "a",
                "For each repo: `git branch -m master main`, push, change the default on "
                "GitHub, delete the old branch. I did shop, blog and infra.",
            ),
        ],
        "q": [("keyword", "rename branch master main")],
    },
    {
        "key": "sql-slow-query",
        "user": "carol",
        "src": "cli",
        "day": 24,
        "title": "Slow dashboard query",
        "msgs": [
            ("u", "The revenue dashboard query takes 14 s."),
            ("c", "terminal", '{"command": "psql -c \\"explain analyze select ...\\""}'),
            (
                "t",
                "terminal",
                "Seq Scan on orders  (cost=0.00..981233.00 rows=41230000)\n  "
                "Filter: (created_at >= '2026-01-01')\nExecution Time: 14122.3 ms",
            ),
            (
                "a",
                "It scans all of orders. Added a BRIN index on orders(created_at); the "
                "query now takes 180 ms.",
            ),
        ],
        "q": [
            ("natural", "how did we speed up the revenue dashboard?"),
            ("tool_output", "Seq Scan on orders execution time"),
            ("keyword", "BRIN index created_at orders"),
            ("inflection", "indexing orders to speed the query"),
        ],
    },
    {
        "key": "webhook-signature",
        "user": "alice",
        "src": "cli",
        "day": 42,
        "title": "Stripe webhook signature fails",
        "msgs": [
            (
                "u",
                "Stripe webhooks fail with 'No signatures found matching the expected "
                "signature for payload'.",
            ),
            (
                "a",
                "The handler parses the JSON before verification, so the raw body differs. "
                "Switched the route to express.raw({type: 'application/json'}) and pass "
                "the raw Buffer to stripe.webhooks.constructEvent.",
            ),
        ],
        "q": [
            ("natural", "what was wrong with the stripe webhook?"),
            ("keyword", "constructEvent raw body signature"),
            ("typo_partial", "strpe webhok signature"),
        ],
    },
]

# More sessions with a delegation chain or a compression continuation.
SESSIONS += [
    {
        "key": "security-audit",
        "user": "alice",
        "src": "cli",
        "day": 78,
        "title": "Security review before the launch",
        "msgs": [
            ("u", "Before launch, review the shop for obvious security holes."),
            (
                "a",
                "I'll have one sub-agent scan dependencies and another check the auth "
                "flows, then summarize.",
            ),
            ("c", "delegate_task", '{"goal": "scan dependencies for CVEs"}'),
            ("t", "delegate_task", "done"),
            ("c", "delegate_task", '{"goal": "review session cookie and auth flows"}'),
            ("t", "delegate_task", "done"),
            ("a", "Summary: two findings fixed, one accepted risk documented."),
        ],
        "children": [
            {
                "kind": "subagent",
                "msgs": [
                    ("u", "Scan the shop's dependencies for known CVEs."),
                    ("c", "terminal", '{"command": "npm audit --omit=dev"}'),
                    (
                        "t",
                        "terminal",
                        "jsonwebtoken <9.0.0 Severity: high\nInsecure "
                        "implementation of key retrieval - CVE-2022-23540\nfix available "
                        "via npm audit fix --force",
                    ),
                    (
                        "a",
                        "One high finding: jsonwebtoken 8.5.1 (CVE-2022-23540). Upgraded to 9.0.2.",
                    ),
                ],
            },
            {
                "kind": "subagent",
                "msgs": [
                    ("u", "Review session cookie settings and the login flow."),
                    (
                        "a",
                        "The session cookie lacked SameSite and Secure. Set SameSite=Lax, "
                        "Secure, HttpOnly. Password reset tokens never expired: now 30 "
                        "minutes.",
                    ),
                ],
            },
        ],
        "q": [
            ("delegation", "security review jsonwebtoken CVE"),
            ("delegation", "did the security audit find anything about cookies?"),
            ("delegation", "launch review password reset token expiry"),
            ("delegation", "security holes samesite cookie"),
        ],
    },
    {
        "key": "grant-proposal",
        "user": "carol",
        "src": "cli",
        "day": 47,
        "title": "Grant proposal for the open-source maps project",
        "msgs": [
            (
                "u",
                "Let's write the grant proposal for the offline maps project: summary, "
                "budget, timeline.",
            ),
            (
                "a",
                "Summary draft: offline vector maps for field workers in low-connectivity "
                "regions, built on OpenStreetMap data and MapLibre.",
            ),
            ("u", "good, now the budget"),
        ],
        "children": [
            {
                "kind": "compression",
                "msgs": [
                    (
                        "u",
                        "[Context was compressed. Summary: grant proposal, offline maps, "
                        "summary done; next: budget and timeline.]",
                    ),
                    (
                        "a",
                        "Budget: 2 developers x 9 months = EUR 108,000; tile hosting EUR "
                        "6,000; user testing trips in Kenya EUR 9,500. Total EUR 123,500.",
                    ),
                    ("u", "timeline please"),
                    (
                        "a",
                        "Milestones: M1 tile packaging (month 3), M2 sync protocol (month 6), "
                        "M3 field pilot in Kenya (month 9).",
                    ),
                ],
            }
        ],
        "q": [
            ("continuation", "what budget did we put in the grant for user testing in Kenya?"),
            ("continuation", "grant milestones field pilot"),
            ("continuation", "offline maps proposal total budget"),
        ],
    },
]

# Extra questions for sessions above: (key, category, text).
EXTRA_QUESTIONS: list[tuple[str, str, str]] = [
    ("cors-nginx", "cron_flood", "nginx CORS headers api.acme.io dashboard"),
    ("k8s-ingress", "cron_flood", "upload timeout ingress nginx"),
    ("disk-full", "cron_flood", "build server docker disk"),
    ("cert-renew", "cron_flood", "blog.alice.dev certificate"),
    ("backup-rsync", "cron_flood", "backup script errors rsync code"),
    ("python-upgrade", "cron_flood", "psycopg2-binary wheel python upgrade"),
    ("pg-vacuum", "cron_flood", "postgres table bloat"),
    ("cert-renew", "cron_flood", "certbot renew error"),
    ("disk-full", "cron_flood", "out of disk space CI"),
    ("backup-rsync", "cron_flood", "the nightly backup failing"),
    ("python-upgrade", "delegation", "requirements audit for python 3.13"),
    ("competitor-research", "delegation", "how much did Height cost per seat?"),
    ("migration-long", "continuation", "pgloader zero-dates-to-null"),
    ("novel-outline", "continuation", "lamp goes dark supply boat"),
    ("migration-long", "natural", "the MySQL to Postgres move for billing"),
    ("cors-nginx", "typo_partial", "nginx prefligt 204"),
    ("photo-rename", "typo_partial", "pilow exif datetimeoriginal"),
    ("pg-vacuum", "typo_partial", "autovac scale"),
    ("terraform-state", "typo_partial", "terrafrom lock stuck"),
    ("oom-worker", "typo_partial", "oomkiled report worker"),
    ("git-bisect", "typo_partial", "bisct csv export"),
    ("dns-mx", "typo_partial", "dmarc dkm spam"),
    ("memory-leak-node", "typo_partial", "memmory leak listner"),
    ("flaky-test", "typo_partial", "freezgun coupon"),
    ("sql-slow-query", "typo_partial", "revenu dashbord slow"),
    ("gpu-driver", "inflection", "rebuilt the drivers after updating the kernel"),
    ("k8s-ingress", "inflection", "uploading large files timed out"),
    ("backup-rsync", "inflection", "excluding lost+found from backups"),
    ("api-design", "inflection", "paginating invoices with cursors"),
    ("cors-nginx", "keyword", "CORS OR preflight OR Access-Control-Allow-Origin"),
    ("backup-rsync", "cron_flood", "backup OR rsync OR lost+found"),
    ("k8s-ingress", "keyword", "ingress OR proxy-read-timeout OR 504"),
    ("disk-full", "cron_flood", '"disk space" OR ENOSPC OR prune'),
]
