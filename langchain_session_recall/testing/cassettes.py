"""Recorded LLM calls replayed offline (vcrpy), for the tests and the notebooks.

The summarizer cassettes live in the checkout's top-level ``cassettes/`` (or where
``SESSION_RECALL_CASSETTES`` says).

Replay is strict: ``record_mode="none"``, so a request without a recorded answer fails the test
and never reaches the network. ``RECORD=1`` re-records against the server named by
``SESSION_RECALL_LLM_BASE_URL`` / ``SESSION_RECALL_LLM_MODEL`` (``OPENAI_API_KEY`` for hosted
ones);
``scripts/record-cassettes`` re-records every cassette in one command, see ``docs/summarizer.md``.

Built on ``langchain_tests.conftest.base_vcr_config`` (gzip-ed YAML through its serializer and
persister); additions: more secret headers filtered on requests and responses, bodies compared as
JSON, and the scheme/host/port of every URI replaced by ``http://llm.cassette`` so cassettes
recorded through the fault proxy, a local server or a hosted API all replay the same way.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:  # vcr loads when a cassette is used: collecting tests need not pay for it
    import vcr  # type: ignore[import-untyped]
    from vcr.request import Request  # type: ignore[import-untyped]

__all__ = [
    "CASSETTE_DIR",
    "RECORDING",
    "cassette_chat_model",
    "recording_settings",
    "summarizer_vcr",
    "use_cassette",
]

CASSETTE_DIR = Path(
    os.environ.get("SESSION_RECALL_CASSETTES") or Path(__file__).resolve().parents[2] / "cassettes"
)
"""Where the cassettes are: ``SESSION_RECALL_CASSETTES``, else ``cassettes/`` of this checkout."""
RECORDING = os.environ.get("RECORD") == "1"
_SETTINGS_FILE = CASSETTE_DIR / "summarizer_recording.json"
_CANONICAL_ORIGIN = "http://llm.cassette"

_SECRET_HEADERS = (
    "authorization",
    "api-key",
    "x-api-key",
    "openai-organization",
    "openai-project",
    "cookie",
    "set-cookie",
)


def recording_settings() -> dict[str, Any]:
    """Model and server settings the cassettes were recorded with.

    When recording they come from the environment (and are written next to the cassettes);
    on replay they are read back, so request bodies match whatever model was recorded.
    """
    if RECORDING:
        settings = {
            "base_url": os.environ.get("SESSION_RECALL_LLM_BASE_URL", "http://127.0.0.1:8765/v1"),
            "model": os.environ.get("SESSION_RECALL_LLM_MODEL", "qwen2.5-coder-1.5b"),
            "max_tokens_param": os.environ.get("SESSION_RECALL_LLM_TOKEN_PARAM", "max_tokens"),
        }
        CASSETTE_DIR.mkdir(parents=True, exist_ok=True)
        stored = {k: v for k, v in settings.items() if k != "base_url"}
        _SETTINGS_FILE.write_text(json.dumps(stored, indent=2) + "\n", "utf-8")
        return settings
    stored = json.loads(_SETTINGS_FILE.read_text("utf-8"))
    return {"base_url": _CANONICAL_ORIGIN + "/v1", **stored}


def _json_body(r1: Request, r2: Request) -> None:
    def parse(request: Request) -> Any:
        body = request.body
        if body is None or body == b"" or body == "":
            return None
        if isinstance(body, bytes):
            body = body.decode("utf-8")
        try:
            return json.loads(body)
        except ValueError:
            return body

    assert parse(r1) == parse(r2), "request bodies differ"


def _canonical_request(request: Request) -> Request:
    parts = urlsplit(request.uri)
    request.uri = _CANONICAL_ORIGIN + parts.path + (f"?{parts.query}" if parts.query else "")
    for name in list(request.headers):
        if name.lower() in _SECRET_HEADERS:
            del request.headers[name]
    return request


def _scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    headers = response.get("headers", {})
    for name in list(headers):
        if name.lower() in _SECRET_HEADERS:
            del headers[name]
    return response


def summarizer_vcr() -> vcr.VCR:
    """A ``vcr.VCR`` for the summarizer cassettes (gzip YAML, strict JSON-body replay)."""
    import vcr
    from langchain_tests.conftest import CustomPersister, CustomSerializer, base_vcr_config

    config = base_vcr_config()
    config.update(
        record_mode="all" if RECORDING else "none",
        cassette_library_dir=str(CASSETTE_DIR),
        path_transformer=vcr.VCR.ensure_suffix(".yaml.gz"),
        match_on=["method", "uri", "json_body"],
        filter_headers=[(name, None) for name in _SECRET_HEADERS],
        before_record_request=_canonical_request,
        before_record_response=_scrub_response,
        serializer="gzyaml",
    )
    config.pop("allow_playback_repeats", None)  # a use_cassette option, see use_cassette()
    recorder = vcr.VCR(**config)
    recorder.register_serializer("gzyaml", CustomSerializer)
    recorder.register_persister(CustomPersister)
    recorder.register_matcher("json_body", _json_body)
    return recorder


def use_cassette(name: str, **overrides: Any) -> Any:
    """Context manager replaying (or, with RECORD=1, recording) ``cassettes/<name>.yaml.gz``.

    One recorded answer per request (``allow_playback_repeats=False``): a 429 then a 200 for the
    same body replay in order, and an extra, unrecorded retry fails loudly.
    """
    return summarizer_vcr().use_cassette(name, allow_playback_repeats=False, **overrides)


def cassette_chat_model(**kwargs: Any) -> Any:
    """``ChatOpenAI`` pointed at the recorded server (a live one when ``RECORD=1``).

    The settings match what ``recording_settings()`` says the cassettes were recorded with, so
    replayed request bodies match; ``kwargs`` are passed through (temperature, max_tokens, ...).
    """
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    settings = recording_settings()
    key = os.environ.get("OPENAI_API_KEY", "sk-local") if RECORDING else "sk-replay"
    return ChatOpenAI(
        base_url=settings["base_url"],
        api_key=SecretStr(key),
        model=settings["model"],
        max_retries=0,
        use_responses_api=False,
        timeout=1800,
        **kwargs,
    )
