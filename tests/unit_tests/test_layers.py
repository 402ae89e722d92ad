"""Imports point one way: each layer of docs/design.md uses the ones below it, never one above."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "langchain_session_recall"
SURFACES = (
    "retriever",
    "tool",
    "chain",
    "middleware",
    "cli",
    "mcp_server",
    "mcp_http",
    "session_window",
)
NEVER = {
    # a module under this prefix ... may not import a module under any of these
    "core": ("backends", "search", "recall", "summarize", "importers", "recorder", *SURFACES),
    "backends": ("search", "recall", "summarize", "importers", "recorder", *SURFACES),
    # a search finds sessions; ``recall/`` makes results of them, above it
    "search": ("recall", "summarize", "importers", "recorder", *SURFACES),
    # the result as data: below the surfaces and the summarizer, which read it
    "recall": ("summarize", "importers", "recorder", *SURFACES),
    "summarize": ("importers", "recorder", *SURFACES),
}


def _imports(path: Path) -> set[str]:
    """Modules of this package that ``path`` imports, as dotted names under the package."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            if name.startswith("langchain_session_recall."):
                found.add(name.removeprefix("langchain_session_recall."))
    return found


def _layer(dotted: str) -> str:
    return dotted.split(".")[0]


def test_no_module_imports_a_layer_above_it() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        banned = NEVER.get(_layer(module), ())
        wrong += [(module, target) for target in _imports(path) if _layer(target) in banned]
    assert wrong == []


def _module_path(dotted: str) -> Path | None:
    """The file of a module of this package (a package: its ``__init__.py``)."""
    base = PACKAGE.joinpath(*dotted.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


def _reached(start: str) -> set[str]:
    """Every module of this package that importing ``start`` runs, ``start`` included (the
    imports inside functions too: they run when the function is called)."""
    seen, todo = set(), [start]
    while todo:
        dotted = todo.pop()
        path = _module_path(dotted)
        if dotted in seen or path is None:
            continue
        seen.add(dotted)
        parts = dotted.split(".")
        # a submodule runs the ``__init__`` of each package it sits in
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += sorted(_imports(path))
    return seen


def test_the_retriever_does_not_import_the_summarizer() -> None:
    """A search reaches redaction (every text that leaves is redacted), never ``summarize/``:
    redaction lives below the surfaces, in ``core/redaction.py``."""
    reached = _reached("retriever")
    assert "core.redaction" in reached
    assert sorted(m for m in reached if _layer(m) == "summarize") == []


def test_the_package_imports_redaction_from_its_own_place() -> None:
    """``summarize/redaction.py`` only keeps the old import path working for outside code."""
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        wrong += [module for target in _imports(path) if target == "summarize.redaction"]
    assert wrong == []


def test_the_rule_sees_an_import_that_breaks_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from langchain_session_recall.search.pipeline import search_sessions\n")
    assert _layer(next(iter(_imports(bad)))) in NEVER["backends"]


# Inside a layer: the module that joins the others sits above them, never below.
JOINED_BY = {
    # the stages of a search never import the pipeline that runs them in order
    "search.pipeline": (
        "search.candidates",
        "search.correction",
        "search.ranking",
        "search.dense",
        "search.blend",
        "search.time_hints",
        "search.request",
    ),
    # the commands never import the group that joins them, nor its entry point
    "cli.commands": (
        "cli.state",
        "cli.search",
        "cli.show",
        "cli.importing",
        "cli.maintenance",
        "cli.demo",
        "cli.serve",
        "cli.options",
        "cli.output",
    ),
    # what importers share never imports the driver that re-exports it
    "importers.base": (
        "importers.records",
        "importers.report",
        "importers.sources",
        "importers.lines",
    ),
}


def test_no_stage_imports_the_module_that_joins_it() -> None:
    wrong = []
    for top, parts in JOINED_BY.items():
        for part in parts:
            path = PACKAGE.joinpath(*part.split(".")).with_suffix(".py")
            assert path.exists(), part
            above = {top, top.split(".")[0]}  # ``cli`` is the package whose __init__ runs main
            wrong += [(part, t) for t in _imports(path) if t in above]
    assert wrong == []
