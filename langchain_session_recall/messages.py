"""Conversion of LangChain messages and plain dicts into ``messages`` rows (pure)."""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from langchain_session_recall.errors import InvalidMessageError

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

__all__ = [
    "ROLES",
    "MessageLike",
    "MessageRow",
    "decode_content",
    "is_finite_number",
    "storable_text",
    "to_row",
]

MessageLike: TypeAlias = "BaseMessage | Mapping[str, Any] | MessageRow"
"""What the stores accept as a message: a LangChain message, a dict, or a row :func:`to_row`
made already (see :func:`to_row`)."""

ROLES = frozenset({"user", "assistant", "tool", "system"})
"""Roles a stored message may have (the Hermes vocabulary)."""

ROLE_ALIASES = {"human": "user", "ai": "assistant", "function": "tool", "developer": "system"}
"""Other names of the stored roles, as other tools write them."""
_STORED_ROLES = {role: role for role in ROLES}
"""Each stored role to itself: one string object a role, whatever string a message gave
(rows pickle and unpickle it once; ``_normalize_role`` makes a new one each call)."""
_JSON_PREFIX = "\x00json:"
_JSON = json.JSONEncoder()
"""What ``json.dumps(value)`` encodes with, without its layer of argument checks."""
_JSON_UNICODE = json.JSONEncoder(ensure_ascii=False)
"""``json.dumps(value, ensure_ascii=False)``'s encoder, made once (``dumps`` makes one a call)."""
_string_json: Callable[[str], str] = json.encoder.encode_basestring
"""A string as ``_JSON_UNICODE`` writes it (the same function: C when there is one)."""


@dataclass(frozen=True, slots=True)
class MessageRow:
    """Column values of one ``messages`` row, before the session id is attached."""

    role: str
    content: str
    timestamp: float
    tool_call_id: str | None = None
    tool_calls: str | None = None
    tool_name: str | None = None
    parts: str | None = None
    """JSON of the message's content list when it holds more than text (an image, audio):
    ``content`` keeps its text (searched), this the whole list (given back as it was)."""

    def __reduce__(self) -> tuple[Callable[..., MessageRow], tuple[Any, ...]]:
        # Pickled as its field values: an import's worker process hands rows over in bulk,
        # and the default for a frozen slots class pickles several times slower.
        return (
            _row,
            (
                self.role,
                self.content,
                self.timestamp,
                self.tool_call_id,
                self.tool_calls,
                self.tool_name,
                self.parts,
            ),
        )


_SET: tuple[Callable[[MessageRow, Any], None], ...] = tuple(
    vars(MessageRow)[f.name].__set__ for f in fields(MessageRow)
)
_SET_ROLE, _SET_CONTENT, _SET_TIME, _SET_CALL_ID, _SET_CALLS, _SET_NAME, _SET_PARTS = _SET


def _row(
    role: str,
    content: str,
    timestamp: float,
    tool_call_id: str | None = None,
    tool_calls: str | None = None,
    tool_name: str | None = None,
    parts: str | None = None,
) -> MessageRow:
    """``MessageRow(role, content, ...)``, made in half the time: its fields set through
    their slots, not one :func:`object.__setattr__` call each as the frozen dataclass's
    ``__init__`` does (the same row: :func:`to_row` and unpickling make every row with it)."""
    row: MessageRow = object.__new__(MessageRow)
    _SET_ROLE(row, role)
    _SET_CONTENT(row, content)
    _SET_TIME(row, timestamp)
    _SET_CALL_ID(row, tool_call_id)
    _SET_CALLS(row, tool_calls)
    _SET_NAME(row, tool_name)
    _SET_PARTS(row, parts)
    return row


def storable_text(text: str) -> str:
    """``text`` with lone surrogates (e.g. JSON-decoded ``"\\ud83d"`` of a cut-off emoji)
    replaced by U+FFFD: SQLite stores UTF-8, which cannot encode them, and one such character
    must not cost the whole batch. Valid surrogate pairs become the character they encode.

    Example:
        >>> storable_text("cut \\ud83d emoji"), storable_text("pair \\ud83d\\ude00")
        ('cut \ufffd emoji', 'pair 😀')
    """
    if text.isascii():  # (no surrogate: known without encoding it)
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _optional_text(value: Any) -> str | None:
    return storable_text(str(value)) if value is not None else None


def _content_text(content: Any) -> str:
    """Flatten LangChain/OpenAI content (a string or a list of parts) to plain text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return storable_text(content)
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping):
                text = part.get("text")
                if isinstance(text, str):
                    parts.append(text)
        return storable_text("\n".join(p for p in parts if p))
    return storable_text(str(content))


def _is_text_part(part: Any) -> bool:
    return isinstance(part, str) or (isinstance(part, Mapping) and part.get("type") == "text")


def _content_parts(content: Any) -> str | None:
    """JSON of a content list holding anything but text, to keep it whole; else ``None``."""
    if not isinstance(content, list) or all(_is_text_part(p) for p in content):
        return None
    try:
        return storable_text(_JSON_UNICODE.encode(content))
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidMessageError(f"message content cannot be stored as JSON: {exc}") from None


def decode_content(raw: str | bytes | None) -> str:
    """Text of a stored ``content`` value.

    Hermes stores structured content as ``"\\x00json:"`` followed by JSON of content parts;
    this returns their text. Bytes are decoded leniently, so a broken row never raises.

    Example:
        >>> decode_content('\\x00json:[{"type": "text", "text": "hi"}]')
        'hi'
    """
    if raw is None:
        return ""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", errors="replace")
    if not isinstance(raw, str):
        return str(raw)
    if raw.startswith(_JSON_PREFIX):
        try:
            return _content_text(json.loads(raw[len(_JSON_PREFIX) :]))
        except (ValueError, TypeError, RecursionError):
            return raw[len(_JSON_PREFIX) :]
    return raw


def _openai_tool_calls(calls: Any) -> str | None:
    """Normalize LangChain (``name``/``args``) or OpenAI tool calls to OpenAI JSON text."""
    if not calls:
        return None
    if isinstance(calls, str):
        try:
            calls = json.loads(calls)
        except (ValueError, RecursionError) as exc:
            raise InvalidMessageError(f"tool_calls is not valid JSON: {exc}") from None
    if not isinstance(calls, list):
        raise InvalidMessageError("tool_calls must be a list of tool calls")
    out: list[dict[str, Any]] = []
    for call in calls:
        if type(call) is not dict and not isinstance(call, Mapping):
            raise InvalidMessageError("each tool call must be a mapping")
        if "function" in call:
            out.append(dict(call))
            continue
        args = call.get("args", call.get("arguments", {}))
        out.append(
            {
                "id": call.get("id"),
                "type": "function",
                "function": {
                    "name": call.get("name"),
                    "arguments": args if isinstance(args, str) else _JSON.encode(args),
                },
            }
        )
    if len(out) == 1 and "function" not in calls[0]:
        text = _one_call_json(out[0])
        if text is not None:
            return storable_text(text)
    return storable_text(_JSON_UNICODE.encode(out))


def _one_call_json(call: dict[str, Any]) -> str | None:
    """``json.dumps([call], ensure_ascii=False)`` of a call :func:`_openai_tool_calls` made
    (``id``, ``type``, ``function``: ``name``, ``arguments``) when its id, name and arguments
    are text: the list written around their encoded strings, five times faster than the
    encoder; ``None`` for any other call.

    Example:
        >>> call = {"id": "c1", "type": "function", "function": {"name": "sh", "arguments": "{}"}}
        >>> _one_call_json(call) == json.dumps([call], ensure_ascii=False)
        True
    """
    function = call["function"]
    call_id, name, arguments = call["id"], function["name"], function["arguments"]
    if type(call_id) is not str or type(name) is not str or type(arguments) is not str:
        return None
    return (
        f'[{{"id": {_string_json(call_id)}, "type": "function", "function": '
        f'{{"name": {_string_json(name)}, "arguments": {_string_json(arguments)}}}}}]'
    )


def _is_langchain_message(message: Any) -> bool:
    """Whether ``message`` is a LangChain ``BaseMessage``, without importing LangChain.

    An instance of one exists only once ``langchain_core.messages`` is loaded, so a process
    that stores plain dicts (the CLI, the importers) never pays for importing it.
    """
    module = sys.modules.get("langchain_core.messages")
    return module is not None and isinstance(message, module.BaseMessage)


def _role_of(message: BaseMessage) -> str:
    from langchain_core.messages import (
        AIMessage,
        ChatMessage,
        FunctionMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )

    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        return "assistant"
    if isinstance(message, (ToolMessage, FunctionMessage)):
        return "tool"
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, ChatMessage):
        return _normalize_role(message.role)
    return _normalize_role(message.type)


def _normalize_role(role: Any) -> str:
    if not isinstance(role, str):
        raise InvalidMessageError(f"message role must be a string, got {type(role).__name__}")
    norm = ROLE_ALIASES.get(role.lower(), role.lower())
    if norm not in ROLES:
        raise InvalidMessageError(f"unknown message role {role!r}; expected one of {sorted(ROLES)}")
    return norm


def is_finite_number(value: object) -> bool:
    """Whether ``value`` is an int or float (not a bool) that is neither NaN nor infinite.

    Example:
        >>> [is_finite_number(v) for v in (1, 2.5, float("nan"), float("inf"), 10**400, True)]
        [True, True, False, False, False, False]
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _timestamp(value: Any, default: float) -> float:
    if value is None:
        return default
    if not is_finite_number(value):
        raise InvalidMessageError(f"timestamp must be finite Unix seconds, got {value!r}")
    return float(value)


def to_row(message: MessageLike, *, now: float | None = None) -> MessageRow:
    """Convert one message to a row.

    Accepts a LangChain ``BaseMessage`` (Human/AI with tool calls/Tool/System) or a dict with
    ``role``, ``content`` and optional ``tool_name``, ``tool_calls``, ``tool_call_id``,
    ``timestamp``; a :class:`MessageRow` (converted before, e.g. by an import's worker
    process) is returned as it is. Raises :class:`InvalidMessageError` on anything else.

    Example:
        >>> to_row({"role": "user", "content": "hi", "timestamp": 1.0}).role
        'user'
    """
    if type(message) is MessageRow:
        return message
    if type(message) is dict:  # (the importers' case: no LangChain message, no ABC check)
        return _dict_row(message, now)
    default_ts = time.time() if now is None else now
    if _is_langchain_message(message):
        from langchain_core.messages import AIMessage

        message = cast("BaseMessage", message)
        role = _role_of(message)
        extra = message.additional_kwargs or {}
        calls: Any = None
        if isinstance(message, AIMessage):
            calls = message.tool_calls or extra.get("tool_calls")
        tool_name = getattr(message, "name", None) if role == "tool" else None
        ts = extra.get("timestamp", message.response_metadata.get("timestamp"))
        return _row(
            role=role,
            content=_content_text(message.content),
            timestamp=_timestamp(ts, default_ts),
            tool_call_id=_optional_text(getattr(message, "tool_call_id", None)),
            tool_calls=_openai_tool_calls(calls),
            tool_name=_optional_text(tool_name),
            parts=_content_parts(message.content),
        )
    if isinstance(message, Mapping):
        return _dict_row(message, default_ts)
    raise InvalidMessageError(
        f"messages must be LangChain BaseMessage objects or dicts, got {type(message).__name__}"
    )


def _dict_row(message: Mapping[str, Any], now: float | None) -> MessageRow:
    """The row of a message dict (:func:`to_row`); the common case, text content and a
    float time, checked without the general layers (the same values, the same errors)."""
    if "role" not in message:
        raise InvalidMessageError("a message dict needs a 'role' key")
    given = message["role"]
    role = _STORED_ROLES.get(given) if type(given) is str else None
    if role is None:
        role = _normalize_role(given)
    content = message.get("content")
    text = storable_text(content) if type(content) is str else _content_text(content)
    ts = message.get("timestamp")
    if type(ts) is not float or not math.isfinite(ts):
        ts = _timestamp(ts, time.time() if now is None else now)
    tool_call_id = message.get("tool_call_id")
    calls = message.get("tool_calls")
    tool_name = message.get("tool_name", message.get("name") if role == "tool" else None)
    return _row(
        role,
        text,
        ts,
        None if tool_call_id is None else _optional_text(tool_call_id),
        None if not calls else _openai_tool_calls(calls),
        None if tool_name is None else _optional_text(tool_name),
    )
