"""Start-up of ``session-recall search`` on a small database, against ``python -c "import sqlite3"``.

Usage (from the repository root)::

    python benchmarks/cli_startup.py              # 21 paired runs of each command
    python benchmarks/cli_startup.py --runs 41 --db path/to/small.db --query nginx

What it measures, whole processes timed from outside (``subprocess`` + ``os.wait4``):

* ``B``: ``python -c "import sqlite3"``: the floor of any Python command that opens SQLite;
* ``A``: ``python -m langchain_session_recall search QUERY --db DB`` with ``--json`` and with
  panels (rich, written to a pipe), on the 18 demo sessions;
* the search itself: the same command run again inside one warm process (imports done), so
  ``B + search`` is what a command could cost with nothing else loaded.

Runs alternate A, B, A, B (a drifting machine affects both) and figures are medians. The goal
(issue 16) is ``A <= 2 x (B + search)``; the ratio is printed whether it is met or not. Then
``python -X importtime`` of the command says what the start-up time is spent on beyond the
floor's imports, by the package that caused it (the smallest self time of several runs, so a
noisy run does not count).

Bytecode is compiled first (``compileall``), as an installed package has it: under
``PYTHONDONTWRITEBYTECODE=1`` an editable checkout would otherwise recompile every module on
every run, which no installed copy does.
"""

from __future__ import annotations

import argparse
import collections
import compileall
import io
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_session_recall.cli import main  # noqa: E402
from langchain_session_recall.demo import build_demo_store  # noqa: E402


def _timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{argv} exited {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def _paired(a: list[str], b: list[str], runs: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = collections.defaultdict(list)
    _timed(a), _timed(b)  # warm the file cache
    for _ in range(runs):
        for name, argv in (("a", a), ("b", b)):
            wall, cpu = _timed(argv)
            out[f"{name}_wall"].append(wall)
            out[f"{name}_cpu"].append(cpu)
    out["ratio_wall"] = [x / y for x, y in zip(out["a_wall"], out["b_wall"], strict=True)]
    out["ratio_cpu"] = [x / y for x, y in zip(out["a_cpu"], out["b_cpu"], strict=True)]
    return out


def _search_itself(args: list[str], runs: int) -> float:
    """Median CPU seconds of the command in a warm process (everything already imported)."""
    main(args, out=io.StringIO())
    times = []
    for _ in range(runs):
        start = time.process_time()
        main(args, out=io.StringIO())
        times.append(time.process_time() - start)
    return statistics.median(times)


_IMPORT = re.compile(r"import time:\s+(\d+) \|\s+\d+ \|(\s*)(\S+)")
_OURS = ("langchain_session_recall", "click", "rich")


def _self_times(argv: list[str], runs: int) -> tuple[dict[str, int], dict[str, str]]:
    """Each module's smallest self import time (us) over ``runs``, and who imported it."""
    best: dict[str, int] = {}
    parent: dict[str, str] = {}
    for _ in range(runs):
        err = subprocess.run(
            [argv[0], "-X", "importtime", *argv[1:]], capture_output=True, text=True, check=False
        ).stderr
        lines = _IMPORT.findall(err)  # children are listed before their parent, indented more
        for i, (micros, indent, module) in enumerate(lines):
            best[module] = min(best.get(module, 1 << 62), int(micros))
            for _, outer, name in lines[i + 1 :]:
                if len(outer) < len(indent):
                    parent.setdefault(module, name)
                    break
    return best, parent


def _import_breakdown(argv: list[str], floor: list[str], runs: int = 5) -> list[tuple[str, float]]:
    """Import milliseconds beyond the floor's, by the package that caused them.

    A standard-library module counts for the first of our packages (ours, click, rich) that
    imported it, directly or through other standard modules (``logging`` for the SQLite store).
    """
    base, _ = _self_times(floor, runs)
    best, parent = _self_times(argv, runs)
    groups: collections.Counter[str] = collections.Counter()
    for module, micros in best.items():
        if module in base:
            continue
        owner, seen = module, set()
        while owner.split(".")[0] not in _OURS and owner in parent and owner not in seen:
            seen.add(owner)
            owner = parent[owner]
        top = owner.split(".")[0]
        if top not in _OURS:
            top = "(other)"
        elif owner != module:
            top += " (standard modules it imports)"
        groups[top] += micros
    return [(name, micros / 1000) for name, micros in groups.most_common()]


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--db", help="a small session database (default: the demo sessions)")
    parser.add_argument("--query", default="pool_mode")
    opts = parser.parse_args()

    compileall.compile_dir(ROOT / "langchain_session_recall", quiet=1)
    tmp = tempfile.TemporaryDirectory()
    db = opts.db or str(Path(tmp.name) / "demo.db")
    if not opts.db:
        build_demo_store(db).close()
    py = sys.executable
    floor = [py, "-c", "import sqlite3"]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {opts.runs} paired runs")
    print(f"database: {db}; query: {opts.query!r}\n")
    head = f"{'command':<28}{'A wall ms':>10}{'A cpu ms':>10}{'B cpu ms':>10}"
    head += f"{'search ms':>10}{'A/B cpu':>9}{'A/(B+s)':>9}"
    print(head)
    for label, extra in (("search --json", ["--json"]), ("search (panels)", [])):
        args = ["search", opts.query, "--db", db, *extra]
        timings = _paired([py, "-m", "langchain_session_recall", *args], floor, opts.runs)
        search_cpu = _search_itself(args, opts.runs)
        a_cpu = statistics.median(timings["a_cpu"])
        b_cpu = statistics.median(timings["b_cpu"])
        print(
            f"{label:<28}{statistics.median(timings['a_wall']) * 1000:>10.0f}"
            f"{a_cpu * 1000:>10.0f}{b_cpu * 1000:>10.0f}{search_cpu * 1000:>10.1f}"
            f"{statistics.median(timings['ratio_cpu']):>9.2f}"
            f"{a_cpu / (b_cpu + search_cpu):>9.2f}"
        )
    print("\ngoal: A/(B+s) <= 2.00  (A: the command; B: python -c 'import sqlite3'; s: the search)")
    command = [py, "-m", "langchain_session_recall", "search", "x", "--db", db]
    for label, extra in (("search --json", ["--json"]), ("search (panels)", [])):
        rows = _import_breakdown([*command, *extra], floor)
        total = sum(ms for _, ms in rows)
        print(f"\nimport time of `{label}` beyond the floor's: {total:.1f} ms (smallest of 5 runs)")
        for name, ms in rows:
            if ms >= 0.5:
                print(f"  {ms:7.1f}  {name}")
    tmp.cleanup()


if __name__ == "__main__":
    main_()
