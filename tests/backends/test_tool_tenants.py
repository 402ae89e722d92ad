"""A tool without a tenant on a multi-tenant store (issue 18 §7), on both backends."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from langchain_session_recall import create_session_search_tool


def _users(store: Any, *users: str | None) -> None:
    for n, user in enumerate(users):
        store.add_session(f"s{n}", user_id=user)
        store.add_messages(f"s{n}", [{"role": "user", "content": f"budget of {user}"}])


def test_count_users_is_cheap_and_counts_up_to_its_limit(store: Any) -> None:
    assert store.count_users() == 0
    _users(store, None, "ana", "ana")
    assert store.count_users() == 1
    store.add_session("x", user_id="bob")
    store.add_session("y", user_id="cid")
    assert store.count_users() == 2  # stops counting at the limit (default 2)
    assert store.count_users(up_to=10) == 3


def test_a_tool_without_user_id_on_a_shared_store_warns_once(
    store: Any, caplog: pytest.LogCaptureFixture
) -> None:
    _users(store, "ana", "bob")
    with caplog.at_level(logging.WARNING, logger="langchain_session_recall.tool"):
        create_session_search_tool(store)
        create_session_search_tool(store)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "user_id" in warnings[0].getMessage() and "require_user_id" in warnings[0].getMessage()


def test_no_warning_for_one_user_or_a_scoped_tool(
    store: Any, caplog: pytest.LogCaptureFixture
) -> None:
    _users(store, "ana", "ana", None)
    with caplog.at_level(logging.WARNING, logger="langchain_session_recall.tool"):
        create_session_search_tool(store)
        store.add_session("b", user_id="bob")
        create_session_search_tool(store, user_id="ana")
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_require_user_id_makes_a_missing_tenant_an_error(store: Any) -> None:
    with pytest.raises(ValueError, match="user_id"):
        create_session_search_tool(store, require_user_id=True)
    tool = create_session_search_tool(store, user_id="ana", require_user_id=True)
    assert tool.retriever.user_id == "ana"
