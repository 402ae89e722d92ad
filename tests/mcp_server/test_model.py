"""``session-recall mcp --model``: recaps come from an OpenAI-compatible server named by
``OPENAI_BASE_URL`` (here a local stub on 127.0.0.1, no key), and its requests carry the model
name and the matched transcript."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_server.mcp_support import PGBOUNCER, payload_of, server_command
from reliability.llm_stub import FaultyLLMServer

pytestmark = pytest.mark.allow_hosts(["127.0.0.1"])

RECAP = (
    "Postgres hit max_connections=100 after the deploy; pgbouncer in transaction mode on port "
    "6432 fixed it."
)


@pytest.mark.slow  # a server subprocess loading the model libraries
async def test_model_recaps_through_an_openai_compatible_endpoint(
    demo_db: Path, tmp_path: Path
) -> None:
    with FaultyLLMServer(reply=lambda body: RECAP) as llm:
        command, *args = server_command(demo_db, "--read-only", "--model", "stub-model")
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_BASE_URL": llm.base_url}
        params = StdioServerParameters(command=command, args=args, env=env)
        with (tmp_path / "server.log").open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                found = payload_of(
                    await client.call_tool("session_search", {"query": "pgbouncer", "limit": 1})
                )
                recent = payload_of(await client.call_tool("session_search", {}))
        requests = list(llm.requests)

    assert found["results"][0]["session_id"] == PGBOUNCER
    # The model's recap, with the ids of the messages supporting it written in by the summarizer:
    # #58 alone since its write_file call shows pgbouncer.ini (listen_port = 6432, pool_mode =
    # transaction) in the transcript (issue 23 §2; before, #60's "port 6432" was needed too).
    assert found["results"][0]["summary"] == RECAP.replace("fixed it.", "fixed it [#58].")
    assert recent["mode"] == "recent"  # browsing never calls the model
    assert len(requests) == 1
    assert requests[0]["model"] == "stub-model"
    assert "pool_mode=transaction" in json.dumps(requests[0]["messages"])
