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

__all__ = ["SECRETS", "Secret"]

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
    return out


SECRETS: list[Secret] = _build()
