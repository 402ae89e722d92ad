"""``python -m langchain_session_recall``: the ``session-recall`` CLI."""

from langchain_session_recall.cli import run

run()
