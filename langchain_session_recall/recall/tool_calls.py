"""An assistant's tool calls as content (pure): their arguments read, flattened and rendered.

A stored tool call is in OpenAI's wire format (``{"function": {"name": ..., "arguments":
"<JSON text>"}}``) or LangChain's (``{"name": ..., "args": {...}}``); another writer may have
stored anything. :func:`parse_tool_calls` reads either, never raises, and keeps arguments that
are not a JSON object as one unnamed value. :func:`render_tool_call` is how transcripts show a
call: short arguments inline in the tag, long or multi-line ones as fenced code blocks::

    [ASSISTANT #3 → write_file(path="rename_photos.py")]:
    ```python
    #!/usr/bin/env python3
    ...
    ```

The full-text index holds a call's name and its string values, flattened, each capped at
4,096 characters; the stores compute that text in SQL (``backends/*/schema.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_session_recall.recall import tags

__all__ = [
    "ARG_CLIP_MARKER",
    "ARG_INLINE_CHARS",
    "ARG_SHOW_CHARS",
    "ToolCall",
    "call_body",
    "call_tag",
    "clip_argument",
    "map_arguments",
    "parse_tool_calls",
    "redact_tool_calls",
    "render_tool_call",
]

ARG_INLINE_CHARS = 80
"""A one-line string argument up to this long is shown inline: ``(path="a.py")``."""
ARG_SHOW_CHARS = 3_000
"""A longer argument is shown as its first 2,400 and last 500 characters (a 1,300-character
script whole; a 100 KB file written by an agent does not fill the window)."""
_SHOW_HEAD = 2_400
_SHOW_TAIL = 500
ARG_CLIP_MARKER = "\n...[{n} characters not shown]...\n"

# A code block's language from a path argument's extension, or from the tool's name.
_LANGUAGES = {
    "py": "python",
    "sh": "bash",
    "bash": "bash",
    "js": "javascript",
    "ts": "typescript",
    "sql": "sql",
    "json": "json",
    "yaml": "yaml",
    "yml": "yaml",
    "toml": "toml",
    "md": "markdown",
    "rs": "rust",
    "go": "go",
    "ini": "ini",
    "conf": "nginx",
    "html": "html",
    "css": "css",
}
_SHELL_TOOLS = frozenset({"terminal", "bash", "shell", "run_command", "execute_command", "exec"})
# ``json.dumps(value, ensure_ascii=False)`` builds this encoder on every call (only the
# all-defaults call reuses one); the same encoder, built once, gives the same text.
_json_text = json.JSONEncoder(ensure_ascii=False).encode


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call: the function's name and its arguments, in the order they were written.

    ``arguments`` holds ``(name, value)`` pairs; arguments that were not a JSON object (plain
    text, a list) are one pair with the name ``""``.
    """

    name: str
    arguments: tuple[tuple[str, Any], ...] = ()

    @property
    def text_arguments(self) -> list[tuple[str, str]]:
        """The arguments as text (a value that is not a string as JSON)."""
        return [(k, _as_text(v)) for k, v in self.arguments]


def _decoded(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            return raw
    return raw


def parse_tool_calls(calls: Iterable[Any] | None) -> list[ToolCall]:
    """The calls of a stored ``tool_calls`` list, in either format; junk entries are skipped.

    Example:
        >>> parse_tool_calls([{"function": {"name": "ls", "arguments": '{"path": "/tmp"}'}},
        ...                   {"name": "echo", "args": {"text": "hi"}}, 42])
        [ToolCall(name='ls', arguments=(('path', '/tmp'),)),
         ToolCall(name='echo', arguments=(('text', 'hi'),))]
    """
    out: list[ToolCall] = []
    for call in calls or ():
        if not isinstance(call, Mapping):
            continue
        fn = call.get("function")
        source = fn if isinstance(fn, Mapping) else call
        name = source.get("name")
        raw = source.get("arguments", source.get("args", call.get("args")))
        args = _decoded(raw)
        if isinstance(args, Mapping):
            pairs = tuple((str(k), v) for k, v in args.items())
        elif args in (None, "", [], {}):
            pairs = ()
        else:
            pairs = (("", args),)
        named = name if isinstance(name, str) and name else "tool"
        out.append(ToolCall(name=named, arguments=pairs))
    return out


def clip_argument(text: str) -> str:
    """``text`` if at most :data:`ARG_SHOW_CHARS` long, else its head and tail around a marker
    that says how much was left out.

    Example:
        >>> clip_argument("x" * 3_100).count("[200 characters not shown]")
        1
    """
    if len(text) <= ARG_SHOW_CHARS:
        return text
    hidden = len(text) - _SHOW_HEAD - _SHOW_TAIL
    return text[:_SHOW_HEAD] + ARG_CLIP_MARKER.format(n=f"{hidden:,}") + text[-_SHOW_TAIL:]


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return _json_text(value)
    except (TypeError, ValueError):
        return str(value)


def _inline(value: Any) -> bool:
    text = _as_text(value)
    return len(text) <= ARG_INLINE_CHARS and "\n" not in text


def _language(call: ToolCall) -> str:
    for _, value in call.arguments:
        if isinstance(value, str) and _inline(value) and "." in value.rsplit("/", 1)[-1]:
            language = _LANGUAGES.get(value.rsplit(".", 1)[-1].lower())
            if language:
                return language
    return "bash" if call.name.lower() in _SHELL_TOOLS else ""


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return fence


def call_tag(call: ToolCall) -> str:
    """A call's part of its tag: the name and its short arguments inline
    (`` → write_file(path="rename.py")``; the long ones are :func:`call_body`).

    Example:
        >>> call_tag(ToolCall("terminal", (("command", "ls ~/Pictures"),)))
        ' → terminal(command="ls ~/Pictures")'
    """
    inline = [(k, v) for k, v in call.arguments if _inline(v)]
    shown = ", ".join(f"{k}={_json_text(v)}" if k else _json_text(v) for k, v in inline)
    return f" → {call.name}({shown})"


def call_body(call: ToolCall, *, clip: Callable[[str], str] = clip_argument) -> str:
    """A call's long or multi-line arguments, each as a fenced code block (``key:`` before it
    when there are several); ``""`` when every argument fits in :func:`call_tag`."""
    blocks = [(k, v) for k, v in call.arguments if not _inline(v)]
    language = _language(call)
    lines = []
    for key, value in blocks:
        text = clip(_as_text(value)).rstrip("\n")
        fence = _fence(text)
        if key and len(blocks) > 1:
            lines.append(f"{key}:")
        lines.append(f"{fence}{language}\n{text}\n{fence}")
    return "\n".join(lines)


def render_tool_call(
    call: ToolCall, tag: str, *, clip: Callable[[str], str] = clip_argument
) -> str:
    """A call as transcripts show it: ``[<tag> → name(key="value")]:``, then each long or
    multi-line argument as a fenced code block (``key:`` before it when there are several).

    ``tag`` is the message's tag without brackets (``ASSISTANT #3``); ``clip`` shortens a long
    argument (default :func:`clip_argument`).

    Example:
        >>> call = ToolCall("write_file", (("path", "rename.py"), ("content", "import os\\n")))
        >>> print(render_tool_call(call, "ASSISTANT #3"))
        [ASSISTANT #3 → write_file(path="rename.py")]:
        ```python
        import os
        ```
    """
    body = call_body(call, clip=clip)
    return tags.tag(tag, call=call_tag(call)) + (f"\n{body}" if body else "")


def map_arguments(calls: Iterable[Any], change: Callable[[str], str]) -> list[dict[str, Any]]:
    """``calls`` in OpenAI's format with ``change`` applied to each argument's text (a value
    that is not a string becomes its JSON text first).

    Example:
        >>> calls = [{"name": "sh", "args": {"cmd": "ls -la"}}]
        >>> map_arguments(calls, str.upper)[0]["function"]
        {'name': 'sh', 'arguments': '{"cmd": "LS -LA"}'}
    """
    out: list[dict[str, Any]] = []
    for call in parse_tool_calls(calls):
        changed = {k: change(v) for k, v in call.text_arguments}
        arguments = changed.get("", "") if list(changed) == [""] else changed
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        out.append({"type": "function", "function": {"name": call.name, "arguments": text}})
    return out


def redact_tool_calls(
    calls: list[dict[str, Any]], redact: Callable[[str], str]
) -> list[dict[str, Any]]:
    """``calls`` with ``redact`` applied to every string inside, JSON-encoded arguments decoded
    first (a secret escaped inside JSON text, ``"-----BEGIN ...\\\\n"``, is found as written).

    Example:
        >>> calls = [{"function": {"name": "sh", "arguments": '{"cmd": "export K=secret"}'}}]
        >>> redact_tool_calls(calls, lambda s: s.replace("secret", "[R]"))[0]["function"]
        {'name': 'sh', 'arguments': '{"cmd": "export K=[R]"}'}
    """

    def clean(value: Any, key: str | None = None) -> Any:
        if isinstance(value, str):
            if key in {"arguments", "args"}:
                decoded = _decoded(value)
                if not isinstance(decoded, str):
                    return _json_text(clean(decoded))
            return redact(value)
        if isinstance(value, Mapping):
            return _paired(value, {k: clean(v, k) for k, v in value.items()}, redact)
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return [clean(call) for call in calls]


_NAME_KEYS = ("name", "key")
_PROBE = "probe-value"


def _paired(
    raw: Mapping[str, Any], cleaned: dict[str, Any], redact: Callable[[str], str]
) -> dict[str, Any]:
    """``cleaned`` with its ``value`` redacted when its ``name`` (or ``key``) names a secret:
    ``{"name": "OPENAI_API_KEY", "value": "..."}`` splits an assignment over two arguments,
    and each alone looks harmless (issue 32 item 7). A name names a secret when ``redact``
    changes the value of ``NAME=probe-value``."""
    value = cleaned.get("value")
    name = next((raw[k] for k in _NAME_KEYS if isinstance(raw.get(k), str)), None)
    if not isinstance(value, str) or not value or name is None:
        return cleaned
    probe = f"{name.strip()}={_PROBE}"
    if redact(probe).endswith(_PROBE) or value.startswith("[REDACTED"):
        return cleaned
    return {**cleaned, "value": "[REDACTED]"}
