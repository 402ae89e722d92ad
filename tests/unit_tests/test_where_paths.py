"""The pure rules of where a session happened (``core/where.py``): how a project directory is
kept and matched, and which command reopens a session."""

from __future__ import annotations

import pytest

from langchain_session_recall.core.where import (
    agent_list,
    project_path,
    project_prefix,
    resume_command,
    stored_project,
)
from langchain_session_recall.errors import InvalidArgumentError


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("/src/api", "/src/api"),
        ("/src/api///", "/src/api"),
        (" /src/api ", "/src/api"),
        ("/", "/"),
        ("///", "/"),
        ("C:\\src\\api\\", "C:\\src\\api"),
        ("C:\\", "C:\\"),
        ("", None),
        (None, None),
    ],
)
def test_a_directory_is_kept_without_its_trailing_separator(
    given: str | None, kept: str | None
) -> None:
    assert stored_project(given) == kept


def test_a_project_filter_is_an_absolute_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/me")
    assert project_path("~/src/api/") == "/home/me/src/api"
    assert project_path("/src//api/./web/..") == "/src/api"
    assert project_path("D:/work") == "D:\\work"
    assert project_path("  ") is None
    for relative in ("src", "./src", "..", "~other-user-that-does-not-exist-xyz/src"):
        with pytest.raises(InvalidArgumentError, match="not an absolute directory"):
            project_path(relative)


def test_the_prefix_ends_with_a_separator_so_a_sibling_never_matches() -> None:
    prefix = project_prefix("/a/b")
    assert "/a/b/c".startswith(prefix) and not "/a/bc".startswith(prefix)
    assert project_prefix("/") == "/"
    assert project_prefix("C:\\src") == "C:\\src\\"


def test_agent_names_are_folded_and_listed_once() -> None:
    assert agent_list("codex, Claude-Code ,,codex") == ("codex", "claude-code")
    assert agent_list(["gemini", " ", "GEMINI"]) == ("gemini",)
    assert agent_list("") == ()


def test_the_resume_command_quotes_what_it_is_given() -> None:
    assert resume_command("codex", "t1") == "codex resume t1"
    assert resume_command("gemini", "g1", "/src") == "cd /src && gemini --resume g1"
    assert resume_command("opencode", "ses_1", None) == "opencode --session ses_1"
    assert resume_command("claude-code", "x; rm -rf ~", "/a b") == (
        "cd '/a b' && claude --resume 'x; rm -rf ~'"
    )
    assert resume_command("cursor", "c1") is None
    assert resume_command(None, "c1") is None
    assert resume_command("codex", "") is None
