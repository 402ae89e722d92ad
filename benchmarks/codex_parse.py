"""What a Codex import's worker process spends a message: reading and parsing the rollouts
(``codex_pipe.read_batch``: each rollout read whole, its messages made rows) and pickling each
batch as it is handed back, in CPU seconds; this checkout against another one (``--against``,
e.g. a copy of main made with ``git archive``), runs alternated, each in a fresh process.

The writer's side is not here (``benchmarks/codex_import.py`` times whole imports); the
unpickling of each batch (what the importing process does with it) is shown beside.

    python benchmarks/codex_parse.py --home /tmp/parsehome [--against /tmp/parse-base]
                                     [--runs 5] [--resume]

Make the home with ``benchmarks.codex_import.write_home`` (100,000 messages, 60 a thread:
1,667 rollouts, 129 MB).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def measure(home: str, resume: bool) -> dict[str, Any]:
    """One pass over every rollout of ``home`` (in this process, with the package it
    imports): the CPU seconds of the reads, of pickling them, of unpickling them."""
    import pickle

    import langchain_session_recall
    from langchain_session_recall.importers.codex import rollout_files
    from langchain_session_recall.importers.codex_pipe import Batch, read_batch
    from langchain_session_recall.importers.report import ImportReport

    files = rollout_files(Path(home), report=ImportReport("codex"))
    read = dumps = loads = 0.0
    size = messages = 0
    for i in range(0, len(files), 64):
        batch = Batch(home, False, resume, 64 * 2**20, [[str(f)] for f in files[i : i + 64]])
        start = time.process_time()
        done = read_batch(batch)
        read += time.process_time() - start
        start = time.process_time()
        data = pickle.dumps(done, protocol=5)
        dumps += time.process_time() - start
        start = time.process_time()
        pickle.loads(data)
        loads += time.process_time() - start
        size += len(data)
        messages += sum(
            len(r.thread.messages) for t in done if isinstance(t, list) for r in t if r.thread
        )
    return {
        "package": str(Path(langchain_session_recall.__file__).parents[1]),
        "messages": messages,
        "read": read,
        "dumps": dumps,
        "loads": loads,
        "mb": size / 2**20,
    }


def _run(package: Path, home: str, resume: bool) -> dict[str, Any]:
    code = (  # (this file run by its path: the other checkout may not have it)
        f"import sys, json, runpy; sys.path.insert(0, {str(package)!r})\n"
        f"measure = runpy.run_path({__file__!r})['measure']\n"
        f"print(json.dumps(measure({home!r}, {resume!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(out.stdout)
    if Path(result["package"]).resolve() != package.resolve():
        raise SystemExit(f"{package} was not the package imported: {result['package']}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", required=True)
    parser.add_argument("--against", type=Path, help="another checkout, run alternately")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--resume", action="store_true", help="keep resume points (cursor)")
    args = parser.parse_args()
    packages = [ROOT] + ([args.against] if args.against else [])
    runs: dict[Path, list[dict[str, Any]]] = {p: [] for p in packages}
    for _ in range(args.runs):
        for package in packages:
            runs[package].append(_run(package, args.home, args.resume))
    worker: dict[Path, float] = {}
    for package, results in runs.items():
        cpu = [r["read"] + r["dumps"] for r in results]
        worker[package] = statistics.median(cpu)
        per = worker[package] / results[0]["messages"] * 1e6
        print(
            f"{package}: worker CPU median {worker[package]:.3f} s (min {min(cpu):.3f}; read "
            f"{statistics.median(r['read'] for r in results):.3f} + pickle "
            f"{statistics.median(r['dumps'] for r in results):.3f}), {per:.1f} us a message; "
            f"unpickled in {statistics.median(r['loads'] for r in results):.3f} s; "
            f"{results[0]['mb']:.1f} MB pickled; {results[0]['messages']:,} messages"
        )
    if args.against:
        print(f"this / {args.against}: {worker[ROOT] / worker[args.against]:.3f}x worker CPU")


if __name__ == "__main__":
    main()
