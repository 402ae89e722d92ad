"""Runs of ledger keys (pure): whatever a batch's keys and ids, the runs and single keys it is
split into give back every key with its message's id, each once, and a run holds only keys
of one prefix with rising numbers and consecutive ids."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from langchain_session_recall.backends.common.ledger_runs import (
    key_numbers,
    keyed,
    numbered,
    parse_keys,
    run_keys,
    run_numbers,
    split_into_runs,
)

_PREFIXES = st.sampled_from(["t", "thread-1", "a:b", "f.jsonl", ""])
_KEY = st.one_of(
    st.builds(lambda p, n: f"{p}:{n}", _PREFIXES, st.integers(0, 10**15)),
    st.sampled_from(["odd", "x:01", "x:-1", "x:", "x:1e3", "y:١٢", "z:9999999999999999"]),
)


@st.composite
def _batches(draw: st.DrawFn) -> tuple[list[str], list[int]]:
    keys = draw(st.lists(_KEY, max_size=40, unique=True))
    start = draw(st.integers(1, 10**9))
    steps = draw(st.lists(st.sampled_from([1, 1, 1, 2, 7]), min_size=len(keys), max_size=len(keys)))
    ids, mid = [], start
    for step in steps:
        ids.append(mid)
        mid += step
    return keys, ids


@given(_batches())
def test_the_runs_and_single_keys_give_back_every_key_with_its_id(
    batch: tuple[list[str], list[int]],
) -> None:
    keys, ids = batch
    runs, single = split_into_runs(keys, ids)
    back = dict(single)
    for run in runs:
        held = run_keys(run)
        assert run.size == len(held)
        numbers = run_numbers(run.first, run.gaps)
        assert numbers == sorted(set(numbers))  # rising
        assert run.message_id is not None
        for n, key in enumerate(held):
            assert numbered(key) == (run.prefix, numbers[n])
            assert key not in back
            back[key] = run.message_id + n  # consecutive ids
    assert back == dict(zip(keys, ids, strict=True))
    assert all(numbered(key) is None for key, _ in single)  # (every numbered key in a run)
    # found again, all of them or those asked about
    rows = [(r.prefix, r.first, r.gaps) for r in runs]
    in_runs = {key for r in runs for key in run_keys(r)}
    assert keyed(rows, None) == in_runs
    asked = key_numbers(parse_keys(keys[::2]))
    assert keyed(rows, asked) == in_runs & set(keys[::2])


def test_keys_of_another_spelling_are_not_numbered() -> None:
    assert [numbered(k) for k in ("x:01", "x:-1", "x:", "x:1e3", "y:١٢", "12")] == [None] * 6
    assert numbered("z:999999999999999") == ("z", 999_999_999_999_999)
    assert numbered("z:9999999999999999") is None  # (over 15 digits)
