"""A corpus of realistic secrets in the contexts agent transcripts put them in.

The values are generated from a seeded RNG at import time, so no key-shaped literal sits in the
repository (secret scanners stay quiet) and every run checks the same corpus. Each entry is a
``Secret``: the value that must never leave the process, and the transcript text around it.
"""

from __future__ import annotations

import base64
import random
import string
from typing import NamedTuple

__all__ = [
    "HOSTILE_UNITS",
    "ISSUE_21_KINDS",
    "ISSUE_32_KINDS",
    "ORDINARY",
    "SECRETS",
    "Secret",
    "hostile_text",
]

_rng = random.Random(0x5EC12E7)
_ALNUM = string.ascii_letters + string.digits
_UPPER = string.ascii_uppercase + string.digits
_URLSAFE = _ALNUM + "-_"
_B64 = _ALNUM + "+/"


def _r(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


class Secret(NamedTuple):
    kind: str
    value: str
    text: str


def _pem(label: str) -> str:
    body = "\n".join(_r(_B64, 64) for _ in range(6))
    return f"-----BEGIN {label}-----\n{body}\n{_r(_B64, 20)}==\n-----END {label}-----"


def _build() -> list[Secret]:
    out: list[Secret] = []

    def add(kind: str, value: str, template: str) -> None:
        out.append(Secret(kind, value, template.format(v=value)))

    v = "sk-" + _r(_ALNUM, 48)
    add("openai_key", v, "[USER]: my key is {v}, why does it say quota exceeded?")
    add("openai_key_env", v, "[TOOL:terminal]: OPENAI_API_KEY={v}\nPATH=/usr/bin")
    add("openai_project_key", "sk-proj-" + _r(_URLSAFE, 100), "export OPENAI_API_KEY='{v}'")
    add("anthropic_key", "sk-ant-api03-" + _r(_URLSAFE, 93) + "AA", "client = Anthropic({v!r})")
    add("aws_access_key_id", "AKIA" + _r(_UPPER, 16), "aws_access_key_id = {v}")
    aws_secret = _r(_B64, 40)
    add("aws_secret_ini", aws_secret, "[default]\naws_secret_access_key = {v}\nregion = eu-west-1")
    add("aws_secret_env", aws_secret, "AWS_SECRET_ACCESS_KEY={v} aws s3 ls")
    add(
        "github_classic",
        "ghp_" + _r(_ALNUM, 36),
        "git remote set-url origin https://{v}@github.com/o/r",
    )
    add("github_fine", "github_pat_" + _r(_ALNUM, 22) + "_" + _r(_ALNUM, 59), "GH_TOKEN={v}")
    add("github_oauth", "gho_" + _r(_ALNUM, 36), "[TOOL:gh]: Logged in with token {v}")
    add("gitlab_pat", "glpat-" + _r(_URLSAFE, 20), "[USER]: here is my gitlab token: {v}")
    add("slack_bot", "xoxb-" + _r(string.digits, 12) + "-" + _r(_ALNUM, 24), "SLACK={v}")
    add(
        "slack_webhook",
        "https://hooks.slack.com/services/T"
        + _r(_UPPER, 8)
        + "/B"
        + _r(_UPPER, 10)
        + "/"
        + _r(_ALNUM, 24),
        "curl -X POST -d @msg.json {v}",
    )
    add("google_api_key", "AIza" + _r(_URLSAFE, 35), "maps.googleapis.com/maps/api/js?key={v}")
    add("stripe_live", "sk_live_" + _r(_ALNUM, 24), "[USER]: stripe says invalid request for {v}")
    add("stripe_restricted", "rk_live_" + _r(_ALNUM, 24), "STRIPE_KEY: {v}")
    add("huggingface", "hf_" + _r(_ALNUM, 34), "[USER]: huggingface-cli login, token {v}")
    add("npm", "npm_" + _r(_ALNUM, 36), "//registry.npmjs.org/:_authToken={v}")
    add("sendgrid", "SG." + _r(_URLSAFE, 22) + "." + _r(_URLSAFE, 43), "[USER]: sendgrid key {v}")
    jwt = ".".join(
        base64.urlsafe_b64encode(part.encode()).decode().rstrip("=")
        for part in (
            '{"alg":"HS256","typ":"JWT"}',
            '{"sub":"1234567890","name":"a"}',
            _r(_ALNUM, 32),
        )
    )
    add("jwt", jwt, "[TOOL:http]: Set-Cookie: session={v}; HttpOnly")
    add("bearer", _r(_URLSAFE, 40), "curl -H 'Authorization: Bearer {v}' https://api.example.com")
    basic = base64.b64encode(f"deploy:{_r(_ALNUM, 16)}".encode()).decode()
    add("basic_auth", basic, "Authorization: Basic {v}")

    def pw() -> str:  # a distinct password per entry, so one leak names one entry
        return _r(_ALNUM, 14) + "!"

    add("url_password", pw(), "DATABASE_URL=postgres://app:{v}@db.internal:5432/app")
    add("redis_url_password", pw(), "redis://:{v}@cache.internal:6379/0")
    add("env_password", pw(), "DB_PASSWORD={v}\nDB_HOST=localhost")
    add("django_secret", _r(_ALNUM + "!@#%^&*(-_=+)", 50), 'DJANGO_SECRET_KEY="{v}"')
    add("json_api_key", _r(_ALNUM, 32), '{{"api_key": "{v}", "region": "eu"}}')
    add("json_password", pw(), '{{"user": "admin", "password": "{v}"}}')
    add("yaml_password", pw(), "database:\n  user: app\n  password: {v}\n")
    add("cli_password_flag", pw(), "mysql -u root --password {v} app")
    add("cli_short_password", pw(), "mysql -u root -p{v} app")
    add("docker_login", "dckr_pat_" + _r(_URLSAFE, 27), "docker login -u me -p {v}")
    add("curl_user", pw(), "curl -u admin:{v} https://jenkins.internal/api/json")
    add(
        "azure_storage",
        _r(_B64, 86) + "==",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={v};"
        "EndpointSuffix=core.windows.net",
    )
    add("pem_rsa", _pem("RSA PRIVATE KEY"), "[TOOL:cat]: {v}")
    add("pem_openssh", _pem("OPENSSH PRIVATE KEY"), "cat ~/.ssh/id_ed25519\n{v}")
    pem = _pem("PRIVATE KEY")
    add("gcp_service_account", pem.replace("\n", "\\n"), '{{"type": "service_account", '
        '"private_key": "{v}", "client_email": "x@p.iam.gserviceaccount.com"}}')  # fmt: skip
    # Issue 21 §12: kinds the first rules missed (appended: the values above stay the same).
    add("gitlab_pat_bare", "glpat-" + _r(_URLSAFE, 20), "[USER]: gitlab says 401 for {v} today")
    add("npm_bare", "npm_" + _r(_ALNUM, 36), "[USER]: npm publish says 403 with {v}")
    add("pypi", "pypi-AgEIcHlwaS5vcmc" + _r(_URLSAFE, 70), "twine upload -p {v} dist/*")
    add("google_oauth", "ya29." + _r(_URLSAFE, 60), "[TOOL:gcloud]: access token {v}")
    add("google_client_secret", "GOCSPX-" + _r(_URLSAFE, 28), "client secret is {v}, id 12.apps")
    add(
        "telegram_bot",
        _r(string.digits, 10) + ":AA" + _r(_URLSAFE, 33),
        "curl https://api.telegram.org/bot{v}/getMe",
    )
    add("vault", "hvs." + _r(_URLSAFE, 24), "[USER]: vault login with {v} fails")
    add("stripe_webhook", "whsec_" + _r(_ALNUM, 32), "[USER]: stripe signing secret {v}")
    add("twilio", "SK" + _r("0123456789abcdef", 32), "[USER]: twilio api key {v} stopped working")
    add(
        "aws_secret_prose",
        _r(_ALNUM, 18) + "/" + _r(_ALNUM, 10) + "+" + _r(_ALNUM, 10),
        "[USER]: the aws secret key is {v} if that helps",
    )
    putty_private = "\n".join(_r(_B64, 64) for _ in range(4))
    add(
        "putty",
        putty_private,
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
        "Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5\nAAAAIDeploy\nPrivate-Lines: 4\n{v}\n"
        "Private-MAC: " + _r("0123456789abcdef", 64),
    )
    wrapped = base64.b64encode(_pem("RSA PRIVATE KEY").encode()).decode()
    add("pem_base64", wrapped, "apiVersion: v1\nkind: Secret\ndata:\n  tls.key: {v}\n")
    spaced_jwt = ".".join(
        base64.urlsafe_b64encode(part.encode()).decode().rstrip("=")
        for part in ('{ "alg": "HS256", "typ": "JWT" }', '{ "sub": "42" }', _r(_ALNUM, 32))
    )
    add("jwt_spaced_header", spaced_jwt, "[USER]: the login API returned {v} as the session")
    add(
        "quoted_password_spaces",
        f"{_r(_ALNUM, 6)} {_r(_ALNUM, 7)} {_r(_ALNUM, 5)}",
        'db:\n  password: "{v}"\n  host: db.internal',
    )
    # Issue 32 item 7: forms the rules left unredacted (appended: the values above stay).
    add("netrc", pw(), "machine api.example.com login deploy password {v}")
    add("netrc_lines", pw(), "[TOOL:cat]: machine git.internal\n  login ci\n  password {v}\n")
    add("api_key_spaced", _r(_ALNUM, 32), "[USER]: My API key: {v}")
    add("secret_key_spaced", _r(_B64, 40), "Access Key ID: none here\nSecret Key: {v}")
    add(
        "azure_sas_sig",
        _r(_ALNUM, 30) + "%2B" + _r(_ALNUM, 10) + "%3D",
        "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&ss=b&sp=r&sig={v}",
    )
    add(
        "s3_presigned_signature",
        _r("0123456789abcdef", 64),
        "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature={v}",
    )
    add("url_password_slash", _r(_ALNUM, 8) + "/" + _r(_ALNUM, 8), "postgres://app:{v}@db:5432/app")
    add("url_password_at", _r(_ALNUM, 14) + "@" + _r(_ALNUM, 14), "mongodb://u:{v}@mongo:27017/x")
    add("authorization_token", _r(_ALNUM, 40), "curl -H 'Authorization: Token {v}' https://x.io")
    add("authorization_apikey", _r(_URLSAFE, 40), "Authorization: ApiKey {v}")
    add("markdown_password", pw(), "Here are the credentials:\n**Password**: {v}")
    add("markdown_table_password", pw(), "| user | admin |\n|---|---|\n| password | {v} |")
    add(
        "env_after_json_newline",
        _r(_ALNUM, 32),
        '{{"stdout": "DB_HOST=db\\nGH_TOKEN={v}\\nDEBUG=1\\n", "code": 0}}',
    )
    add("odbc_pwd", pw(), "Driver={{ODBC Driver 18}};Server=db;Uid=sa;Pwd={v};")
    add("query_pass", pw(), "curl 'https://router.internal/login?user=admin&pass={v}'")
    add("passphrase", pw(), "ssh-keygen finished; passphrase={v}")
    add("sshpass", pw(), "sshpass -p {v} ssh deploy@10.0.0.5 uptime")
    add("openssl_pass", pw(), "openssl enc -aes-256-cbc -in db.sql -out db.enc -pass pass:{v}")
    add("cookie_session", _r(_ALNUM, 32), "Cookie: theme=dark; sessionid={v}; lang=en")
    add("set_cookie_session", _r(_URLSAFE, 40), "< Set-Cookie: connect.sid={v}; Path=/; HttpOnly")
    add("htpasswd_b", pw(), "htpasswd -b /etc/nginx/.htpasswd admin {v}")
    add("fullwidth_colon", _r(_ALNUM, 32), "API_KEY：{v}")
    add(
        "tool_call_name_value",
        pw(),
        '[ASSISTANT → set_secret(name="OPENAI_API_KEY", value="{v}")]:',
    )
    add("json_name_value", pw(), '{{"env": [{{"name": "DB_PASSWORD", "value": "{v}"}}]}}')
    add("ansi_key_name", _r(_ALNUM, 32), "\x1b[1;32mSTRIPE_API_KEY\x1b[0m={v}")
    add(
        "aws_secret_prose_secret_first",
        _r(_ALNUM, 20) + "/" + _r(_ALNUM, 9) + "+" + _r(_ALNUM, 9),
        "[USER]: here is my secret AWS key: {v}.",
    )
    return out


ISSUE_21_KINDS = (
    "gitlab_pat_bare",
    "npm_bare",
    "pypi",
    "google_oauth",
    "google_client_secret",
    "telegram_bot",
    "vault",
    "stripe_webhook",
    "twilio",
    "aws_secret_prose",
    "putty",
    "pem_base64",
    "jwt_spaced_header",
    "quoted_password_spaces",
)
"""The kinds issue 21 §12 found the first rules missing (GitLab in prose, npm bare: the
corpus already had both in config syntax)."""

ISSUE_32_KINDS = (
    "netrc",
    "netrc_lines",
    "api_key_spaced",
    "secret_key_spaced",
    "azure_sas_sig",
    "s3_presigned_signature",
    "url_password_slash",
    "url_password_at",
    "authorization_token",
    "authorization_apikey",
    "markdown_password",
    "markdown_table_password",
    "env_after_json_newline",
    "odbc_pwd",
    "query_pass",
    "passphrase",
    "sshpass",
    "openssl_pass",
    "cookie_session",
    "set_cookie_session",
    "htpasswd_b",
    "fullwidth_colon",
    "tool_call_name_value",
    "json_name_value",
    "ansi_key_name",
    "aws_secret_prose_secret_first",
)
"""The forms issue 32 item 7 found leaving unredacted."""

ORDINARY = [
    "request 3f1c9a2e-7b4d-4e8a-9c21-5d6e7f8a9b0c failed, see trace 9b2d1c4e-0f3a-4b5c-8d7e-6f5a4b3c2d1e",
    "edit /home/dev/shop-api/src/payments/stripe_webhook.py and /etc/nginx/sites-enabled/api.conf",
    "docs at https://docs.python.org/3/library/re.html and https://github.com/org/repo/pull/1234",
    "pin langchain-core>=0.3.40, numpy==1.26.4, psycopg[binary]>=3.1 and requests~=2.32",
    "fixed in commit 4f9c2a17e3b8d6c5a1f0e9d8c7b6a5f4e3d2c1b0, reverted by 1a2b3c4d5e6f",
    "the aws secret rotation ran at 03:00; commit 4f9c2a17e3b8d6c5a1f0e9d8c7b6a5f4e3d2c1b0 fixed it",
    "image sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 pulled",
    "SKU SKABCDEF-1234 is out of stock; task TASK-5521 done",
    "arn:aws:iam::123456789012:role/deploy-role assumed in eu-west-1",
    "set max_tokens=500, top_p=0.9; the token budget was 8192 tokens",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl deploy@ci",
    "npm_config_cache=/tmp/npm and npm_lifecycle_event=test were set",
    "the password reset email was sent; secrets live in Vault under kv/app",
    "python -m pytest -q tests/unit_tests/test_retriever.py::test_window -k 'not slow'",
    "version 12345678:Alpha build finished, eyeglasses.eyebrows.eyelids are body parts",
    "base64 of hello is aGVsbG8=, of the config LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t",
    "The JWT header is eyJhbGciOiJIUzI1NiJ9 on its own, without a payload or signature",
    "gitlab runner registered with id 42 in group glpat-docs (a wiki page name)",
    # issue 32: near misses of the forms item 7 added
    "bash: pwd: command not found; PWD=/home/dev/shop-api and OLDPWD=/tmp were set",
    "https://mastodon.social/@alice and https://host:8443/users/@bob/posts",
    "postgres://localhost:5432/app, redis://cache:6379/0 and git@github.com:org/repo.git",
    "pip install 'requests>=2.31,<3' pydantic==2.7.1, node@20.11.1 and pass-through@2.0.0",
    "see /home/dev/.password-store/ and ~/.ssh/known_hosts; git log 4f9c2a1..1a2b3c4 --stat",
    "| field | type | description |\n|---|---|---|\n| password | string | the user's password |",
    "the first pass: collect the files; cookie policy: we use cookies only for login",
    "the Authorization header is required; htpasswd -c /etc/nginx/.htpasswd admin",
    "the api key rotation is scheduled; secret keys live in Vault; sig: 42, signature verified",
    "see https://example.com/search?q=sig&page=2 or https://user@host.example.com/x",
    "session 3f1c9a2e-7b4d-4e8a-9c21-5d6e7f8a9b0c, user u-1234, model gpt-4o-mini",
    "--pass-through-env enabled; bypass=true; set-cookie handling fixed in v2",
]
"""Ordinary technical text no rule may change: UUIDs, paths, URLs, version pins, git SHAs in
prose (also next to "aws secret"), digests, ARNs, public keys, look-alike prefixes."""


SECRETS: list[Secret] = _build()


HOSTILE_UNITS = (
    # issue 32 item 3: "mysql " * n + "x-p" took `search --json` 39 s; "TOKEN" * n 78 s a call
    "mysql ",
    "TOKEN",
    "mysql/",
    "login.",
    "login -",
    "A_TOKEN=",
    "\\nTOKEN",
    "\x1b[1mTOKEN",
    "PASSWORD=a[REDACTED",
    "--password",
    "--token-",
    "password",
    "passwordpassword: ",
    'password: "a ',
    "api key ",
    "secret key ",
    "| password ",
    "**password**",
    "eyJ-",
    "ew0-",
    "eyJaaaaaaaa.",
    "a.",
    "a://a:",
    "x://u:a/",
    "x://u:a@",
    "://:a@b@",
    "aws secret ",
    "secret aws ",
    "aws secret aAaAaA0",
    "-u a:",
    "sshpass ",
    "sshpass -p",
    "htpasswd -b ",
    "htpasswd -b a ",
    "cookie: a=",
    "authorization: token ",
    "authorization: ",
    "machine h login u ",
    "login u ",
    'name: "token", ',
    '"name": "API_KEY" ',
    "value: ",
    "-----BEGIN ",
    "-----BEGIN PRIVATE KEY-----",
    "-----END PRIVATE KEY ",
    "PuTTY-User-Key-File-1:",
    "PuTTY-User-Key-File-@",
    "Private-MAC: ",
    "bearer ",
    "basic ",
    "?sig=",
    "&x-amz-signature=a",
    "pwd=",
    "pass=",
    "-pass pass:",
    "sk-",
    "sk-a ",
    "AKIA",
    "ghp_",
    "github_pat_",
    "glpat-",
    "1234567:A",
    "SK0",
    "AccountKey=",
    "LS0tLS1CRUdJTi",
)
"""Units a hostile text repeats ("TOKEN" * n): the worst inputs found per rule
(``benchmarks/redaction_worst.py`` searches these and the rules' hints with separators)."""


def hostile_text(unit: str, size: int, tail: str = "x-p") -> str:
    """``unit`` repeated to ``size`` characters, then ``tail`` (what a match may wait for)."""
    return (unit * (size // len(unit) + 1))[:size] + tail
