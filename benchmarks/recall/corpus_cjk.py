"""Hand-written Chinese, Japanese and mixed Chinese-English sessions, with their questions.

Same shape as :mod:`corpus_en`. Questions include two-character Chinese words, Latin terms
glued to CJK text (``修改youer服务端``) and Japanese questions with particles. The
``punctuated`` questions are written as people type them, with full-width and ideographic
punctuation between the words (``爬虫被封了，怎么办？``, ``キャッシュが効かない、どうすればいい？``).
"""

from __future__ import annotations

from typing import Any

SESSIONS: list[dict[str, Any]] = [
    {
        "key": "zh-deploy",
        "user": "chen",
        "src": "telegram",
        "day": 10,
        "title": "youer 服务端部署",
        "msgs": [
            ("u", "帮我修改youer服务端的部署脚本，现在每次发布都要手动重启。"),
            (
                "a",
                "我看一下部署脚本。建议用 systemd 管理服务，发布后执行 systemctl restart youer。",
            ),
            ("c", "read_file", '{"path": "deploy/youer.sh"}'),
            (
                "t",
                "read_file",
                "#!/bin/sh\nscp youer-server root@10.0.0.5:/opt/youer/\n"
                "ssh root@10.0.0.5 'pkill youer-server; nohup /opt/youer/youer-server &'",
            ),
            (
                "a",
                "已经改成 systemd 单元 youer.service，"
                "部署脚本最后一步自动重启服务，不再需要手动操作。",
            ),
        ],
        "q": [
            ("zh", "服务端 部署"),
            ("mixed", "youer服务端部署脚本"),
            ("zh", "上次怎么修改的部署脚本"),
            ("mixed", "youer systemd 重启"),
        ],
    },
    {
        "key": "zh-db-index",
        "user": "chen",
        "src": "cli",
        "day": 25,
        "title": "订单查询太慢",
        "msgs": [
            ("u", "订单列表接口很慢，要五六秒才返回。"),
            (
                "c",
                "terminal",
                '{"command": "mysql -e \\"explain select * from orders where '
                'user_id=42 order by created_at desc limit 20\\""}',
            ),
            ("t", "terminal", "type: ALL  rows: 3120442  Extra: Using where; Using filesort"),
            (
                "a",
                "全表扫描加文件排序。给 orders 表加了联合索引 (user_id, created_at)，"
                "接口降到 40 毫秒。",
            ),
        ],
        "q": [
            ("zh", "订单接口 索引"),
            ("zh", "订单列表为什么慢"),
            ("mixed", "orders 联合索引 filesort"),
        ],
    },
    {
        "key": "zh-wedding",
        "user": "chen",
        "src": "telegram",
        "day": 52,
        "title": "婚礼预算",
        "msgs": [
            ("u", "帮我算一下婚礼预算：酒席二十桌，每桌三千八，婚纱照一万二，场地布置八千。"),
            (
                "a",
                "酒席 20 × 3800 = 76000 元，加婚纱照 12000、布置 8000，"
                "合计 96000 元。建议预留百分之十的备用金。",
            ),
            ("u", "再加上蜜月旅行两万"),
            ("a", "合计 116000 元。"),
        ],
        "q": [
            ("zh", "婚礼预算"),
            ("zh", "酒席每桌多少钱"),
            ("zh", "蜜月"),
        ],
    },
    {
        "key": "zh-crawler",
        "user": "chen",
        "src": "cli",
        "day": 33,
        "title": "爬虫被封 IP",
        "msgs": [
            ("u", "我的爬虫抓取商品价格，跑了一小时就被封了，返回 403。"),
            (
                "a",
                "请求频率太高而且 User-Agent 是 python-requests。加了随机延时 2 到 5 秒、轮换 "
                "User-Agent，并使用代理池。",
            ),
            ("c", "terminal", '{"command": "python crawler.py --delay 2-5 --proxies proxies.txt"}'),
            ("t", "terminal", "抓取完成：成功 1832 条，失败 12 条（超时）"),
        ],
        "q": [
            ("zh", "爬虫 封禁"),
            ("mixed", "爬虫 403 代理池"),
            ("zh", "抓取商品价格的脚本"),
        ],
    },
    {
        "key": "zh-redis-cache",
        "user": "chen",
        "src": "cli",
        "day": 68,
        "title": "缓存雪崩",
        "msgs": [
            ("u", "昨晚零点大量缓存同时过期，数据库被打满了。"),
            (
                "a",
                "这是缓存雪崩。给过期时间加随机抖动（基础时间加 0 到 300 秒），"
                "热点数据用互斥锁重建，"
                "并给 Redis 加了哨兵。",
            ),
        ],
        "q": [
            ("zh", "缓存雪崩怎么解决的"),
            ("mixed", "Redis 过期时间 随机"),
            ("zh", "缓存"),
        ],
    },
    {
        "key": "ja-docker",
        "user": "yuki",
        "src": "cli",
        "day": 16,
        "title": "Docker ビルドが遅い",
        "msgs": [
            (
                "u",
                "Dockerのビルドが遅くて、毎回十分以上かかります。キャッシュが効いていないみたいです。",
            ),
            (
                "a",
                "Dockerfile で COPY . . を npm install の前に書いているので、ソースを変えるたびに"
                "依存関係の再インストールが走ります。"
                "package.json だけ先にコピーする順番に変更しました。",
            ),
            ("u", "ビルド時間が四十秒になりました！"),
        ],
        "q": [
            ("ja", "ビルドが遅い"),
            ("ja", "Dockerのキャッシュが効かない問題"),
            ("ja", "依存関係 再インストール"),
        ],
    },
    {
        "key": "ja-translation",
        "user": "yuki",
        "src": "telegram",
        "day": 44,
        "title": "プレゼン資料の翻訳",
        "msgs": [
            (
                "u",
                "来週のプレゼン資料を英語に翻訳してください。タイトルは「新しい請求システムの紹介」です。",
            ),
            (
                "a",
                "Title: Introducing the New Billing System. スライド二枚目の「請求書の自動発行」は "
                "Automatic invoice issuing と訳しました。",
            ),
        ],
        "q": [
            ("ja", "プレゼン資料の翻訳"),
            ("ja", "請求システム"),
            ("ja", "請求書の自動発行は英語で何と訳した？"),
        ],
    },
    {
        "key": "ja-cron-timezone",
        "user": "yuki",
        "src": "cli",
        "day": 77,
        "title": "定期実行が九時間ずれる",
        "msgs": [
            ("u", "毎朝七時に動くはずのレポート送信が、午後四時に実行されています。"),
            (
                "a",
                "サーバーのタイムゾーンが UTC なので、cron の 0 7 * * * は日本時間の十六時です。"
                "CRON_TZ=Asia/Tokyo を設定しました。",
            ),
        ],
        "q": [
            ("ja", "タイムゾーン 設定"),
            ("ja", "レポート送信の時間がずれる"),
            ("mixed", "cron 日本時間"),
        ],
    },
    {
        "key": "mixed-k8s-zh",
        "user": "chen",
        "src": "cli",
        "day": 82,
        "title": "k8s 滚动更新 卡住",
        "msgs": [
            ("u", "deployment 滚动更新卡住了，新的 pod 一直是 Pending。"),
            ("c", "terminal", '{"command": "kubectl describe pod api-6c8d-x2"}'),
            ("t", "terminal", "Events: 0/3 nodes are available: 3 Insufficient cpu."),
            ("a", "节点 CPU 不够，requests 设置成了 2 核。改成 500m 之后滚动更新完成了。"),
        ],
        "q": [
            ("mixed", "滚动更新 Pending"),
            ("mixed", "Insufficient cpu 节点"),
            ("zh", "滚动更新卡住"),
        ],
    },
    {
        "key": "mixed-vue-zh",
        "user": "chen",
        "src": "cli",
        "day": 38,
        "title": "前端打包体积",
        "msgs": [
            ("u", "Vue项目打包后vendor.js有4MB，首屏加载很慢。"),
            (
                "a",
                "用 rollup-plugin-visualizer 看了一下，echarts 和 moment 占了大头。改成按需引入 "
                "echarts，moment 换成 dayjs，vendor 降到 900KB。",
            ),
        ],
        "q": [
            ("mixed", "vendor.js 打包体积"),
            ("mixed", "echarts按需引入"),
            ("zh", "首屏加载慢"),
        ],
    },
]

EXTRA_QUESTIONS: list[tuple[str, str, str]] = [
    ("zh-deploy", "zh", "部署脚本"),
    ("zh-deploy", "zh", "手动重启"),
    ("zh-db-index", "zh", "全表扫描"),
    ("zh-crawler", "zh", "代理"),
    ("zh-redis-cache", "zh", "缓存同时过期数据库被打满"),
    ("zh-wedding", "zh", "婚纱照多少钱"),
    ("ja-docker", "ja", "ビルド時間を短くした方法"),
    ("ja-translation", "ja", "翻訳"),
    ("ja-cron-timezone", "ja", "朝七時のレポート"),
    ("ja-cron-timezone", "ja", "午後四時に実行されるレポート"),
    ("mixed-k8s-zh", "mixed", "pod一直Pending"),
    ("mixed-vue-zh", "mixed", "moment换成dayjs"),
    ("zh-crawler", "mixed", "User-Agent 轮换"),
    ("zh-db-index", "mixed", "orders表加索引"),
    # Punctuated questions (issue 32 §14): the words of a question parted by 、，。？！「」・
    ("zh-deploy", "punctuated", "上次怎么修改的部署脚本？"),
    ("zh-deploy", "punctuated", "youer服务端，部署以后要手动重启吗？"),
    ("zh-db-index", "punctuated", "订单列表为什么这么慢？要五六秒。"),
    ("zh-db-index", "punctuated", "orders表，加了什么索引？"),
    ("zh-wedding", "punctuated", "婚礼预算，酒席每桌多少钱？"),
    ("zh-crawler", "punctuated", "爬虫被封了，返回403，怎么办？"),
    ("zh-redis-cache", "punctuated", "缓存雪崩，数据库被打满了！怎么解决的？"),
    ("ja-docker", "punctuated", "Dockerのキャッシュが効かない、どうすればいい？"),
    ("ja-translation", "punctuated", "「請求書の自動発行」は、英語で何と訳した？"),
    ("ja-cron-timezone", "punctuated", "レポート送信の時間がずれる。タイムゾーン・設定は？"),
    ("mixed-k8s-zh", "punctuated", "滚动更新卡住了，pod一直Pending，怎么办？"),
    ("mixed-vue-zh", "punctuated", "首屏加载慢，vendor.js太大。"),
]
