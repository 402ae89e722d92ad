"""JSON with comments (JSONC), as agents write their settings: Gemini CLI reads its
``settings.json`` through ``strip-json-comments``, so users put ``//`` and ``/* */`` comments
(and trailing commas) in it, which :func:`json.loads` refuses."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["loads_jsonc", "strip_jsonc"]

_TOKENS = re.compile(
    r'("(?:[^"\\]|\\.)*")'  # a string: kept as it is, whatever it holds
    r"|//[^\n]*"  # a line comment
    r"|/\*.*?(?:\*/|\Z)"  # a block comment (one left open runs to the end)
    r"|,(?=(?:\s|//[^\n]*|/\*.*?\*/)*[}\]])",  # a trailing comma
    re.S,
)


def strip_jsonc(text: str) -> str:
    """``text`` without its comments and trailing commas, strings untouched (pure): plain
    JSON when ``text`` was JSONC.

    Example:
        >>> strip_jsonc('{"url": "https://x//y", "n": [1, 2,/* two */], // mine\\n}')
        '{"url": "https://x//y", "n": [1, 2 ]  \\n}'
    """
    return _TOKENS.sub(lambda m: m.group(1) or (" " if m.group(0)[0] == "/" else ""), text)


def loads_jsonc(text: str | bytes) -> Any:
    """Parse JSON that may hold comments and trailing commas.

    Raises:
        ValueError: it is not JSON even then (``json.JSONDecodeError``; ``UnicodeDecodeError``
            for bytes that are not UTF-8).

    Example:
        >>> loads_jsonc('{"general": {"sessionRetention": {"enabled": true,}}, // mine\\n}')
        {'general': {'sessionRetention': {'enabled': True}}}
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8-sig")
    return json.loads(strip_jsonc(text.removeprefix("\ufeff")))
