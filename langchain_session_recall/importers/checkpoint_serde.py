"""A deserializer for LangGraph checkpoints that builds chat messages and nothing else.

LangGraph's default serializer (``JsonPlusSerializer``) rebuilds any ``(module, name)`` a
checkpoint names by importing the module and calling the name: a checkpoint file written by
someone else can run ``os.system`` when it is read. Its strict mode (``allowed_msgpack_modules``,
``LANGGRAPH_STRICT_MSGPACK``) still admits a fixed list of LangGraph types and builds them, and
its JSON path revives every ``langchain_core`` class, which LangChain itself calls unsafe for
untrusted input. An import needs the messages only, so this one goes further:

* msgpack: the four message classes the importer keeps are built (with pydantic validation,
  as ``allowed_objects="messages"`` does in ``langchain_core.load``), from a fixed table of
  classes, never by importing a name found in the file. Every other object is left as the
  plain data it carries (its arguments). A type on LangGraph's own safe list (dates, UUIDs,
  ``Send``, ... which ordinary checkpoints hold) is not worth a word; any other type is
  recorded in :attr:`refused`, for the import report.
* JSON (checkpoints of older LangGraph versions): ``langchain_core``'s own reviver restricted
  to those message classes; other constructors stay plain data and are recorded.
* ``pickle`` and any other encoding: refused (:class:`RefusedEncodingError`).

Nothing here imports a module named by the file, so reading it cannot run code.
"""

from __future__ import annotations

import json
from typing import Any

import ormsgpack
from langchain_core.load.load import Reviver
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langchain_session_recall.errors import RefusedEncodingError

__all__ = ["MESSAGE_TYPES", "RefusedEncodingError", "StrictCheckpointSerde"]

MESSAGE_TYPES = (HumanMessage, AIMessage, ToolMessage, SystemMessage)
"""The classes a checkpoint may build: the message types the LangGraph importer keeps."""

_BUILDABLE = {(cls.__module__, cls.__name__): cls for cls in MESSAGE_TYPES}
try:  # the list LangGraph's strict mode builds: plain data here, and nothing to report
    from langgraph.checkpoint.serde._msgpack import SAFE_MSGPACK_METHODS, SAFE_MSGPACK_TYPES
except ImportError:  # pragma: no cover - a LangGraph version without the list: report all
    SAFE_MSGPACK_TYPES = SAFE_MSGPACK_METHODS = frozenset()
# langgraph-checkpoint's msgpack extension codes (``serde/jsonplus.py``)
_CONSTRUCTORS = {0, 1, 2, 3}  # one argument, positional, keywords, a method: never called
_PYDANTIC = {4, 5}  # pydantic v1 / v2 models: (module, name, fields[, method])
_DELTA_SNAPSHOT = 7  # a channel's accumulated value, wrapped
_NAME_CHARS = 120  # of a refused type's name, as reported


class StrictCheckpointSerde:
    """LangGraph's ``SerializerProtocol`` for reading untrusted checkpoints: builds the
    :data:`MESSAGE_TYPES` only, records the types it refused in :attr:`refused`.

    Example:
        >>> import ormsgpack
        >>> evil = ormsgpack.Ext(0, ormsgpack.packb(("os", "system", "touch /tmp/pwned")))
        >>> serde = StrictCheckpointSerde()
        >>> serde.loads_typed(("msgpack", ormsgpack.packb({"messages": [evil]})))
        {'messages': ['touch /tmp/pwned']}
        >>> serde.refused
        {'os.system'}
    """

    def __init__(self) -> None:
        self.refused: set[str] = set()
        self._reviver = Reviver(allowed_objects=list(MESSAGE_TYPES))

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        raise NotImplementedError("StrictCheckpointSerde only reads checkpoints")

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """The value of one stored blob (``(encoding, bytes)``)."""
        encoding, blob = data
        if encoding == "null":
            return None
        if encoding in ("bytes", "bytearray"):
            return bytes(blob)
        if encoding == "msgpack":
            return self._unpack(blob)
        if encoding == "json":
            return json.loads(blob, object_hook=self._revive)
        raise RefusedEncodingError(
            f"checkpoint stored as {encoding!r}: not read (only msgpack and JSON are; a pickle "
            "can run code when it is loaded)"
        )

    def _unpack(self, blob: bytes) -> Any:
        return ormsgpack.unpackb(blob, ext_hook=self._ext, option=ormsgpack.OPT_NON_STR_KEYS)

    def _ext(self, code: int, data: bytes) -> Any:
        inner = self._unpack(data)
        if code == _DELTA_SNAPSHOT:
            return inner
        known = code in _CONSTRUCTORS | _PYDANTIC
        if not known or not isinstance(inner, list | tuple) or len(inner) < 3:
            self.refused.add(f"msgpack extension {code}")
            return None
        module, name, payload = inner[0], inner[1], inner[2]
        cls = _BUILDABLE.get((module, name)) if isinstance(module, str) else None
        if cls is None or code not in _PYDANTIC or not isinstance(payload, dict):
            if not _ordinary(code, inner):
                self.refused.add(_type_name(module, name))
            return payload  # plain data, as LangGraph's strict mode leaves a blocked type
        try:
            return cls.model_validate(payload)
        except (ValueError, TypeError):  # pydantic's ValidationError: not a valid message
            self.refused.add(f"{_type_name(module, name)} (invalid fields)")
            return payload

    def _revive(self, value: dict[str, Any]) -> Any:
        if value.get("type") != "constructor" or value.get("lc") not in (1, 2):
            return value
        try:
            if value.get("lc") == 1:
                return self._reviver(value)
        except (ValueError, TypeError, NotImplementedError):
            pass
        path = value.get("id")
        parts = [str(p) for p in path] if isinstance(path, list) and path else ["?", "?"]
        self.refused.add(_type_name(".".join(parts[:-1]), parts[-1]))
        return value.get("kwargs", value.get("args"))


def _ordinary(code: int, inner: list[Any] | tuple[Any, ...]) -> bool:
    """Whether an extension names a type (or, code 3, a method) on LangGraph's safe list."""
    try:
        if code == 3:
            return (inner[0], inner[1], inner[3]) in SAFE_MSGPACK_METHODS
        return (inner[0], inner[1]) in SAFE_MSGPACK_TYPES
    except (IndexError, TypeError):  # too short, or unhashable parts
        return False


def _type_name(module: object, name: object) -> str:
    """``module.name`` as reported, clipped (a file may name anything)."""
    text = f"{module}.{name}"
    return text if len(text) <= _NAME_CHARS else text[: _NAME_CHARS - 3] + "..."
