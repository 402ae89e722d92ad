"""``session-recall search`` and ``recent`` with ``--project`` and ``--agent`` (issue 35, item
4), on both backends: a relative ``--project`` is the directory it names from where the command
runs; panels, tables and JSON show where each session happened and how to reopen it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import run_cli
from store_targets import StoreFactory

T0 = 1_790_000_000.0


def _db(store_factory: StoreFactory, root: Path) -> str:
    target = store_factory.target()
    rows = [
        ("api", root / "api", "main", "codex"),
        ("api-web", root / "api" / "web", None, "claude-code"),
        ("apis", root / "apis", None, "codex"),
    ]
    with target.open() as store:
        for n, (sid, project, branch, agent) in enumerate(rows):
            store.add_session(
                sid, started_at=T0 + n, project=str(project), git_branch=branch, agent=agent
            )
            store.add_messages(
                sid, [{"role": "user", "content": f"walrus {sid}", "timestamp": T0 + n}]
            )
    return target.db


def _ids(out: str) -> set[str]:
    return {r["id"] for r in json.loads(out)}


def test_search_and_recent_keep_to_a_project_and_agents(
    store_factory: StoreFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _db(store_factory, tmp_path)
    found = run_cli("search", "walrus", "--db", db, "--project", str(tmp_path / "api"), "--json")
    assert found.code == 0 and _ids(found.out) == {"api", "api-web"}
    (tmp_path / "api").mkdir()
    monkeypatch.chdir(tmp_path / "api")
    here = run_cli("search", "walrus", "--db", db, "--project", ".", "--json", "-k", "5")
    assert _ids(here.out) == {"api", "api-web"}
    codex = run_cli("recent", "--db", db, "--agent", "Codex", "--json")
    assert _ids(codex.out) == {"api", "apis"}
    both = run_cli("recent", "--db", db, "--project", "..", "--agent", "claude-code", "--json")
    assert _ids(both.out) == {"api-web"}
    none = run_cli("search", "walrus", "--db", db, "--agent", "gemini", "--json")
    assert none.code != 0 and json.loads(none.out) == []


def test_results_show_where_and_the_resume_command(
    store_factory: StoreFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # a long temporary path on one line
    db = _db(store_factory, tmp_path)
    api = str(tmp_path / "api")
    args = ("--db", db, "--project", api, "--agent", "codex", "--json")
    (found,) = json.loads(run_cli("search", "walrus", *args).out)
    result = found["metadata"]
    assert (result["project"], result["git_branch"], result["agent"]) == (api, "main", "codex")
    assert result["resume"] == f"cd {api} && codex resume api"
    panel = run_cli("search", "walrus", "--db", db, "--project", api, "--agent", "codex").out
    assert f"{api} (main) · codex" in panel and "codex resume api" in panel
    table = run_cli("recent", "--db", db, "--agent", "claude-code").out
    assert "claude-code" in table and "claude --resume api-web" in table


def test_show_names_where_the_session_happened(
    store_factory: StoreFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    db = _db(store_factory, tmp_path)
    shown = run_cli("show", "api", "--db", db, "--no-pager").out
    assert f"{tmp_path / 'api'} (main) · codex" in shown
    assert f"cd {tmp_path / 'api'} && codex resume api" in shown
    data = json.loads(run_cli("show", "api", "--db", db, "--json").out)
    assert (data["session"]["project"], data["session"]["agent"]) == (
        str(tmp_path / "api"),
        "codex",
    )
