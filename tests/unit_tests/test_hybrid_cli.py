"""``session-recall embed``: the backfill from the shell, with progress, refusing another
model unless --reindex."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

from cli_support import run_cli
from hybrid_support import ConceptEmbeddings

from langchain_session_recall import SessionRecallRetriever, SessionStore
from langchain_session_recall.cli import main

MODEL = "hybrid_support:ConceptEmbeddings"
DATA = Path(__file__).resolve().parents[1] / "data"


def _store(path: Path) -> None:
    with SessionStore(path) as store:
        for n in range(3):
            store.add_session(f"s{n}")
            store.add_messages(
                f"s{n}", [{"role": "user", "content": f"dinner with colleagues {n}"}]
            )


def test_embed_backfills_with_progress_and_then_has_nothing_to_do(tmp_path: Path) -> None:
    db = tmp_path / "recall.db"
    _store(db)
    first = run_cli("embed", "--db", str(db), "--embeddings", MODEL)
    assert first.code == 0, first.err
    assert "embedded sessions 3/3" in first.err
    assert "Embedded 3 windows with hybrid_support.ConceptEmbeddings:concepts-v1" in first.out
    again = run_cli("embed", "--db", str(db), "--embeddings", MODEL, "--json")
    assert json.loads(again.out)["windows"] == 0
    with SessionStore(db, read_only=True) as store:
        docs = SessionRecallRetriever(store=store, embeddings=ConceptEmbeddings()).invoke(
            "workmates"
        )
        assert docs and docs[0].metadata["signals"]["similarity"] > 0


def test_embed_refuses_another_model_unless_reindex(tmp_path: Path) -> None:
    db = tmp_path / "recall.db"
    _store(db)
    assert run_cli("embed", "--db", str(db), "--embeddings", MODEL).code == 0
    other = "hybrid_support:OtherModel"
    refused = run_cli("embed", "--db", str(db), "--embeddings", other)
    assert refused.code == 2
    assert "--reindex" in refused.err and "concepts-v1" in refused.err
    redone = run_cli("embed", "--db", str(db), "--embeddings", other, "--reindex", "--json")
    assert redone.code == 0 and json.loads(redone.out)["windows"] == 3


def test_embed_says_what_a_bad_model_name_is(tmp_path: Path) -> None:
    db = tmp_path / "recall.db"
    _store(db)
    bad = run_cli("embed", "--db", str(db), "--embeddings", "no_such_module:thing")
    assert bad.code == 2 and "no_such_module" in bad.err
    window = run_cli("embed", "--db", str(db), "--embeddings", MODEL, "--window", "three")
    assert window.code == 2 and "SIZE/OVERLAP" in window.err


def test_stats_show_the_vectors_once_there_are_some(tmp_path: Path) -> None:
    db = tmp_path / "recall.db"
    _store(db)
    before = run_cli("stats", "--db", str(db))
    assert before.code == 0 and "Vectors" not in before.out, before.out
    assert json.loads(run_cli("stats", "--db", str(db), "--json").out)["vectors"] is None
    assert run_cli("embed", "--db", str(db), "--embeddings", MODEL).code == 0
    after = run_cli("stats", "--db", str(db), "--read-only")
    assert "Vectors" in after.out, after.out
    assert "3 windows (hybrid_support.ConceptEmbeddings:concepts-v1, 3/1, 64" in after.out
    figures = json.loads(run_cli("stats", "--db", str(db), "--json").out)["vectors"]
    assert figures == {
        "windows": 3,
        "model": "hybrid_support.ConceptEmbeddings:concepts-v1",
        "window": "3/1",
        "dimensions": 64,
    }


# --------------------------------------------------------------------------- progress (issue 34)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_embed_draws_a_bar_with_rate_and_eta_on_a_terminal(tmp_path: Path) -> None:
    db = tmp_path / "recall.db"
    _store(db)
    terminal = _Terminal()
    with contextlib.redirect_stderr(terminal):
        code = main(["embed", "--db", str(db), "--embeddings", MODEL], out=io.StringIO())
    assert code == 0
    drawn = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal.getvalue())  # colours, cursor
    assert "embedding" in drawn and "━" in drawn and "3/3 sessions" in drawn
    assert "sessions/s" in drawn and "eta" in drawn
    assert "embedded sessions" not in drawn  # the bar, not the lines of a log


def test_embed_progress_is_accepted_as_import_progress_is(tmp_path: Path) -> None:
    db = tmp_path / "recall.db"
    _store(db)
    forced = run_cli("embed", "--db", str(db), "--embeddings", MODEL, "--progress")
    assert forced.code == 0, forced.err
    assert "━" in forced.err and "3/3 sessions" in forced.err and "sessions/s" in forced.err
    assert "Embedded 3 windows" in forced.out and "━" not in forced.out
    # the same bar as an import's (one piece of code): the rate and time left there too
    imported = run_cli(
        "import", "jsonl", str(DATA / "jsonl"), "--db", str(tmp_path / "i.db"), "--progress"
    )
    assert "jsonl import" in imported.err and "sessions/s" in imported.err
    assert "eta" in imported.err
