"""Where redaction used to live: :mod:`langchain_session_recall.core.redaction` now.

Redaction is a concern of every text that leaves (Documents, the tool's and the MCP server's
replies, the CLI's output, the summarizer's prompts), so it sits below them all rather than
in ``summarize/``. This path keeps working for code that imports it, and for the benchmarks
that load the rules of an older checkout (``--rules-from``).
"""

from langchain_session_recall.core.redaction import *  # noqa: F403
from langchain_session_recall.core.redaction import __all__ as __all__
