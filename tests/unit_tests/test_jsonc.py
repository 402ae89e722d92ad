"""JSONC settings: comments and trailing commas stripped, strings untouched."""

from __future__ import annotations

import pytest

from langchain_session_recall.importers.jsonc import loads_jsonc


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": "x \\" // y", "b": 1}', {"a": 'x " // y', "b": 1}),  # an escaped quote
        ('{"a": "/* not */"} // end', {"a": "/* not */"}),
        ("[1, /* a, */ 2 /* b */, ]", [1, 2]),
        ("{\n  // only a comment\n}", {}),
        ('{"a": [{"b": 1,},],}', {"a": [{"b": 1}]}),
        ('\ufeff{"a": 1}', {"a": 1}),  # a byte order mark, as editors on Windows write
        (b'{"a": "\xc3\xa9"}', {"a": "é"}),
    ],
)
def test_jsonc_reads_as_gemini_cli_does(text: str | bytes, value: object) -> None:
    assert loads_jsonc(text) == value


@pytest.mark.parametrize("text", ['{"a": 1 /* open', '{"a": "open}', "[1,,]"])
def test_what_is_not_json_even_then_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        loads_jsonc(text)
