"""Does a change to the Codex parse give the same reads as before? Dump what reading every
rollout of some Codex homes gives, compare two dumps.

Run ``dump`` with each checkout's package (``--package``: the root of a checkout, e.g. a copy
of main made with ``git archive``), on the same homes, then ``compare`` the two files::

    python scripts/codex_parse_identity.py junk /tmp/codex-junk
    python scripts/codex_parse_identity.py dump --package /tmp/parse-base --out /tmp/before.pkl \
        tests/data/codex /tmp/codex-junk /tmp/parsehome
    python scripts/codex_parse_identity.py dump --out /tmp/after.pkl \
        tests/data/codex /tmp/codex-junk /tmp/parsehome
    python scripts/codex_parse_identity.py compare /tmp/before.pkl /tmp/after.pkl

Each rollout is read as the import's worker reads it (``codex_pipe.read_batch``, messages as
rows, with and without resume points) and as the importing process does (``read_rollout``,
messages as dicts), and its lineage is read (``codex_rollout.lineage``): thread fields, keys,
messages (each with its type), reports (counts in the order they were first counted),
resume points. ``junk`` writes a home of rollouts holding the lines a parser meets besides
Codex's own (spaced heads, bad times, cut lines, odd roles, calls and outputs), seeded.
``compare`` prints each file whose reads differ and exits 1 when one does.
"""

from __future__ import annotations

import argparse
import json
import pickle
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _plain(value: Any) -> Any:
    """``value`` as comparable plain data: objects as their type and fields, dicts as
    lists of items (their order counts), floats by their repr."""
    if isinstance(value, dict):
        return ["dict", [(k, _plain(v)) for k, v in value.items()]]
    if isinstance(value, list | tuple):
        return [type(value).__name__, [_plain(v) for v in value]]
    if isinstance(value, float):
        return ["float", repr(value)]
    if hasattr(value, "__dataclass_fields__"):
        fields = value.__dataclass_fields__
        return [type(value).__name__, [(f, _plain(getattr(value, f))) for f in fields]]
    if hasattr(value, "__dict__"):
        return [type(value).__name__, _plain(vars(value))]
    return value


def _reads(home: Path) -> dict[str, Any]:
    from langchain_session_recall.importers.codex import rollout_files
    from langchain_session_recall.importers.codex_pipe import Batch, read_batch
    from langchain_session_recall.importers.codex_rollout import lineage, read_rollout
    from langchain_session_recall.importers.lines import bounded_lines
    from langchain_session_recall.importers.report import ImportReport

    files = rollout_files(home, report=ImportReport("codex"))
    out: dict[str, Any] = {}
    for keep in (False, True):
        for i in range(0, len(files), 64):
            threads = [[str(f)] for f in files[i : i + 64]]
            done = read_batch(Batch(str(home), False, keep, 64 * 2**20, threads))
            for files_of, reads in zip(threads, done, strict=True):
                out[f"batch keep={keep} {files_of[0]}"] = _plain(reads)
    for file in files:
        report = ImportReport("codex")
        with file.open("rb") as fh:
            read = read_rollout(file, fh, report, keep_point=False, max_line_bytes=2**20)
        out[f"serial {file}"] = _plain((read, report))
        with file.open("rb") as fh:
            lines = bounded_lines(fh, name=file.name, report=ImportReport("codex"))
            out[f"lineage {file}"] = lineage(lines, default_session_id=file.stem)
    return out


def dump(homes: list[Path], out: Path, package: Path | None) -> None:
    sys.path.insert(0, str(package or ROOT))
    import langchain_session_recall

    reads: dict[str, Any] = {}
    for home in homes:
        reads.update(_reads(home.resolve()))
    out.write_bytes(pickle.dumps(reads))
    print(f"{len(reads)} reads ({langchain_session_recall.__file__}) -> {out}")


def compare(before: Path, after: Path) -> int:
    old, new = pickle.loads(before.read_bytes()), pickle.loads(after.read_bytes())
    differ = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
    for key in differ[:20]:
        print(f"differs: {key}")
    print(f"{len(old)} reads before, {len(new)} after, {len(differ)} differ")
    return 1 if differ else 0


_HEADS = [
    '{{"timestamp":"{t}","type":"{k}","payload":{p}}}',
    '{{"timestamp": "{t}", "type": "{k}", "payload": {p}}}',
    '{{ "timestamp":"{t}" ,"type":"{k}","payload": {p} }}',
    '{{"type":"{k}","timestamp":"{t}","payload":{p}}}',
    '{{"timestamp":null,"type":"{k}","payload":{p}}}',
    '{{"timestamp":1795165205.5,"type":"{k}","payload":{p}}}',
    '{{"type":"{k}","payload":{p}}}',
]
_TIMES = [
    "2026-11-20T09:00:05Z", "2026-11-20T09:00:05.123Z", "2026-11-20T09:00:05.123456Z",
    "2026-11-20T09:00:05.1Z", "2026-11-20T09:00:05.12345Z", "2026-11-20T09:00:05+02:00",
    "2026-11-20T09:00:05", "2026-11-20", " 2026-11-20T09:00:05Z ", "2026-11-20t09:00:05z",
    "2026-11-20T09:00:60Z", "2026-13-20T09:00:05Z", "0000-01-01T00:00:00Z", "yesterday", "",
    "2026-11-20T09:00:05\\u005a", "2026-11-20T09:00:05.123Z\\n", "9999-12-31T23:59:59.999999Z",
    "２０２６-11-20T09:00:05Z",
]  # fmt: skip
_TEXTS = ["fix the build", "", "  ", "naïve café 😀", "cut \\ud83d emoji", "<environment_context>x",
          "x\\u0000y", "line\\nbreak"]  # fmt: skip


def _payload(rng: random.Random, n: int) -> tuple[str, str]:
    """A record type and payload JSON, drawn from what rollouts hold (and junk)."""
    text = json.dumps(rng.choice(_TEXTS))[1:-1].replace("\\\\u", "\\u").replace("\\\\n", "\\n")
    role = rng.choice(["user", "assistant", "developer", "system", "User", "tool", 7])
    call = rng.choice(["c1", "c2", f"c{n}", "", None, 3, ["x"]])
    args = rng.choice(['"{\\"cmd\\": \\"ls\\"}"', '"not json"', '{"cmd": "ls"}', "[1, 2]", "null",
                       '"{\\"n\\": NaN}"', '"{\\"a\\":1,\\"a\\":2}"', '"1.50"'])  # fmt: skip
    choices = [
        ("session_meta", f'{{"id":"t-{n % 3}","cwd":"/src","timestamp":"{rng.choice(_TIMES)}",'
                         '"git":{"branch":"main"},"source":"cli"}'),
        ("turn_context", '{"cwd":"/src/app","model":"gpt-5-codex"}'),
        ("event_msg", '{"type":"agent_message","message":"hi"}'),
        ("event_msg", '{"type":"reasoning","text":"x"}'),
        ("event_msg", '{ "type" : "reasoning"}'),
        ("response_item", '{"type":"reasoning","summary":[],"encrypted_content":"gAAA"}'),
        ("response_item", '{"type": "reasoning"}'),
        ("response_item", '{"id":"r","type":"reasoning"}'),
        ("response_item", f'{{"type":"message","role":{json.dumps(role)},'
                          f'"content":[{{"type":"input_text","text":"{text}"}}]}}'),
        ("response_item", f'{{"type":"message","role":"assistant","content":"{text}"}}'),
        ("response_item", f'{{"type":"function_call","name":"shell","arguments":{args},'
                          f'"call_id":{json.dumps(call)}}}'),
        ("response_item", f'{{"type":"custom_tool_call","name":"apply_patch","input":"{text}",'
                          f'"call_id":{json.dumps(call)}}}'),
        ("response_item", '{"type":"local_shell_call","call_id":"c3","action":{"command":["ls"]}}'),
        ("response_item", '{"type":"web_search_call","id":"w1","action":{"query":"x"}}'),
        ("response_item", f'{{"type":"function_call_output","call_id":{json.dumps(call)},'
                          f'"output":{json.dumps(rng.choice(["ok", {"content": "done"}, 5]))}}}'),
        ("response_item", '{"type":"function_call_output","call_id":"c1",'
                          '"output":"{\\"output\\":\\"inner\\",\\"metadata\\":{}}"}'),
        ("compacted", '{"message":"summary"}'),
        ("response_item", '"oops"'),
    ]  # fmt: skip
    return rng.choice(choices)


def junk(home: Path, files: int = 40, lines: int = 60, seed: int = 3) -> None:
    """A Codex home of rollouts of drawn lines (see :func:`_payload`), with blank, cut,
    CRLF and non-object lines among them."""
    rng = random.Random(seed)
    day = home / "sessions" / "2026" / "11" / "20"
    day.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        out: list[str] = []
        for n in range(lines):
            kind, payload = _payload(rng, n)
            line = rng.choice(_HEADS).format(t=rng.choice(_TIMES), k=kind, p=payload)
            odd = rng.random()
            if odd < 0.03:
                line = line[: rng.randrange(1, len(line))]
            elif odd < 0.05:
                line = rng.choice(["", "   ", "[1]", "7", "{}", '{"payload":{}}'])
            out.append(line + ("\r\n" if odd > 0.97 else "\n"))
        thread = f"0199{f:04x}-0000-7000-8000-{f:012x}"
        name = f"rollout-2026-11-20T09-00-{f % 60:02d}-{thread}.jsonl"
        (day / name).write_bytes("".join(out).encode("utf-8", "surrogatepass"))
    print(f"{files} rollouts -> {home}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("homes", nargs="+", type=Path)
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--package", type=Path, help="checkout whose package reads (default: this)")
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    j = sub.add_parser("junk")
    j.add_argument("home", type=Path)
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.homes, args.out, args.package)
        return 0
    if args.command == "junk":
        junk(args.home)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    raise SystemExit(main())
