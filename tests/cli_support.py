"""Helpers of the CLI tests: run ``main`` in-process and capture both streams."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass

from langchain_session_recall.cli import main


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_cli(*argv: str) -> Result:
    """``session-recall ARGV`` in this process: exit code, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(list(argv), out=out)
    return Result(code, out.getvalue(), err.getvalue())
