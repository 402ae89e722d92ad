"""Hand-built retriever Documents (realistic transcripts, some holding secrets) and a scripted
chat model for the summarizer tests."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

# Every secret planted in the sample transcripts. None may reach a model or a cassette.
SECRETS = [
    "sk-proj-Qx7Lm2Vb9Tr4Wz8Kp1Hn6Yd3Fs5Gj0Ac",
    "Sup3rS3cretPgPass",
    "AKIAQ4XZ7RT2MNBV5LKD",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY",
    "ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s12",
    "MIIEowIBAAKCAQEA7yN3fakeKeyMaterialForTestsOnly",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjaS1ib3QifQ.c2lnbmF0dXJlLWZvci10ZXN0cw",
    "hunter2-prod-db",
]

_SESSIONS: list[dict[str, Any]] = [
    {
        "session_id": "20260414_docker",
        "when": "April 14, 2026 at 09:12 AM",
        "source": "cli",
        "title": "Docker socket permission denied",
        "messages": [
            (
                101,
                "USER",
                "docker ps fails with 'permission denied while trying to connect to "
                "the Docker daemon socket at unix:///var/run/docker.sock'. My key is in env: "
                f"export OPENAI_API_KEY={SECRETS[0]}",
            ),
            (102, "ASSISTANT", "[Called: terminal]"),
            (
                103,
                "TOOL:terminal",
                "$ ls -l /var/run/docker.sock\nsrw-rw---- 1 root docker 0 "
                "Apr 14 09:10 /var/run/docker.sock\n$ id\nuid=1000(dev) groups=1000(dev),27(sudo)",
            ),
            (
                104,
                "ASSISTANT",
                "Your user is not in the docker group. I ran `sudo usermod -aG "
                "docker dev` and asked you to log out and back in.",
            ),
            (105, "USER", "Works now after re-login, thanks. Deploy script next time."),
        ],
    },
    {
        "session_id": "20260420_migrate",
        "when": "April 20, 2026 at 02:40 PM",
        "source": "cli",
        "title": "Alembic migration fails on deploy",
        "messages": [
            (
                210,
                "USER",
                "The deploy stopped at `alembic upgrade head` with 'relation "
                '"invoices" already exists\'. DB url is '
                f"postgres://app:{SECRETS[1]}@db.internal:5432/billing",
            ),
            (211, "ASSISTANT", "[Called: terminal]"),
            (
                212,
                "TOOL:terminal",
                "$ alembic current\n4f2a1c (head: 9b7e22)\n"
                f"$ PGPASSWORD={SECRETS[7]} psql -h db.internal -c '\\dt'\n invoices | table",
            ),
            (
                213,
                "ASSISTANT",
                "The table was created by hand earlier. I stamped the revision "
                "with `alembic stamp 5c1d0e` and re-ran `alembic upgrade head`; it succeeded.",
            ),
            (214, "USER", "Great. We still need a check in CI so this cannot happen again."),
        ],
    },
    {
        "session_id": "20260502_nginx",
        "when": "May 02, 2026 at 11:05 AM",
        "source": "telegram",
        "title": "TLS certificate renewal for deploy host",
        "messages": [
            (
                330,
                "USER",
                "Browsers say the cert for deploy.example.org expired. Here's the "
                "key file in case you need it:\n-----BEGIN RSA PRIVATE KEY-----\n"
                f"{SECRETS[5]}\n-----END RSA PRIVATE KEY-----",
            ),
            (331, "ASSISTANT", "Please never paste private keys. [Called: terminal]"),
            (
                332,
                "TOOL:terminal",
                "$ sudo certbot renew --nginx\nCongratulations, all "
                "renewals succeeded: /etc/letsencrypt/live/deploy.example.org/fullchain.pem",
            ),
            (
                333,
                "ASSISTANT",
                "Renewed with `sudo certbot renew --nginx` and reloaded with "
                "`sudo systemctl reload nginx`. The systemd timer certbot.timer was disabled; "
                "I enabled it.",
            ),
        ],
    },
    {
        "session_id": "20260509_ci",
        "when": "May 09, 2026 at 04:30 PM",
        "source": "cli",
        "title": "GitHub Actions deploy job cannot push image",
        "messages": [
            (
                440,
                "USER",
                "CI deploy job fails: 'denied: requested access to the resource is "
                f"denied'. Secrets: AWS_ACCESS_KEY_ID={SECRETS[2]} "
                f"AWS_SECRET_ACCESS_KEY={SECRETS[3]} GH_TOKEN={SECRETS[4]}",
            ),
            (441, "ASSISTANT", "[Called: read_file]"),
            (
                442,
                "TOOL:read_file",
                ".github/workflows/deploy.yml: uses "
                "aws-actions/amazon-ecr-login@v2 but no `permissions: id-token: write`",
            ),
            (
                443,
                "ASSISTANT",
                "Added `permissions: id-token: write` and switched to OIDC role "
                "arn:aws:iam::123456789012:role/ci-deploy. The push went through.",
            ),
            (444, "USER", "Rotate those keys I pasted? Not done yet."),
        ],
    },
    {
        "session_id": "20260511_wheels",
        "when": "May 11, 2026 at 10:00 AM",
        "source": "discord",
        "title": "Private package index during deploy",
        "messages": [
            (
                550,
                "USER",
                "pip install in the deploy image fails: 'ERROR: No matching "
                "distribution found for acme-utils==2.3.1'. I tested with curl -H "
                f"'Authorization: Bearer {SECRETS[6]}' https://pypi.acme.dev/simple/",
            ),
            (
                551,
                "ASSISTANT",
                "The index needs auth inside Docker too. I added "
                "`--extra-index-url https://pypi.acme.dev/simple/` via a build secret "
                "(`RUN --mount=type=secret,id=pip_conf`) instead of baking the token in.",
            ),
            (552, "USER", "Build passes now. acme-utils 2.3.1 installed."),
        ],
    },
]


def transcript(messages: list[tuple[int, str, str]], *, with_ids: bool = True) -> str:
    """Format like the retriever: ``[ROLE #id]: text`` blocks separated by blank lines."""
    tag = (lambda i, r: f"[{r} #{i}]") if with_ids else (lambda i, r: f"[{r}]")
    return "\n\n".join(f"{tag(i, role)}: {text}" for i, role, text in messages)


def sample_documents(
    query: str = "deploy", *, with_ids: bool = True, store_id: str | None = None
) -> list[Document]:
    """Five retriever Documents following the metadata contract of docs/design.md."""
    docs = []
    for s in _SESSIONS:
        ids = [m[0] for m in s["messages"]]
        matched = [i for i, _, text in s["messages"] if query.lower() in text.lower()]
        docs.append(
            Document(
                page_content=transcript(s["messages"], with_ids=with_ids),
                metadata={
                    "session_id": s["session_id"],
                    "when": s["when"],
                    "started_at": 1776000000.0,
                    "source": s["source"],
                    "model": "claude-sonnet-4",
                    "title": s["title"],
                    "user_id": None,
                    "score": 1.0,
                    "matched_session_ids": [s["session_id"]],
                    "matched_message_ids": matched or ids[:1],
                    "match_count": len(matched),
                    "query": query,
                    "query_reading": "natural",
                    "mode": "search",
                    "last_message_id": max(ids),
                    "store_id": store_id,
                    "truncated": False,
                },
            )
        )
    return docs


Script = Callable[[list[BaseMessage], int], "str | BaseException"]


class ScriptedChatModel(BaseChatModel):
    """Answers through ``script(messages, call_number)``: a string, or an exception to raise.

    ``latency`` seconds are spent per call (``time.sleep`` / ``asyncio.sleep``); ``gate`` (a
    threading.Event), when given, blocks calls containing ``gate_marker`` until it is set.
    ``wait_for_active`` holds each call (up to 5 s) until that many calls have been active at
    once, so a concurrency test does not depend on how fast threads start on a busy machine.
    """

    script: Any
    latency: float = 0.0
    gate: Any = None
    gate_marker: str = ""
    calls: list[str] = Field(default_factory=list)
    call_kwargs: list[dict[str, Any]] = Field(default_factory=list)
    active: int = 0
    max_active: int = 0
    wait_for_active: int = 0
    lock: Any = None

    def model_post_init(self, __context: Any) -> None:
        self.lock = threading.Lock()

    def _enter(self, kwargs: dict[str, Any]) -> None:
        with self.lock:
            self.call_kwargs.append(kwargs)
            self.active += 1
            self.max_active = max(self.max_active, self.active)

    def _leave(self) -> None:
        with self.lock:
            self.active -= 1

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _next(self, messages: list[BaseMessage]) -> ChatResult:
        body = "\n".join(str(m.content) for m in messages)
        with self.lock:
            self.calls.append(body)
            n = len(self.calls)
        outcome = self.script(messages, n)
        if isinstance(outcome, BaseException):
            raise outcome
        message = AIMessage(
            outcome,
            usage_metadata={"input_tokens": 100, "output_tokens": 20, "total_tokens": 120},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._enter(kwargs)
        try:
            if self.gate is not None and self.gate_marker in str(messages[-1].content):
                self.gate.wait(10)
            deadline = time.monotonic() + 5
            while self.max_active < self.wait_for_active and time.monotonic() < deadline:
                time.sleep(0.002)
            time.sleep(self.latency)
            return self._next(messages)
        finally:
            self._leave()

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._enter(kwargs)
        try:
            if self.gate is not None and self.gate_marker in str(messages[-1].content):
                await asyncio.sleep(3600)  # cancelled by the deadline
            deadline = time.monotonic() + 5
            while self.max_active < self.wait_for_active and time.monotonic() < deadline:
                await asyncio.sleep(0.002)
            await asyncio.sleep(self.latency)
            return self._next(messages)
        finally:
            self._leave()


# One hand-written recap per sample session, as a model that summarizes would answer: the
# quality gate accepts them (a bare "Recap of <title>." names nothing beyond the title: vague).
RECAPS = {
    "Docker socket permission denied": "`docker ps` failed on /var/run/docker.sock because "
    "the user was not in the docker group; `sudo usermod -aG docker dev` and a re-login fixed it.",
    "Alembic migration fails on deploy": "the invoices table already existed, so the revision "
    "was stamped with `alembic stamp 5c1d0e` and `alembic upgrade head` then succeeded; a CI "
    "check is still to be added.",
    "TLS certificate renewal for deploy host": "the certificate of deploy.example.org was "
    "renewed with `sudo certbot renew --nginx`, nginx was reloaded and certbot.timer enabled.",
    "GitHub Actions deploy job cannot push image": "deploy.yml got `permissions: id-token: "
    "write` and the OIDC role ci-deploy, and the push went through; the pasted keys are not "
    "rotated yet.",
    "Private package index during deploy": "pip could not find acme-utils==2.3.1; the index "
    "https://pypi.acme.dev/simple/ now comes in through a build secret and the build passes.",
}


_CITATION = re.compile(r" \[#\d+(?:, #\d+)*\]")


def without_citations(text: str) -> str:
    """``text`` without the ``[#4, #5]`` citations the summarizer writes into each sentence.

    Example:
        >>> without_citations("Fixed it [#4, #5]. Done [#6].")
        'Fixed it. Done.'
    """
    return _CITATION.sub("", text)


def recap_of(title: str) -> str:
    """What :func:`echo_summary` answers for the session titled ``title``."""
    return f"Recap of {title}: {RECAPS.get(title, 'the session was reviewed.')}"


def echo_summary(messages: list[BaseMessage], n: int) -> str:
    """A script that 'summarizes' by naming the session title line of the prompt (or the
    session whose first message the prompt holds), followed by the session's recap."""
    user = str(messages[-1].content)
    title = next((ln for ln in user.splitlines() if ln.startswith("Session title:")), "")
    title = title.removeprefix("Session title: ")
    if not title:
        body = "\n".join(str(m.content) for m in messages)
        title = next((s["title"] for s in _SESSIONS if s["messages"][0][2][:40] in body), "")
    return recap_of(title)


def api_error(cls: type[Exception], status: int) -> Exception:
    """An ``openai`` status error as the SDK raises it."""
    request = httpx.Request("POST", "http://llm.test/v1/chat/completions")
    response = httpx.Response(status, request=request)
    return cls(f"Error code: {status}", response=response, body=None)  # type: ignore[call-arg]
