"""Secret redaction measured both ways (issue 21 §12): kinds caught, ordinary text left alone.

* **Kinds caught**: every entry of the test corpus (``tests/reliability/secrets_corpus.py``:
  realistic secrets in the places transcripts hold them, values from a seeded RNG), by
  ``redact_secrets`` (caught: no 12-character piece of the value survives) and, when the
  ``detect-secrets`` package is installed (``pip install detect-secrets``, in the ``bench``
  extra), by its plugins run on every line (``detect_secrets.core.scan.scan_line`` under
  ``default_settings()``; caught: a reported value covers the secret's pieces).
* **False redactions** on text that holds no secret: the corpus's ordinary technical text
  (UUIDs, paths, URLs, version pins, git SHAs in prose, digests, ARNs, public keys), every
  title and message of the demo data, and of the recall set (``benchmarks/recall``, seed 7).
  The demo data plants fake credentials in one ``.env`` paste; a redacted span that is one of
  ``DEMO_PLANTED`` counts as caught, any other as false.
* **Throughput** of ``redact_secrets`` on the demo messages.

    python benchmarks/secrets.py [--rules-from PATH]   # PATH: another checkout's package

The table goes to stdout; docs/reliability.md quotes it.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from reliability.secrets_corpus import (  # noqa: E402
    ISSUE_21_KINDS,
    ISSUE_32_KINDS,
    ORDINARY,
    SECRETS,
    Secret,
)

DEMO_PLANTED = (
    "shop",  # DATABASE_URL=postgresql://shop:shop@...: the URL's password
    "sk-test-FAKE0000notarealkey0000DEMO1234",
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
)
"""The fake credentials the demo data plants (AWS's documented example keys among them)."""


def _pieces(value: str) -> list[str]:
    n = min(12, len(value))
    return [value[i : i + n] for i in range(len(value) - n + 1)]


def _leaks(secret: Secret, text: str) -> bool:
    return any(p in text for p in _pieces(secret.value))


def _redacted_spans(before: str, after: str) -> list[str]:
    """The pieces of ``before`` that redaction replaced."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    return [before[i1:i2] for op, i1, i2, _, _ in matcher.get_opcodes() if op != "equal"]


def _detect_secrets() -> Any:
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def found(text: str) -> list[str]:
        values: list[str] = []
        with default_settings():
            for line in text.splitlines() or [text]:
                values += [s.secret_value or "" for s in scan_line(line)]
        return [v for v in values if v]

    return found


def _benign_sets() -> dict[str, list[str]]:
    from benchmarks.recall.dataset import build_dataset
    from langchain_session_recall.demo import demo_sessions

    demo = [s.get("title") or "" for s in demo_sessions()]
    demo += [m.get("content") or "" for s in demo_sessions() for m in s["messages"]]
    recall: list[str] = []
    for session in build_dataset(7).sessions:
        recall.append(session.title or "")
        recall += [m.get("content") or "" for m in session.messages]
    return {"ordinary text": list(ORDINARY), "demo data": demo, "recall set": recall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules-from", help="import redact_secrets from this checkout instead")
    args = parser.parse_args()
    if args.rules_from:
        sys.path.insert(0, args.rules_from)
    # the old path: it names the rules in this checkout and in an older one (--rules-from)
    redaction = importlib.import_module("langchain_session_recall.summarize.redaction")
    redact = redaction.redact_secrets
    print(f"rules: {Path(redaction.__file__).parent.parent.parent}")
    detector = _detect_secrets()
    ds_name = "detect-secrets" if detector else "detect-secrets (not installed)"

    print(f"\n| kind | ours | {ds_name} |\n|---|:-:|:-:|")
    ours_caught = ds_caught = 0
    missed_21: list[str] = []
    missed_32: list[str] = []
    for secret in SECRETS:
        out = redact(secret.text)
        ours = not _leaks(secret, out) and "[REDACTED" in out
        ours_caught += ours
        if not ours and secret.kind in ISSUE_21_KINDS:
            missed_21.append(secret.kind)
        if not ours and secret.kind in ISSUE_32_KINDS:
            missed_32.append(secret.kind)
        ds = "-"
        if detector:
            reported = "\n".join(detector(secret.text))
            hit = all(p in reported for p in _pieces(secret.value)[:1] + _pieces(secret.value)[-1:])
            ds_caught += hit
            ds = "yes" if hit else "**no**"
        mark = " (issue 21)" if secret.kind in ISSUE_21_KINDS else ""
        mark = " (issue 32)" if secret.kind in ISSUE_32_KINDS else mark
        print(f"| {secret.kind}{mark} | {'yes' if ours else '**no**'} | {ds} |")
    total = len(SECRETS)
    ds_total = f"{ds_caught}/{total}" if detector else "-"
    print(f"| **caught** | **{ours_caught}/{total}** | **{ds_total}** |")
    print(f"\nissue 21 kinds missed by ours: {missed_21 or 'none'}")
    print(f"issue 32 forms missed by ours: {len(missed_32)}/{len(ISSUE_32_KINDS)} {missed_32}")

    print(f"\n| text without secrets | texts | false redactions (ours) | flagged by {ds_name} |")
    print("|---|---:|---:|---:|")
    for name, texts in _benign_sets().items():
        false: list[str] = []
        planted = 0
        for text in texts:
            for span in _redacted_spans(text, redact(text)):
                if name == "demo data" and any(p in span or span in p for p in DEMO_PLANTED):
                    planted += 1
                else:
                    false.append(span)
        flagged = "-"
        if detector:
            flagged = str(sum(1 for text in texts if detector(text)))
        note = f" ({planted} redacted pieces, all of planted credentials)" if planted else ""
        print(f"| {name} | {len(texts):,} | {len(false)}{note} | {flagged} |")
        for span in false[:10]:
            print(f"  false: {span!r}")

    demo = _benign_sets()["demo data"] * 20
    size = sum(len(t) for t in demo)
    start = time.perf_counter()
    for text in demo:
        redact(text)
    elapsed = time.perf_counter() - start
    print(f"\nthroughput: {size / elapsed / 1e6:.2f} MB/s ({len(demo):,} messages, {size:,} chars)")


if __name__ == "__main__":
    main()
