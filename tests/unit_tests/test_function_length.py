"""No function over 80 lines outside SQL text (issue 22): a long function is split into named
steps. Counted from ``def`` to its last line (docstring included, decorators not) in the package,
``benchmarks/`` and ``scripts/``; a function whose lines are mostly SQL string constants (a
schema's DDL) is left out."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLACES = ("langchain_session_recall", "benchmarks", "scripts")
MAX_LINES = 80
_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE|WITH|ALTER|DROP)\b")


def _sql_lines(node: ast.AST) -> set[int]:
    """Lines of ``node`` inside a string constant (or f-string) that holds SQL."""
    lines: set[int] = set()
    for sub in ast.walk(node):
        parts = sub.values if isinstance(sub, ast.JoinedStr) else [sub]
        if any(
            isinstance(p, ast.Constant) and isinstance(p.value, str) and _SQL.search(p.value)
            for p in parts
        ):
            end = sub.end_lineno or sub.lineno
            lines.update(range(sub.lineno, end + 1))
    return lines


def long_functions(source: str, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """``(name, lines)`` of each function of ``source`` longer than ``limit`` lines, SQL text
    aside.

    Example:
        >>> long_functions("def f():\\n" + "    x = 1\\n" * 3, limit=3)
        [('f', 4)]
        >>> long_functions("def ddl():\\n    return '''CREATE TABLE t (\\n\\n\\n)'''\\n", limit=3)
        []
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > limit and 2 * len(_sql_lines(node)) < length:
                found.append((node.name, length))
    return found


def test_no_function_is_over_80_lines_outside_sql_text() -> None:
    long = [
        f"{path.relative_to(ROOT)}: {name} ({n} lines)"
        for place in PLACES
        for path in sorted((ROOT / place).rglob("*.py"))
        for name, n in long_functions(path.read_text("utf-8"))
    ]
    assert long == [], "split these into named steps:\n" + "\n".join(long)


def test_the_count_sees_a_long_function() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES))
    assert long_functions(f"def f():\n{body}") == [("f", MAX_LINES + 1)]
