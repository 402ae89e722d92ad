"""Files that cannot hurt: an import source written by an attacker (or by a buggy program)
runs no code, and one bad line or row costs that line, not the import; ``session-recall demo``
never deletes or fills a file it did not build. Imports write into a store of each backend.
"""

from __future__ import annotations

import os
import pickle
import sqlite3
from pathlib import Path

import ormsgpack
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver
from reliability.reliability_support import count
from store_targets import backend_of

from langchain_session_recall.backends import SessionBackend
from langchain_session_recall.importers import import_langgraph

# --------------------------------------------------------------------------- LangGraph checkpoints

# langgraph-checkpoint's msgpack extension codes: (module, name, argument(s)) that its default
# deserializer imports and calls.
_EXT_SINGLE_ARG, _EXT_POS_ARGS, _EXT_KW_ARGS, _EXT_PYDANTIC_V1, _EXT_PYDANTIC_V2 = 0, 1, 2, 4, 5


def _ext(code: int, module: str, name: str, arg: object) -> ormsgpack.Ext:
    return ormsgpack.Ext(code, ormsgpack.packb((module, name, arg)))


def _payloads(markers: Path) -> list[ormsgpack.Ext]:
    """One call per way the default deserializer builds objects, each creating a marker file."""
    return [
        _ext(_EXT_SINGLE_ARG, "os", "system", f"touch {markers / 'single'}"),
        _ext(_EXT_POS_ARGS, "subprocess", "call", [["touch", str(markers / "positional")]]),
        _ext(_EXT_KW_ARGS, "os", "system", {"command": f"touch {markers / 'keywords'}"}),
        _ext(_EXT_PYDANTIC_V1, "os", "system", {"command": f"touch {markers / 'pydantic1'}"}),
        _ext(_EXT_PYDANTIC_V2, "os", "system", {"command": f"touch {markers / 'pydantic2'}"}),
        _ext(_EXT_POS_ARGS, "builtins", "exec", [f"open({str(markers / 'exec')!r}, 'w')"]),
    ]


class _Pickled:
    """Unpickling it runs ``os.system``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.system, (f"touch {self.marker}",)


def _raw(blob: bytes) -> object:
    """A msgpack blob decoded without building anything (extensions kept as they are)."""
    return ormsgpack.unpackb(blob, ext_hook=ormsgpack.Ext, option=ormsgpack.OPT_NON_STR_KEYS)


def _evil_checkpoints(path: Path, markers: Path) -> None:
    """A real SqliteSaver file: thread ``good`` as LangGraph writes it; thread ``evil`` whose
    checkpoint and pending write hold the payloads after its two real messages; thread
    ``pickled`` whose checkpoint is a pickle that runs a command."""
    conn = sqlite3.connect(path)
    saver = SqliteSaver(conn)
    for thread in ("good", "evil", "pickled"):
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {
            "messages": [
                HumanMessage("where is nginx.conf?", id=f"{thread}-1"),
                AIMessage("in /etc/nginx", id=f"{thread}-2"),
            ]
        }
        config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        saved = saver.put(config, checkpoint, {}, {})
        saver.put_writes(saved, [("messages", "pending")], task_id="t1")
    (blob,) = conn.execute("SELECT checkpoint FROM checkpoints WHERE thread_id = 'evil'").fetchone()
    state = _raw(blob)
    assert isinstance(state, dict)
    state["channel_values"]["messages"] += _payloads(markers)
    conn.execute(
        "UPDATE checkpoints SET type = 'msgpack', checkpoint = ? WHERE thread_id = 'evil'",
        (ormsgpack.packb(state),),
    )
    conn.execute(
        "UPDATE writes SET type = 'msgpack', value = ? WHERE thread_id = 'evil'",
        (ormsgpack.packb(_payloads(markers)),),
    )
    conn.execute(
        "UPDATE checkpoints SET type = 'pickle', checkpoint = ? WHERE thread_id = 'pickled'",
        (pickle.dumps(_Pickled(markers / "pickle")),),
    )
    conn.commit()
    conn.close()


def test_a_checkpoint_naming_code_runs_nothing(
    backend_store: SessionBackend, tmp_path: Path
) -> None:
    # LangGraph's default deserializer imports and calls whatever (module, name) a checkpoint
    # names: importing this file ran os.system, subprocess.call and exec.
    markers = tmp_path / "markers"
    markers.mkdir()
    path = tmp_path / "evil.sqlite"
    _evil_checkpoints(path, markers)
    report = import_langgraph(backend_store, path)
    count(
        "hostile_files.code_payloads",
        len(_payloads(markers)) + 1,
        backend=backend_of(backend_store),
    )
    assert sorted(p.name for p in markers.iterdir()) == []
    # the real messages of both threads came in; what was refused is reported
    for thread in ("good", "evil"):
        assert [m.content for m in backend_store.get_messages(thread)] == [
            "where is nginx.conf?",
            "in /etc/nginx",
        ]
    assert backend_store.get_session("pickled") is None
    problems = "\n".join(report.problems)
    assert "os.system" in problems and "subprocess.call" in problems and "builtins.exec" in problems
    assert "pickle" in problems
