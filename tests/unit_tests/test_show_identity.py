"""scripts/show_identity.py: a dump of ``session_show`` payloads compares equal to itself; a
changed payload or a missing call is reported (exit 1)."""

from __future__ import annotations

import pickle
from pathlib import Path
from types import ModuleType

import pytest
from file_modules import load_file

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "show_identity.py"


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return load_file(SCRIPT, "show_identity")


def test_a_dump_compares_equal_to_itself_and_changes_are_found(
    tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "base.pkl"
    tool.dump([], base, 2)
    rows = pickle.loads(base.read_bytes())
    assert len(rows) > 50 and all("transcript" in p for p in rows.values() if isinstance(p, dict))
    assert tool.compare(base, base) == 0
    key = next(iter(rows))
    for name, changed in {
        "text": {**rows, key: {**rows[key], "transcript": "other"}},
        "missing": {k: v for k, v in rows.items() if k != key},
    }.items():
        other = tmp_path / f"{name}.pkl"
        other.write_bytes(pickle.dumps(changed))
        assert tool.compare(base, other) == 1, name
    assert "1 of" in capsys.readouterr().out
