"""Test helpers for code built on this library: a conformance suite for session stores.

:class:`SessionBackendTests` is the contract of
:class:`~langchain_session_recall.backends.base.SessionBackend` as a pytest test class: subclass
it in your tests, say how to open your store, and pytest runs every check on it. The SQLite and
PostgreSQL stores pass it (``tests/backends/test_conformance.py``).

This package needs pytest (``pip install pytest``); nothing else in the library imports it.
"""

from __future__ import annotations

from langchain_session_recall.testing.backend_suite import (
    SessionBackendTests,
    StoreOpener,
    set_parent_directly,
)

__all__ = ["SessionBackendTests", "StoreOpener", "set_parent_directly"]
