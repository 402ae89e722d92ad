"""Files that cannot hurt: an import source written by an attacker (or by a buggy program)
runs no code, and one bad line or row costs that line, not the import; ``session-recall demo``
never deletes or fills a file it did not build. Imports write into a store of each backend.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ormsgpack
import pytest
from cli_support import run_cli
from hermes_fixtures import build_hermes_db
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver
from reliability.reliability_support import RELIABILITY_SETTINGS, count, examples
from store_targets import StoreFactory, backend_of

from langchain_session_recall.backends import SessionBackend, SessionStore
from langchain_session_recall.backends.sqlite.files import READ_TIMEOUT_ENV
from langchain_session_recall.demo import build_demo_store, demo_sessions
from langchain_session_recall.errors import (
    ImportSourceError,
    InvalidArgumentError,
    InvalidSessionError,
    NotASessionDatabaseError,
    ReadLimitError,
)
from langchain_session_recall.importers import (
    import_claude_code,
    import_hermes,
    import_jsonl,
    import_langgraph,
)
from langchain_session_recall.search.pipeline import search_sessions

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


def _put_thread(saver: SqliteSaver, thread: str, messages: list[object], **fields: object) -> Any:
    """One checkpoint of ``thread`` holding ``messages``, written by LangGraph's own saver."""
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"messages": messages}
    checkpoint.update(fields)  # type: ignore[typeddict-item]
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    return saver.put(config, checkpoint, {}, {})  # type: ignore[arg-type]


def _evil_checkpoints(path: Path, markers: Path) -> None:
    """A real SqliteSaver file: thread ``good`` as LangGraph writes it; thread ``evil`` whose
    checkpoint and pending write hold the payloads after its two real messages; thread
    ``pickled`` whose checkpoint is a pickle that runs a command."""
    conn = sqlite3.connect(path)
    saver = SqliteSaver(conn)
    for thread in ("good", "evil", "pickled"):
        messages = [
            HumanMessage("where is nginx.conf?", id=f"{thread}-1"),
            AIMessage("in /etc/nginx", id=f"{thread}-2"),
        ]
        saved = _put_thread(saver, thread, messages)
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


# --------------------------------------------------------------------------- bad lines

_GOOD = '{"session_id": "keep", "role": "user", "content": "nginx line %d"}'
_BAD_JSONL = {
    "nested too deeply": "[" * 100_000,
    "role is a list": '{"role": ["user"], "content": "x"}',
    "400-digit timestamp": '{"role": "user", "content": "x", "timestamp": ' + "9" * 400 + "}",
    "infinite timestamp": '{"role": "user", "content": "x", "timestamp": 1e400}',
    "NaN timestamp": '{"role": "user", "content": "x", "timestamp": NaN}',
    "lone surrogate in session_id": '{"role": "user", "content": "x", "session_id": "a\\ud800"}',
    "lone surrogate in parent": '{"role": "user", "content": "x", "session_id": "p", '
    '"parent_session_id": "\\udc00"}',
    "lone surrogate in user_id": '{"role": "user", "content": "x", "session_id": "u", '
    '"user_id": "\\ud800"}',
    "session_id is an object": '{"role": "user", "content": "x", "session_id": {"a": 1}}',
    "conversation with a bad message": '{"id": "c", "messages": [{"role": ["user"]}, '
    '{"role": "user", "content": "x", "timestamp": 1e999}]}',
    "conversation id with a lone surrogate": '{"id": "c\\ud800", "messages": '
    '[{"role": "user", "content": "x"}]}',
}


def _jsonl(tmp_path: Path, bad: list[str]) -> Path:
    lines = [_GOOD % 1, *bad, _GOOD % 2]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    return path


@pytest.mark.parametrize("kind", list(_BAD_JSONL))
def test_one_bad_jsonl_line_is_skipped_and_reported(
    backend_store: SessionBackend, tmp_path: Path, kind: str
) -> None:
    # Each of these used to abort the whole import (exit 70): RecursionError, TypeError,
    # OverflowError, UnicodeEncodeError, or a session the store rejected whole.
    path = _jsonl(tmp_path, [_BAD_JSONL[kind]])
    report = import_jsonl(backend_store, path)
    count("hostile_files.bad_lines", backend=backend_of(backend_store))
    assert [m.content for m in backend_store.get_messages("keep")] == [
        "nginx line 1",
        "nginx line 2",
    ]
    assert report.skipped_total >= 1
    assert any(p.startswith("chat.jsonl:2") for p in report.problems), report.problems
    assert backend_store.check().ok


_GOOD_CC = {
    "type": "user",
    "sessionId": "keep",
    "timestamp": "2026-11-03T10:00:00Z",
    "message": {"role": "user", "content": "nginx entry"},
}
_BAD_CC = {
    "nested too deeply": "[" * 100_000,
    "400-digit timestamp": '{"type": "user", "uuid": "b1", "sessionId": "s2", "timestamp": '
    + "9" * 400
    + ', "message": {"role": "user", "content": "x"}}',
    "lone surrogate in sessionId": '{"type": "user", "uuid": "b1", "sessionId": "s\\ud800", '
    '"message": {"role": "user", "content": "x"}}',
    "lone surrogate in uuid": '{"type": "user", "uuid": "b\\udfff", "sessionId": "s2", '
    '"message": {"role": "user", "content": "x"}}',
    "sessionId is a list": '{"type": "user", "uuid": "b1", "sessionId": ["s"], '
    '"message": {"role": "user", "content": "x"}}',
    "agentId is a list": '{"type": "user", "uuid": "b1", "sessionId": "s2", "isSidechain": true, '
    '"agentId": ["a"], "message": {"role": "user", "content": "x"}}',
}


@pytest.mark.parametrize("kind", list(_BAD_CC))
def test_one_bad_claude_code_line_is_skipped_and_reported(
    backend_store: SessionBackend, tmp_path: Path, kind: str
) -> None:
    first = json.dumps({**_GOOD_CC, "uuid": "g1"})
    last = json.dumps({**_GOOD_CC, "uuid": "g2", "message": {"role": "user", "content": "end"}})
    path = tmp_path / "keep.jsonl"
    path.write_text(
        "\n".join([first, _BAD_CC[kind], last]) + "\n", encoding="utf-8", errors="surrogatepass"
    )
    report = import_claude_code(backend_store, path)
    count("hostile_files.bad_lines", backend=backend_of(backend_store))
    assert [m.content for m in backend_store.get_messages("keep")] == ["nginx entry", "end"]
    assert any(p.startswith("keep.jsonl:2") for p in report.problems), report.problems
    assert backend_store.check().ok


def test_the_cli_imports_the_rest_exits_4_and_names_each_bad_line(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    path = _jsonl(tmp_path, list(_BAD_JSONL.values()))
    target = store_factory.target()
    result = run_cli("import", "jsonl", str(path), "--db", target.db, "--show-problems", "50")
    assert result.code == 4, result.err
    for number, _kind in enumerate(_BAD_JSONL, 2):
        assert f"chat.jsonl:{number}" in result.out, (number, _kind, result.out)
    with target.open() as store:
        assert len(store.get_messages("keep")) == 2


def test_bad_rows_of_a_hermes_file_cost_those_rows_only(
    backend_store: SessionBackend, tmp_path: Path
) -> None:
    # A text value that is not UTF-8 made the whole import fail (exit 3, naming the target
    # store instead of the source); a session started at NaN was rejected with its messages.
    path = tmp_path / "state.db"
    build_hermes_db(path, 3)
    conn = sqlite3.connect(path)
    first, second, third = (r[0] for r in conn.execute("SELECT id FROM sessions LIMIT 3"))
    conn.execute(
        "UPDATE messages SET content = CAST(x'6e67696e78ff20636f6e66' AS TEXT) "
        "WHERE id = (SELECT min(id) FROM messages WHERE session_id = ?)",
        (first,),
    )
    conn.execute("UPDATE sessions SET title = CAST(x'c328' AS TEXT) WHERE id = ?", (second,))
    conn.execute("UPDATE sessions SET started_at = 'NaN' WHERE id = ?", (third,))
    conn.execute("UPDATE messages SET timestamp = 'NaN' WHERE session_id = ?", (third,))
    conn.commit()
    conn.close()
    hermes = SessionStore(path, read_only=True)
    expected = {sid: len(hermes.get_messages(sid)) for sid in hermes.all_session_ids()}
    hermes.close()

    report = import_hermes(backend_store, path)
    count("hostile_files.bad_rows", 4, backend=backend_of(backend_store))
    imported = {sid: len(backend_store.get_messages(sid)) for sid in expected}
    assert imported == expected
    assert backend_store.get_messages(first)[0].content == "nginx\ufffd conf"
    assert backend_store.get_session(second).title == "\ufffd("  # type: ignore[union-attr]
    assert report.skipped_total == 0, report.problems
    assert backend_store.check().ok


def test_bad_rows_of_a_langgraph_file_cost_those_threads_only(
    backend_store: SessionBackend, tmp_path: Path
) -> None:
    # A thread id that is not UTF-8 failed the whole import (exit 3, naming the target store);
    # a checkpoint time that is not a date lost its thread; on PostgreSQL a message id holding
    # NUL (the ledger's key) failed the import too.
    path = tmp_path / "checkpoints.sqlite"
    conn = sqlite3.connect(path)
    saver = SqliteSaver(conn)
    for thread in ("good", "badid", "badtime"):
        messages = [
            HumanMessage("nginx?", id=f"{thread}-1"),
            AIMessage("a NUL in my id", id="nul\x00id"),  # PostgreSQL cannot key it
        ]
        _put_thread(saver, thread, messages, **({"ts": "yesterday"} if thread == "badtime" else {}))
    conn.execute(
        "UPDATE checkpoints SET thread_id = CAST(x'626164ff' AS TEXT) WHERE thread_id = 'badid'"
    )
    conn.commit()
    conn.close()

    report = import_langgraph(backend_store, path)
    count("hostile_files.bad_rows", 2, backend=backend_of(backend_store))
    assert [m.content for m in backend_store.get_messages("good")] == ["nginx?"]
    assert [m.content for m in backend_store.get_messages("badtime")] == ["nginx?"]
    assert report.problems[0] == "thread b'bad\\xff': thread id is not valid UTF-8"
    assert report.skipped["invalid message"] == 2  # the message keyed by a NUL, per thread
    assert len(report.problems) == 3


# --------------------------------------------------------------------------- generated lines

_any_text = st.text(st.characters(blacklist_categories=()), max_size=12)
"""Any code points, lone surrogates and NUL included."""
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**300, max_value=10**400),
    st.floats(),  # NaN and the infinities included
    _any_text,
    st.sampled_from(["user", "assistant", "tool", "human", "ai", "2026-11-03T10:00:00Z", "keep"]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_any_text, inner, max_size=3),
    max_leaves=8,
)


def _hostile(keys: list[str], nested: dict[str, list[str]]) -> st.SearchStrategy[str]:
    """A line: a JSON object with any of ``keys`` set to anything (``nested`` keys hold an
    object, or a list of objects, of their own keys), or raw junk."""
    fields = {k: _values for k in keys}
    for key, inner in nested.items():
        obj = st.fixed_dictionaries({}, optional={k: _values for k in inner})
        fields[key] = st.one_of(_values, obj, st.lists(obj, max_size=3))
    objects = st.fixed_dictionaries({}, optional=fields).map(json.dumps)  # NaN, \ud800 ...
    deep = st.integers(1, 5).map(lambda n: "[" * (n * 20_000))
    return st.one_of(objects, deep, _any_text)


_JSONL_LINES = _hostile(
    [
        "role",
        "content",
        "session_id",
        "parent_session_id",
        "source",
        "user_id",
        "title",
        "model",
        "timestamp",
        "tool_calls",
        "tool_call_id",
        "name",
        "tool_name",
        "id",
        "created_at",
    ],
    {
        "messages": ["role", "content", "timestamp", "tool_calls", "name"],
        "metadata": ["source", "user_id", "title", "parent_session_id"],
    },
)
_CLAUDE_LINES = _hostile(
    [
        "type",
        "uuid",
        "sessionId",
        "parentUuid",
        "isSidechain",
        "agentId",
        "timestamp",
        "isMeta",
        "summary",
        "leafUuid",
    ],
    {"message": ["role", "content", "model", "id"]},
)


def _claude_line(uuid: str, text: str) -> str:
    return json.dumps({**_GOOD_CC, "uuid": uuid, "message": {"role": "user", "content": text}})


@pytest.mark.slow  # 150 generated files of hostile lines (JSONL and Claude Code) imported
def test_generated_hostile_lines_never_stop_an_import(store_factory: StoreFactory) -> None:
    # Property: whatever the other lines hold, an import (JSONL and Claude Code) raises
    # nothing, imports every good line, and leaves a store that passes check().
    backend = store_factory.backend
    store = store_factory.open()
    folder = Path(tempfile.mkdtemp(dir=store_factory.directory))
    runs = iter(range(1_000_000))

    @settings(RELIABILITY_SETTINGS, max_examples=examples(150, backend))
    @given(jsonl=st.lists(_JSONL_LINES, max_size=6), claude=st.lists(_CLAUDE_LINES, max_size=6))
    def check(jsonl: list[str], claude: list[str]) -> None:
        run = next(runs)
        good = [f"nginx {run} first", f"nginx {run} last"]
        path = folder / f"run{run}.jsonl"
        lines = [json.dumps({"session_id": f"keep-{run}", "role": "user", "content": good[0]})]
        lines += [
            *jsonl,
            json.dumps({"session_id": f"keep-{run}", "role": "user", "content": good[1]}),
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
        import_jsonl(store, path)
        assert [m.content for m in store.get_messages(f"keep-{run}")] == good

        path = folder / f"keep-{run}.jsonl"
        lines = [_claude_line(f"{run}-a", good[0]), *claude, _claude_line(f"{run}-z", good[1])]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
        import_claude_code(store, path)
        contents = [m.content for m in store.get_messages("keep")]
        assert good[0] in contents and good[1] in contents
        count("hostile_files.generated_lines", len(jsonl) + len(claude), backend=backend)

    check()
    assert store.check().ok


def test_the_store_refuses_ids_it_cannot_keep_and_repairs_free_text(
    backend_store: SessionBackend,
) -> None:
    # add_session raised the driver's UnicodeEncodeError for a lone surrogate anywhere.
    for field in ("session_id", "user_id", "source", "parent_session_id"):
        args = {"session_id": "s", field: "x\ud800"}
        with pytest.raises(InvalidSessionError, match=f"{field} is not valid Unicode"):
            backend_store.add_session(**args)  # type: ignore[arg-type]
    session = backend_store.add_session("s", title="cut \ud83d", model="m\udc00")
    assert (session.title, session.model) == ("cut \ufffd", "m\ufffd")


# --------------------------------------------------------------------------- the demo database


def _files(path: Path) -> dict[str, bytes]:
    """The bytes of ``path`` and of the files SQLite keeps beside it."""
    out = {}
    for suffix in ("", "-wal", "-shm", "-journal"):
        found = Path(f"{path}{suffix}")
        if found.exists():
            out[suffix] = found.read_bytes()
    return out


def _real_store(path: Path) -> None:
    with SessionStore(path) as store:
        store.add_session("mine", title="my only copy")
        store.add_messages("mine", [{"role": "user", "content": "the nginx config I need"}])


def _demo_plus_mine(path: Path) -> None:
    build_demo_store(path).close()
    _real_store(path)  # imported into the demo database afterwards: not the demo's any more


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda p: p.write_text("notes I wrote\n"), id="text-file"),
        pytest.param(_real_store, id="real-store"),
        pytest.param(lambda p: build_hermes_db(p, 3), id="hermes-file"),
        pytest.param(_demo_plus_mine, id="demo-with-an-import"),
    ],
)
@pytest.mark.parametrize("fresh", [True, False], ids=["fresh", "reuse"])
def test_demo_never_deletes_or_fills_a_file_it_did_not_build(
    tmp_path: Path, make: Callable[[Path], object], fresh: bool
) -> None:
    # `demo --db X --fresh` deleted any regular file X; without --fresh it wrote the 18 demo
    # sessions into a real store.
    path = tmp_path / "x.db"
    make(path)
    before = _files(path)
    result = run_cli("demo", "--db", str(path), *(["--fresh"] if fresh else []), "-k", "1")
    count("hostile_files.demo_refusals")
    assert result.code == 3, result.out
    assert "not a demo database" in result.err and str(path) in result.err
    assert _files(path) == before
    with pytest.raises(NotASessionDatabaseError, match="not a demo database"):
        build_demo_store(path)
    assert _files(path) == before


def test_demo_builds_new_and_empty_files_and_rebuilds_its_own(tmp_path: Path) -> None:
    path, empty = tmp_path / "demo.db", tmp_path / "empty.db"
    empty.touch()
    for target in (path, empty):
        assert run_cli("demo", "--db", str(target), "-k", "1").code == 0
    with SessionStore(path) as store:  # a recap cached by `search --summarize` is no import
        store.put_cached_summary("k", session_id="x", summary="s", model="m")
    for fresh in ([], ["--fresh"], ["--fresh"]):
        assert run_cli("demo", "--db", str(path), "-k", "1", *fresh).code == 0
    with SessionStore(path, read_only=True) as store:
        assert store.stats()["sessions"] == len(demo_sessions())
        assert store.get_cached_summary("k") is None  # rebuilt from scratch
    assert run_cli("demo", "--db", "postgresql://app@db/x").code == 2  # a file, not a DSN


# --------------------------------------------------------------------------- files that never end

_ENDLESS = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT {columns} FROM r"


def _files_of(directory: Path) -> dict[str, str]:
    """``{name: sha256}`` of the files in ``directory`` (an ``-shm`` only as present: readers
    of a WAL file register in it)."""
    return {
        p.name: "present" if p.name.endswith("-shm") else hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.iterdir())
    }


def _endless_view(path: Path, table: str) -> None:
    """A Hermes file whose ``table`` is a view that never ends (the table renamed away)."""
    build_hermes_db(path, 3)
    conn = sqlite3.connect(path)
    names = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
    columns = ", ".join(f"{'x' if n == 'id' else 'NULL'} AS {n}" for n in names)
    conn.execute(f"ALTER TABLE {table} RENAME TO real_{table}")
    conn.execute(f"CREATE VIEW {table} AS {_ENDLESS.format(columns=columns)}")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("table", ["sessions", "messages"])
def test_a_view_where_a_table_belongs_is_refused_not_run(
    table: str, backend_store: SessionBackend, tmp_path: Path
) -> None:
    # A 'sessions' view that never ends hung search, recent and stats (--read-only) and
    # import hermes: the layout took views for tables, and every read ran the view.
    path = tmp_path / "state.db"
    _endless_view(path, table)
    before = _files_of(tmp_path)
    with pytest.raises(NotASessionDatabaseError, match=f"'{table}' is a view, not a table"):
        SessionStore(path, read_only=True)
    for argv in (["search", "nginx"], ["recent"], ["stats"]):
        result = run_cli(*argv, "--db", str(path), "--read-only")
        assert result.code == 3, (argv, result.err)
        assert f"'{table}' is a view, not a table" in result.err
    with pytest.raises(ImportSourceError, match="is a view, not a table"):
        import_hermes(backend_store, path)
    assert backend_store.all_session_ids() == []
    assert _files_of(tmp_path) == before
    count("hostile_files.endless_views_refused", 1)


def _chain_file(path: Path, links: int) -> None:
    """A legitimate Hermes file (tables only) that keeps SQLite busy: one chain of ``links``
    sessions (each the child of the one before, filled by a recursive CTE) and no index on
    ``parent_session_id``, so each step of a lineage walk scans every session."""
    build_hermes_db(path, 3)
    conn = sqlite3.connect(path)
    conn.execute("DROP INDEX idx_sessions_parent")
    numbers = f"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < {links})"
    conn.execute(
        "INSERT INTO sessions (id, source, started_at, parent_session_id, title) "
        f"{numbers} SELECT 'chain-' || n, 'cli', 1790000000.0 + n, "
        "CASE WHEN n > 1 THEN 'chain-' || (n - 1) END, 'link ' || n FROM r"
    )
    conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp, active, compacted) "
        f"{numbers} SELECT 'chain-' || n, 'user', 'link ' || n || ' of the zeppelin chain', "
        "1790000000.0 + n, 1, 0 FROM r"
    )
    conn.commit()
    conn.close()


def test_a_read_past_its_time_limit_is_stopped_and_ordinary_reads_are_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reads of a file opened read-only had no limit: whatever the file made SQLite do ran to
    # its end, or forever. The limit stops a read that outlasts it (here one too short for
    # any real read) with an error that says what to do; at its default, the same heavy
    # file is searched to the end; a store of ours opened writable has no limit at all.
    (tmp_path / "src").mkdir()
    path = tmp_path / "src" / "state.db"
    _chain_file(path, 1_000)
    before = _files_of(path.parent)
    with SessionStore(path, read_only=True) as store:
        assert [s.root_id for s in search_sessions(store, "zeppelin").sessions] == ["chain-1"]
        assert len(store.chain_messages("chain-1")) == 1_000
    with (
        pytest.raises(ReadLimitError, match=r"took longer than 1e-09 s.*raise the limit"),
        SessionStore(path, read_only=True, read_timeout=1e-9) as limited,
    ):
        limited.chain_messages("chain-1")

    monkeypatch.setenv(READ_TIMEOUT_ENV, "1e-9")
    result = run_cli("show", "chain-1", "--db", str(path), "--read-only")
    assert result.code == 3, result.err
    assert "took longer than 1e-09 s" in result.err and READ_TIMEOUT_ENV in result.err
    result = run_cli("import", "hermes", str(path), "--db", str(tmp_path / "mine.db"))
    assert result.code == 2 and "took longer than" in result.err, result.err
    assert _files_of(path.parent) == before

    ours = tmp_path / "ours.db"  # the same environment: a writable store of ours is not limited
    with SessionStore(ours) as store:
        store.add_session("c1", title="zeppelin")
        store.add_messages("c1", [{"role": "user", "content": "zeppelin " * 2000}] * 50)
        assert store.read_timeout is None
        assert [s.root_id for s in search_sessions(store, "zeppelin").sessions] == ["c1"]
    monkeypatch.setenv(READ_TIMEOUT_ENV, "soon")
    with pytest.raises(InvalidArgumentError, match=READ_TIMEOUT_ENV):
        SessionStore(path, read_only=True)
    count("hostile_files.reads_stopped_at_their_limit", 3)
