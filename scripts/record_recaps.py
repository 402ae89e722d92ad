"""Record real outputs of the summarizer's prompt for the recap quality gate's corpus.

Talks to a running OpenAI-compatible server (``/work/shared/tools/local-llm-server``: llama.cpp)
and writes ``tests/data/recaps/recordings-<model>.json``: one entry per (transcript, setting) with
the raw answer and its ``finish_reason``. The transcripts are the embedded demo data (the
project's own text), retrieved the way the summarizer sees them, and are stored in the file so
the corpus does not move when the retriever's windowing changes. Labels (good/bad and why) are
added by hand afterwards (``label``/``why``/``expected_reasons``); re-recording drops them.

    python scripts/record_recaps.py --model smollm2-135m \\
        --server "llama.cpp (llama-cpp-python 0.3.36) serving SmolLM2-135M-Instruct Q4_1"

``--setting MAX_TOKENS:TEMPERATURE`` (repeatable) records one answer per transcript and setting
instead of the seven default ones: ``--setting 1024:0.1`` gives each answer room to finish, so
its ``completion_tokens`` is the length the model wants (what an output budget must allow).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from pathlib import Path
from typing import Any

from langchain_openai import ChatOpenAI

from langchain_session_recall import SessionRecallRetriever
from langchain_session_recall.demo import build_demo_store
from langchain_session_recall.summarize.prompts import (
    CITATION_INSTRUCTION,
    DEFAULT_SUMMARY_PROMPT,
    PROMPT_VERSION,
)

OUT_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "recaps"

# One query per demo session worth recapping; the top hit is recorded.
QUERIES = (
    "how did we fix the CORS error?",
    "that script for renaming photos",
    "which API design did we settle on?",
    "服务端 部署",
    "app container can't reach postgres",
    "postgres too many connections",
    "certificate not renewing",
    "django upgrade",
    "ログローテーション",
    "sqlite fts5 or elasticsearch",
)

# (max_tokens, temperature, message ids in the transcript)
SETTINGS = (
    (32, 0.1, True),
    (32, 0.8, True),
    (128, 0.1, True),
    (128, 0.8, True),
    (384, 0.1, True),
    (384, 0.8, True),
    (384, 0.1, False),
)


def transcripts() -> list[dict[str, Any]]:
    store = build_demo_store()
    out = []
    for with_ids in (True, False):
        retriever = SessionRecallRetriever(store=store, k=1, show_message_ids=with_ids)
        for query in QUERIES:
            [doc] = retriever.invoke(query)
            meta = doc.metadata
            out.append(
                {
                    "id": f"{meta['session_id']}{'+ids' if with_ids else ''}",
                    "session_id": meta["session_id"],
                    "query": query,
                    "source": meta["source"],
                    "when": meta["when"],
                    "title": meta["title"],
                    "with_ids": with_ids,
                    "transcript": doc.page_content,
                }
            )
    return out


def prompt_vars(t: dict[str, Any]) -> dict[str, str]:
    """The summarizer's prompt variables (demo data holds no secrets, so no redaction)."""
    return {
        "query": t["query"],
        "source": t["source"],
        "when": t["when"],
        "title": t["title"],
        "transcript": t["transcript"],
        "citation_instruction": CITATION_INSTRUCTION if t["with_ids"] else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:8765/v1")
    parser.add_argument("--model", required=True)
    parser.add_argument("--server", required=True, help="what serves the model (provenance)")
    parser.add_argument(
        "--setting",
        action="append",
        metavar="MAX_TOKENS:TEMPERATURE",
        help="record these settings, on the transcripts with and without ids (repeatable)",
    )
    args = parser.parse_args()
    settings = SETTINGS
    if args.setting:
        settings = tuple(
            (int(m), float(t), ids)
            for m, t in (s.split(":") for s in args.setting)
            for ids in (True, False)
        )

    llm = ChatOpenAI(
        base_url=args.base_url,
        api_key="sk-local",
        model=args.model,
        max_retries=0,
        use_responses_api=False,
        timeout=600,
    )
    by_id = {t["id"]: t for t in transcripts()}
    recordings = []
    for t in by_id.values():
        for max_tokens, temperature, with_ids in settings:
            if t["with_ids"] != with_ids:
                continue
            messages = DEFAULT_SUMMARY_PROMPT.invoke(prompt_vars(t)).to_messages()
            started = time.monotonic()
            bound = llm.bind(temperature=temperature, extra_body={"max_tokens": max_tokens})
            answer = bound.invoke(messages)
            meta = answer.response_metadata
            recordings.append(
                {
                    "id": f"{args.model}/{t['id']}/t{temperature}/m{max_tokens}",
                    "transcript_id": t["id"],
                    "model": args.model,
                    "settings": {"max_tokens": max_tokens, "temperature": temperature},
                    "raw_output": answer.content,
                    "finish_reason": meta.get("finish_reason"),
                    "usage": meta.get("token_usage"),
                    "seconds": round(time.monotonic() - started, 2),
                    "label": None,
                    "why": None,
                    "expected_reasons": [],
                }
            )
            print(recordings[-1]["id"], meta.get("finish_reason"), repr(answer.content[:80]))
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    doc = {
        "provenance": f"recorded against {args.server} (model name {args.model!r}) on {today}",
        "prompt": f"{PROMPT_VERSION} (langchain_session_recall.summarize.prompts."
        "DEFAULT_SUMMARY_PROMPT); max_tokens sent literally",
        "transcripts": "embedded demo data (langchain_session_recall/data/demo_sessions.json), "
        "top hit of SessionRecallRetriever(k=1) per query: see recap_transcripts.json",
        "recordings": recordings,
    }
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "recap_transcripts.json").write_text(
        json.dumps({"transcripts": list(by_id.values())}, ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8",
    )
    path = OUT_DIR / f"recordings-{args.model}.json"
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print("wrote", path)


if __name__ == "__main__":
    main()
