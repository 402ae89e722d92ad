"""The CLI's documentation matches the CLI: every command and option is in docs/cli.md, the
README's CLI section names every command, and the examples of ``--help`` work on the demo data."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from cli_support import run_cli

from langchain_session_recall.cli import app
from langchain_session_recall.demo import demo_sessions

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "cli.md").read_text("utf-8")
README = (ROOT / "README.md").read_text("utf-8")


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = []
    for name, command in sorted(group.commands.items()):
        full = f"{prefix}{name}"
        out.append((full, command))
        if isinstance(command, click.Group):
            out.extend(_commands(command, full + " "))
    return out


def _sections() -> dict[str, str]:
    """``### `session-recall CMD ...` `` sections of docs/cli.md by command (``import jsonl``)."""
    parts = re.split(r"^### `session-recall ([a-z][a-z -]*?)(?: [A-Z\[].*?)?`\n", DOC, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _shared() -> str:
    match = re.search(r"^## Options every command shares\n(.*?)^## ", DOC, re.S | re.M)
    assert match, "docs/cli.md has a section 'Options every command shares'"
    return match.group(1)


def test_every_command_has_a_section() -> None:
    sections = _sections()
    missing = [name for name, _ in _commands(app) if name not in sections]
    assert not missing, f"no '### `session-recall NAME`' section in docs/cli.md for {missing}"


@pytest.mark.parametrize("name", [name for name, _ in _commands(app)])
def test_every_option_is_documented(name: str) -> None:
    command = dict(_commands(app))[name]
    text = _sections().get(name, "") + _shared()
    # an `import KIND` section may also rely on what the `import` section says for all kinds
    if name.startswith("import "):
        text += _sections().get("import", "")
    for param in command.params:
        if not isinstance(param, click.Option) or param.hidden:
            continue
        names = [o for o in param.opts + param.secondary_opts if o.startswith("-")]
        assert any(f"`{o}" in text for o in names), f"{name}: {names} undocumented"


def test_readme_names_every_command() -> None:
    cli = README.split("## CLI", 1)[1].split("\n## ", 1)[0]
    kinds = re.search(r"session-recall import \{([a-z,-]+)\}", cli)
    assert kinds, "the README's CLI section shows `session-recall import {kind,...}`"
    for name, _ in _commands(app):
        if name.startswith("import "):
            assert name.split()[1] in kinds.group(1).split(","), name
        else:
            assert f"session-recall {name}" in cli, name


def test_help_examples_use_ids_of_the_demo_database() -> None:
    ids = {s["id"] for s in demo_sessions()}
    shown: list[str] = []
    for argv in (["--help"], ["show", "--help"]):
        result = run_cli(*argv)
        assert result.code == 0
        shown += re.findall(r"^\s+session-recall show (\S+)", result.out, re.M)
    assert shown
    assert set(shown) <= ids, set(shown) - ids


def test_help_says_the_exit_codes() -> None:
    text = run_cli("--help").out
    for code in ("0 ", "1 ", "2 ", "3 ", "4 "):
        assert code in text
    assert "exit codes" in text.lower()


def test_the_exit_code_table_is_the_one_of_the_code() -> None:
    """docs/cli.md's table has a row per code of ``EXIT_CODES``, in its order, each beginning
    with its meaning there; ``--help`` lists every code."""
    from langchain_session_recall.cli.state import EXIT_CODES

    section = DOC.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| (.*) \|$", section, re.M)
    assert [int(code) for code, _ in rows] == list(EXIT_CODES)
    for code, meaning in rows:
        assert meaning.startswith(EXIT_CODES[int(code)]), code
    shown = run_cli("--help").out
    assert all(
        re.search(rf"^\s+{code}\s+{re.escape(m)}", shown, re.M) for code, m in EXIT_CODES.items()
    )


def test_the_exit_codes_are_defined_in_one_module() -> None:
    """Every ``EXIT_*`` constant is assigned in ``cli/state.py`` and stands in its table; the
    other modules import them."""
    import ast

    from langchain_session_recall.cli import state

    package = ROOT / "langchain_session_recall"
    assigned = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else []
            names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            assigned += [(path.name, n) for n in names if n.startswith("EXIT_")]
    assert {where for where, _ in assigned} == {"state.py"}
    values = {getattr(state, name) for _, name in assigned if name != "EXIT_CODES"}
    assert values == set(state.EXIT_CODES)
