"""Regenerate ``hermes_state.db``: a small Hermes-format session database for the notebooks.

Layout 3 (FTS5 over the ``messages_fts_src`` view, Hermes schema v23+), DELETE journal mode so
the committed file is self-contained. Run from anywhere:

    python notebooks/data/make_hermes_sample.py
"""

import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests"))

from hermes_fixtures import build_hermes_db  # noqa: E402

TARGET = HERE / "hermes_state.db"
MAX_BYTES = 300_000


def main() -> None:
    build_hermes_db(TARGET, 3, wal=False)
    conn = sqlite3.connect(TARGET)
    conn.execute("VACUUM")
    conn.close()
    size = TARGET.stat().st_size
    if size > MAX_BYTES:
        raise SystemExit(f"{TARGET} is {size} bytes, over the {MAX_BYTES} budget")
    print(f"wrote {TARGET} ({size} bytes)")


if __name__ == "__main__":
    main()
