"""The Codex parse's fast paths give what the general ones give: the head of a line left out
(a compact head read without ``_LEFT_OUT``), a message dict's row (``to_row`` without its
general layers), a row made through its slots. ``scripts/codex_parse_identity.py`` compares
whole reads before and after a change; these pin the pieces."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest

from langchain_session_recall.errors import InvalidMessageError
from langchain_session_recall.importers.codex_rollout import _LEFT_OUT, _left_out
from langchain_session_recall.messages import MessageRow, _row, storable_text, to_row

_STAMP = "2026-11-20T09:00:05.123Z"
_PAYLOADS = [
    '{"type":"token_count"}',
    '{"type":"reasoning","summary":[]}',
    '{"type":"reasoningX"}',
    '{ "type":"reasoning"}',
    '{"type" : "reasoning"}',
    '{"id":"r","type":"reasoning"}',
    "{}",
    '"oops"',
]
_HEADS = [
    '{{"timestamp":"{t}","type":"{k}","payload":{p}}}',
    '{{"timestamp": "{t}", "type": "{k}", "payload": {p}}}',
    '{{"timestamp":"{t}","type":"{k}", "payload":{p}}}',
    '{{"timestamp":null,"type":"{k}","payload":{p}}}',
    '{{"type":"{k}","timestamp":"{t}","payload":{p}}}',
    '{{"timestamp":"{t}","type":"{k}"',
]
_KINDS = ["event_msg", "response_item", "turn_context", "event_msgs", "event\\u005fmsg", ""]
_TIMES = [_STAMP, "", "a\\u005a", 'x\\"y']


@pytest.mark.parametrize("head", _HEADS)
def test_a_left_out_head_is_read_as_the_expression_reads_it(head: str) -> None:
    lines = [head.format(t=t, k=k, p=p) + "\n" for t in _TIMES for k in _KINDS for p in _PAYLOADS]
    for line in lines:
        match = _LEFT_OUT.match(line)
        stamp, kind, reasoning = (None, None, None) if match is None else match.groups()
        left_out = match is not None and (kind == "event_msg" or reasoning is not None)
        assert _left_out(line) == ((stamp, reasoning is not None) if left_out else None), line


_DICTS: list[dict[str, Any]] = [
    {"role": "user", "content": "hi", "timestamp": 5.0},
    {"role": "User", "content": "hi", "timestamp": 5},
    {"role": "human", "content": ["a", {"type": "text", "text": "b"}], "timestamp": 1.5},
    {"role": "tool", "content": None, "name": "grep", "tool_call_id": 7, "timestamp": 2.0},
    {"role": "tool", "content": "x", "tool_name": None, "name": "grep", "timestamp": 2.0},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "name": "sh", "args": {}}],
        "timestamp": 3.0,
    },
    {"role": "assistant", "content": "cut \ud83d", "tool_calls": [], "timestamp": 3.0},
    {"role": "assistant", "content": "naïve", "tool_calls": "", "timestamp": 3.0},
]


class _Mapping(dict[str, Any]):
    """A mapping that is not exactly a dict: ``to_row`` reads it the general way."""


@pytest.mark.parametrize("message", _DICTS)
def test_a_message_dict_gives_the_row_any_mapping_gives(message: dict[str, Any]) -> None:
    row = to_row(message, now=9.0)
    assert row == to_row(_Mapping(message), now=9.0)
    assert type(row.timestamp) is float and row.content == storable_text(row.content)


@pytest.mark.parametrize(
    ("message", "fragment"),
    [
        ({"role": ["user"], "content": "x"}, "role must be a string"),
        ({"role": "user", "content": "x", "timestamp": float("nan")}, "finite"),
        ({"role": "user", "content": "x", "timestamp": True}, "finite"),
        ({"role": "user", "content": "x", "timestamp": 1.0, "tool_calls": 5}, "list"),
    ],
)
def test_a_message_dict_is_refused_as_any_mapping_is(
    message: dict[str, Any], fragment: str
) -> None:
    for given in (message, _Mapping(message)):
        with pytest.raises(InvalidMessageError, match=fragment):
            to_row(given)


def test_a_row_made_through_its_slots_is_the_dataclass_row() -> None:
    fields = ("tool", "out", 4.0, "c1", None, "shell", None)
    row = _row(*fields)
    assert type(row) is MessageRow and row == MessageRow(*fields)
    assert hash(row) == hash(MessageRow(*fields))
    again = pickle.loads(pickle.dumps(row, protocol=5))
    assert type(again) is MessageRow and again == row
    with pytest.raises(AttributeError):
        row.role = "user"  # type: ignore[misc]  # (frozen)


@pytest.mark.parametrize("call_id", ["call_1", 'naïve "q" \\ \n\t\x01 😀', "cut \ud83d", 7, None])
@pytest.mark.parametrize(
    "args", [{"command": ["bash", "-lc", "ls"]}, "raw text", {"é": 1.5, "n": None}, [1, "x"]]
)
def test_one_tool_call_is_written_as_the_encoder_writes_it(call_id: Any, args: Any) -> None:
    from langchain_session_recall.messages import _openai_tool_calls

    for name in ("shell", 'ünï "code"', 3):
        arguments = args if isinstance(args, str) else json.dumps(args)
        made = {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }
        expected = storable_text(json.dumps([made], ensure_ascii=False))
        assert _openai_tool_calls([{"id": call_id, "name": name, "args": args}]) == expected


def test_a_message_takes_the_time_to_timestamp_gives_the_last_line_with_one() -> None:
    from langchain_session_recall.dates import to_timestamp
    from langchain_session_recall.importers.codex_rollout import Rollout, _parse
    from langchain_session_recall.importers.report import ImportReport

    said = '{"type":"message","role":"user","content":"hi"}'
    event = '{"type":"token_count"}'
    stamps = ["2026-11-20T09:00:05.123Z", None, 1795165205.5, "", " 2026-11-20T09:00:07+02:00 ",
              "2026-11-20T09:00:08", "yesterday"]  # fmt: skip
    lines, expected = [], []
    for stamp in stamps:
        head = "" if stamp is None else f'"timestamp":{json.dumps(stamp)},'
        lines.append(f'{{{head}"type":"event_msg","payload":{event}}}\n')
        lines.append(f'{{{head}"type":"response_item","payload":{said}}}\n')
        if stamp == "yesterday":  # (a bad time: the line is skipped, its message too)
            continue
        if stamp not in (None, ""):
            moment = to_timestamp(stamp)
        expected.append(moment)
    report = ImportReport("codex")
    rollout = Rollout(report, "t")
    _parse(rollout, lines, "r.jsonl")
    assert [m["timestamp"] for _, m in rollout.numbered] == expected
    assert rollout.state()["when"] == expected[-1]
    assert report.problems == ["r.jsonl:13: bad timestamp", "r.jsonl:14: bad timestamp"]
