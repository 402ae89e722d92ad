"""The import ledger: each external key imported once per source kind (a row per key in
``import_ledger``, or many keys in a row of ``import_runs``: see
:mod:`~langchain_session_recall.backends.common.ledger_runs`)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_session_recall.backends import sql
from langchain_session_recall.backends.common.ledger_runs import (
    Run,
    key_numbers,
    keyed,
    parse_keys,
    split_into_runs,
)
from langchain_session_recall.backends.common.validation import (
    ledger_key,
)
from langchain_session_recall.backends.common.writes import SessionWrites
from langchain_session_recall.messages import (
    MessageLike,
    MessageRow,
    to_row,
)

LedgerRow = tuple[str, str, str, int, float]
"""One ledger row: source kind, external key, session id, message id, import time."""
RunRow = tuple[str, str, int, str, int, str, int | None, float]
"""One run of ledger keys (``import_runs``, columns as :data:`~langchain_session_recall.
backends.sql.RUN_COLUMNS`): source kind, key prefix, first number, gaps, key count, session
id, first message id, import time."""
_LEDGER_CHUNK = 500  # keys looked up per ledger query
_IMPORT_STATE = "import_state:"  # prefix of the import state's keys in session_recall_meta


class ImportLedger(SessionWrites):
    """The import ledger: each external key imported once per source kind."""

    def import_messages(
        self,
        session_id: str,
        messages: Sequence[tuple[str, MessageLike]],
        *,
        source_kind: str,
    ) -> list[int]:
        """Add ``(external_key, message)`` pairs not imported before, with their ledger rows.

        Messages and ledger rows go in one transaction, so an import killed half-way leaves a
        consistent store and re-running it adds exactly what is missing. Pairs whose key the
        ledger already holds for ``source_kind`` (in any session) are skipped. Returns the ids
        of the messages added. A key must be text both backends can store as given (no NUL,
        no lone surrogate), else :class:`~langchain_session_recall.errors.InvalidMessageError`
        and nothing of the batch is stored.

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> _ = store.add_session("s1")
            >>> pairs = [("line-1", {"role": "user", "content": "hi"})]
            >>> len(store.import_messages("s1", pairs, source_kind="jsonl"))
            1
            >>> store.import_messages("s1", pairs, source_kind="jsonl")
            []
        """
        now = time.time()
        converted = [(ledger_key(key), to_row(m, now=now)) for key, m in messages]
        self._before_batch()
        parsed = parse_keys(key for key, _ in converted)  # (each distinct key, once)
        with self._write() as conn:
            seen = self._held_keys(conn, source_kind, parsed)
            fresh: dict[str, MessageRow] = {}
            for key, row in converted:
                if key not in seen and key not in fresh:
                    fresh[key] = row
            ids = self._append(conn, session_id, list(fresh.values()))
            if ids:
                runs, single = split_into_runs(list(fresh), ids, parsed)
                self._record(conn, source_kind, session_id, runs, single, now)
        if ids:
            self._wrote([session_id], in_block=self._in_block())
        return ids

    def _held_keys(
        self, conn: Any, source_kind: str, parsed: dict[str, tuple[str, int] | None]
    ) -> set[str]:
        """Which of the keys ``parsed`` (:func:`~langchain_session_recall.backends.common.
        ledger_runs.parse_keys`) the ledger holds for ``source_kind`` (in any session): as
        rows or in runs."""
        d = self.dialect
        unique = list(parsed)
        seen: set[str] = set()
        # (a kind with no row there, e.g. a store whose imports all wrote runs: no lookup)
        rows_held = conn.execute(sql.ledger_has_rows(d), {"kind": source_kind}).fetchone()
        for start in range(0, len(unique) if rows_held else 0, _LEDGER_CHUNK):
            chunk = unique[start : start + _LEDGER_CHUNK]
            params = {"kind": source_kind, "keys": d.array(chunk)}
            seen.update(r[0] for r in conn.execute(sql.ledger_keys(d), params))
        return seen | self._keys_in_runs(conn, source_kind, parsed)

    def _keys_in_runs(
        self,
        conn: Any,
        source_kind: str,
        parsed: dict[str, tuple[str, int] | None],
        session_id: str | None = None,
    ) -> set[str]:
        """Which of the keys ``parsed`` runs of ``source_kind`` hold (those of ``session_id``
        alone, when given)."""
        asked = key_numbers(parsed)
        if not asked or not self._has_import_runs():
            return set()
        params = {"kind": source_kind, "prefixes": self.dialect.array(list(asked))}
        rows = conn.execute(sql.runs_of_prefixes(self.dialect), params)
        held = ((p, n, g) for p, n, g, sid in rows if session_id in (None, sid))
        return keyed(held, asked)

    def _record(
        self,
        conn: Any,
        source_kind: str,
        session_id: str,
        runs: Sequence[Run],
        single: Sequence[tuple[str, int]],
        now: float,
    ) -> None:
        """The ledger entries of newly imported keys: their ``runs`` (:mod:`~langchain_session_
        recall.backends.common.ledger_runs`) and a row for each key of ``single`` (with its
        message's id)."""
        if runs:
            self._insert_runs(
                conn,
                [
                    (source_kind, r.prefix, r.first, r.gaps, r.size, session_id, r.message_id, now)
                    for r in runs
                ],
            )
        if single:
            self._insert_ledger(
                conn, [(source_kind, key, session_id, mid, now) for key, mid in single]
            )

    def _insert_ledger(self, conn: Any, rows: Sequence[LedgerRow]) -> None:
        """Insert ledger rows (:data:`LedgerRow`, not empty); a key the ledger holds already
        is left as it is. A backend with a faster way (a multi-row ``INSERT``) overrides it."""
        names = ("source_kind", "external_key", "session_id", "message_id", "imported_at")
        conn.cursor().executemany(
            sql.insert_ledger(self.dialect), [dict(zip(names, row, strict=True)) for row in rows]
        )

    def _insert_runs(self, conn: Any, rows: Sequence[RunRow]) -> None:
        """Insert runs (:data:`RunRow`, not empty), as :meth:`_insert_ledger` rows."""
        conn.cursor().executemany(
            sql.insert_run(self.dialect),
            [dict(zip(sql.RUN_COLUMNS, row, strict=True)) for row in rows],
        )

    def imported_keys(
        self, source_kind: str, session_id: str, among: Sequence[str] | None = None
    ) -> set[str]:
        """External keys already imported into ``session_id`` from ``source_kind``; with
        ``among``, only which of those keys (a session's new lines asked about, not all of a
        long session's keys read).

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> _ = store.add_session("s1")
            >>> _ = store.import_messages("s1", [("k1", {"role": "user", "content": "hi"})],
            ...                           source_kind="jsonl")
            >>> store.imported_keys("jsonl", "s1", among=["k1", "k2"])
            {'k1'}
        """
        d = self.dialect
        if among is None:
            params = {"kind": source_kind, "sid": session_id}
            with self._read() as conn:
                found = {str(r[0]) for r in conn.execute(sql.imported_keys(d), params)}
                if self._has_import_runs():
                    found |= keyed(conn.execute(sql.runs_of_session(d), params), None)
            return found
        keys = list(dict.fromkeys(among))
        found = set()
        with self._read() as conn:
            for start in range(0, len(keys), _LEDGER_CHUNK):
                chunk = {"kind": source_kind, "keys": d.array(keys[start : start + _LEDGER_CHUNK])}
                rows = conn.execute(sql.ledger_rows(d), chunk)
                found.update(str(key) for key, sid in rows if sid == session_id)
            found |= self._keys_in_runs(conn, source_kind, parse_keys(keys), session_id)
        return found

    def read_import_state(self, key: str) -> str | None:
        """What an import recorded under ``key`` with :meth:`write_import_state`, or ``None``.

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> store.read_import_state("sync:claude-code") is None
            True
        """
        with self._read() as conn:
            return sql.read_meta(conn, self.dialect, _IMPORT_STATE + key)

    def write_import_state(self, key: str, value: str) -> None:
        """Record ``value`` (text, e.g. JSON) under ``key`` beside the ledger: what a ``sync``
        needs to know about its sources (the files it read and their size and time) to skip
        them next time. It lives in the store, so a new store starts from nothing.

        Raises:
            ReadOnlyStoreError: the store was opened read-only.

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> store.write_import_state("sync:claude-code", '{"a.jsonl": [10, 1]}')
            >>> store.read_import_state("sync:claude-code")
            '{"a.jsonl": [10, 1]}'
        """
        with self._write() as conn:
            sql.set_meta(conn, self.dialect, _IMPORT_STATE + key, value)

    def read_import_states(self, prefix: str) -> dict[str, str]:
        """Every import state whose key starts with ``prefix``, by key: what
        :meth:`read_import_state` gives for each, in one query (an import resuming many files
        reads where it stopped in each at once).

        Example:
            >>> from langchain_session_recall.backends import open_store
            >>> store = open_store(":memory:")
            >>> store.write_import_states({"resume:a": "1", "resume:b": "2", "sync:x": "3"})
            >>> store.read_import_states("resume:")
            {'resume:a': '1', 'resume:b': '2'}
        """
        full = _IMPORT_STATE + prefix
        params = {"length": len(full), "prefix": full}
        with self._read() as conn:
            rows = conn.execute(sql.meta_with_prefix(self.dialect), params).fetchall()
        return {str(k)[len(_IMPORT_STATE) :]: str(v) for k, v in sorted(rows)}

    def write_import_states(self, states: Mapping[str, str]) -> None:
        """:meth:`write_import_state` for each ``key: value`` of ``states``, in one
        transaction.

        Raises:
            ReadOnlyStoreError: the store was opened read-only.
        """
        if not states:
            return
        with self._write() as conn:
            for key, value in states.items():
                sql.set_meta(conn, self.dialect, _IMPORT_STATE + key, value)

    def release_forgotten(self, source_kind: str, session_id: str) -> int:
        """Let an import add a forgotten session's messages again: drop its ledger rows from
        ``source_kind`` that name no message (see :meth:`delete_sessions`); returns how many
        keys they held.
        Importers call it for ``reimport=True``.

        Raises:
            ReadOnlyStoreError: the store was opened read-only.
        """
        params = {"kind": source_kind, "sid": session_id}
        d = self.dialect
        with self._write() as conn:
            released = int(conn.execute(sql.release_forgotten(d, "import_ledger"), params).rowcount)
            if self._has_import_runs():
                (keys,) = conn.execute(sql.forgotten_run_keys(d), params).fetchone()
                conn.execute(sql.release_forgotten(d, "import_runs"), params)
                released += int(keys)
            return released
