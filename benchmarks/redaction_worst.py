"""The worst input per redaction rule, timed at two sizes (issue 32 item 3).

A rule that is quadratic in a line shows it on text built from one short unit repeated:
``"mysql " * n + "x-p"`` made ``session-recall search --json`` take 39 s, ``"TOKEN" * n`` 78 s a
call. For every rule this script

1. searches the units of ``tests/reliability/secrets_corpus.py:HOSTILE_UNITS`` and each of the
   rule's hints followed by a separator (``"sk-" + "."``), repeated to ``--search-size``
   characters and followed by ``"x-p"``, for the one that takes this rule longest
   (``redact_secrets(text, (rule,))``, CPU time, best of two; a unit slower than ``--search-cap`` ends
   the search);
2. times that input at ``--sizes`` (50 KB and 200 KB) with the rule alone and with all the
   default rules; linear work grows 4 times from 50 to 200 KB, quadratic 16 times.

    python benchmarks/redaction_worst.py [--rules-from PATH] [--budget SECONDS]

``--rules-from``: import the rules from another checkout (e.g. main, to see the quadratic
ones). A measurement whose estimate (the previous size's time times the square of the size
ratio) exceeds ``--budget`` is not run; the estimate is printed with ``~``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

_SEPARATORS = ("", " ", "-", "_", "=", ":", "/", ".", "@", "a", "A", "0", "\\n", "|", '"')


def _seconds(redact: Callable[..., str], text: str, rules: Any, repeat: int = 2) -> float:
    """CPU seconds of ``redact(text, rules)``, best of ``repeat`` (CPU time: the machine is
    shared, and its load would show in time on the clock)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        redact(text, rules)
        best = min(best, time.process_time() - start)
    return best


def _candidates(rule: Any, units: Sequence[str]) -> list[str]:
    out = list(units)
    for hint in rule.hints:
        out += [hint + sep for sep in _SEPARATORS]
    return list(dict.fromkeys(out))


def _cell(seconds: float | None, estimate: float | None) -> str:
    if seconds is not None:  # an estimate is printed for a measurement not run
        return f"{seconds * 1000:,.1f} ms" if seconds < 10 else f"{seconds:,.0f} s"
    assert estimate is not None
    return f"~{estimate:,.0f} s (not run)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules-from", help="import the rules from this checkout instead")
    parser.add_argument("--search-size", type=int, default=4_000)
    parser.add_argument("--sizes", type=int, nargs=2, default=(50_000, 200_000))
    parser.add_argument("--budget", type=float, default=20.0, help="seconds per measurement")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument(
        "--search-cap", type=float, default=0.5, help="seconds: a unit this slow ends a search"
    )
    args = parser.parse_args()
    sys.path.insert(0, args.rules_from or str(REPO))
    # the old path: it names the rules in this checkout and in an older one (--rules-from)
    redaction = importlib.import_module("langchain_session_recall.summarize.redaction")
    from reliability.secrets_corpus import HOSTILE_UNITS, hostile_text

    rules = redaction.DEFAULT_SECRET_PATTERNS
    redact = redaction.redact_secrets
    small, large = args.sizes
    print(f"rules: {Path(redaction.__file__).parents[2]}; load average {os.getloadavg()[0]:.1f}")
    print(
        f"\n| rule | worst unit (x n + 'x-p') | {small // 1000} KB: rule / all rules "
        f"| {large // 1000} KB: rule / all rules | ratio |"
    )
    print("|---|---|---:|---:|---:|")
    for rule in rules:
        timed: dict[str, float] = {}
        for unit in _candidates(rule, HOSTILE_UNITS):
            timed[unit] = _seconds(redact, hostile_text(unit, args.search_size), (rule,))
            if timed[unit] > args.search_cap:
                break  # far from linear already: this one is shown
        worst = max(timed, key=timed.__getitem__)
        cells = []
        for subset in ((rule,), rules):
            seconds: list[float | None] = []
            previous, previous_size = timed[worst], args.search_size
            for size in (small, large):
                estimate = previous * (size / previous_size) ** 2
                if estimate > args.budget:
                    seconds.append(None)
                    cells.append(_cell(None, estimate))
                    previous, previous_size = estimate, size
                    continue
                else:
                    previous = _seconds(redact, hostile_text(worst, size), subset, args.repeat)
                    seconds.append(previous)
                    cells.append(_cell(previous, None))
                previous_size = size
            first, second = seconds
            cells.append(f"{second / first:.1f}" if first and second else "-")
        a, b, r, c, d, t = cells
        print(f"| {rule.name} | `{worst!r}` | {a} / {c} | {b} / {d} | {r} / {t} |")

    print("\nthe issue's inputs, all rules:")
    for unit, size in (("mysql ", 192_000), ("TOKEN", 192_000)):
        text = hostile_text(unit, size)
        first = _seconds(redact, hostile_text(unit, size // 4), None, repeat=1)
        if first * 16 > args.budget:
            print(f"  {unit!r} * n, {size // 1000} KB: ~{first * 16:,.0f} s (not run)")
            continue
        print(f"  {unit!r} * n, {size // 1000} KB: {_seconds(redact, text, None) * 1000:,.1f} ms")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
