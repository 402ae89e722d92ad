"""The ``session-recall`` command group (click): the commands, one module a job, joined here.

Each command reads its options, does its work through the store, and either writes one JSON
document (``--json``) or hands the result to :mod:`~langchain_session_recall.cli.output` (rich,
imported only then). Errors are raised, not printed: :func:`langchain_session_recall.cli.main`
turns each kind into its message and exit code. LangChain and model libraries are imported only
by the commands that need them (``--summarize``, ``import langgraph``, ``mcp --model``).

The commands: :mod:`~langchain_session_recall.cli.search` (``search``, ``recent``),
:mod:`~langchain_session_recall.cli.show`, :mod:`~langchain_session_recall.cli.importing`
(``import KIND``), :mod:`~langchain_session_recall.cli.maintenance` (``stats``, ``check``,
``forget``, ``embed``), :mod:`~langchain_session_recall.cli.demo` and
:mod:`~langchain_session_recall.cli.serve` (``mcp``); what they share is in
:mod:`~langchain_session_recall.cli.state`.
"""

from __future__ import annotations

import click

from langchain_session_recall.cli.demo import demo
from langchain_session_recall.cli.importing import import_, sync
from langchain_session_recall.cli.maintenance import check, embed, forget, stats
from langchain_session_recall.cli.search import recent, search
from langchain_session_recall.cli.serve import mcp
from langchain_session_recall.cli.show import show
from langchain_session_recall.cli.state import DEMO_SHOW_ID, exit_codes_help

__all__ = ["app"]

_EXAMPLES = f"""Examples:

\b
  session-recall demo
  session-recall import hermes ~/.hermes/state.db --db recall.db
  session-recall import claude-code ~/.claude/projects --db recall.db
  session-recall search "how did we fix the CORS error?" --db recall.db
  session-recall search "CORS" --db ~/.hermes/state.db --read-only
  session-recall search 'docker OR kubernetes' --db recall.db -k 5 --after 2026-11-01 --json
  session-recall search deploy --db recall.db --summarize --model gpt-4.1-mini
  session-recall recent --db recall.db --user alice
  session-recall show {DEMO_SHOW_ID} --db /tmp/session-recall-demo.db
  session-recall stats --db postgresql://app@db/agents
  session-recall mcp --db recall.db --read-only

{exit_codes_help()}"""


@click.group(
    epilog=_EXAMPLES,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(
    package_name="langchain-session-recall",
    prog_name="session-recall",
    message="%(prog)s %(version)s",
)
def app() -> None:
    """Search, browse and import an agent's past sessions.

    A session database is a SQLite file (a Hermes state.db too, with --read-only) or a
    PostgreSQL DSN. Run `session-recall COMMAND --help` for a command's options.
    """


for _command in (search, recent, show, stats, check, import_, sync, forget, embed, demo, mcp):
    app.add_command(_command)
