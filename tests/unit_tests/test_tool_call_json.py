"""Tool calls are rendered and re-encoded with one shared ``JSONEncoder(ensure_ascii=False)``
instead of ``json.dumps(..., ensure_ascii=False)``, which builds that encoder on every call
(issue 22 item 8): the text, and the errors, must be the same."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_session_recall.recall.tool_calls import _json_text

_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()  # any code point: non-ASCII, lone surrogates, control characters
)
_JSON = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(_JSON)
def test_the_shared_encoder_writes_what_json_dumps_writes(value: Any) -> None:
    assert _json_text(value) == json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize(
    "value", [{1: "int key"}, [math.nan, -0.0, math.inf], "é\u2028\ud800\x00", 10**40]
)
def test_edge_values(value: Any) -> None:
    assert _json_text(value) == json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("value", [{"a": object()}, {(1, 2): "tuple key"}])
def test_what_json_dumps_rejects_is_rejected_alike(value: Any) -> None:
    with pytest.raises(TypeError) as expected:
        json.dumps(value, ensure_ascii=False)
    with pytest.raises(TypeError) as ours:
        _json_text(value)
    assert str(ours.value) == str(expected.value)


def test_a_circular_value_is_rejected_alike() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        _json_text(loop)
