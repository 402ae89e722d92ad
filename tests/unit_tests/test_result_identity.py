"""scripts/result_identity.py: two dumps of the same code compare equal; a changed text, a
changed metadata value or a missing Document is reported (exit 1); an ignored key is not."""

from __future__ import annotations

import pickle
from pathlib import Path
from types import ModuleType

import pytest
from file_modules import load_file

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "result_identity.py"


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return load_file(SCRIPT, "result_identity")


def _rows(
    text: str = "[USER]: hi", lead: str = ""
) -> dict[str, list[tuple[str, dict[str, object]]]]:
    meta = {"session_id": "s1", "recall": {"windows": ({"lead": lead, "messages": ()},)}}
    return {"q='hi'": [(text, meta)]}


def test_dumps_compare_equal_and_changes_are_found(
    tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "a.pkl"
    base.write_bytes(pickle.dumps(_rows()))
    assert tool.compare(base, base, []) == 0
    for name, rows in {
        "text": _rows(text="[USER]: hello"),
        "lead": _rows(lead="...cut"),
        "missing": {"q='hi'": []},
    }.items():
        other = tmp_path / f"{name}.pkl"
        other.write_bytes(pickle.dumps(rows))
        assert tool.compare(base, other, []) == 1, name
    assert tool.compare(base, tmp_path / "lead.pkl", ["recall.windows.lead"]) == 0
    assert "0 of 1 Documents differ" in capsys.readouterr().out


@pytest.mark.slow  # 300 searches of the demo store, twice
def test_a_dump_of_the_demo_store_compares_equal_to_itself(
    tool: ModuleType, tmp_path: Path
) -> None:
    first, second = tmp_path / "1.pkl", tmp_path / "2.pkl"
    tool.dump(None, first)
    tool.dump(None, second)
    assert tool.compare(first, second, ["store_id"]) == 0
    assert pickle.loads(first.read_bytes())
