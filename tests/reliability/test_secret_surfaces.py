"""Issue 21 §11: no secret leaves through the retriever, the tool, the MCP server, the CLI or
the logs, on both backends.

A session whose title, first message (the browse preview), transcript and tool-call arguments
hold secrets of the corpus is searched and browsed through every surface; no 12-character
piece of any of them may come out. ``redact=False`` on the retriever is the documented way to
get the stored text back.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from cli_support import run_cli
from langchain_core.documents import Document
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda
from reliability.secrets_corpus import SECRETS
from reliability.test_secrets import leaked
from store_targets import StoreFactory

from langchain_session_recall import SessionRecallRetriever, create_session_search_tool
from langchain_session_recall.summarize.summarizer import SessionSummarizer

KEY = next(s for s in SECRETS if s.kind == "openai_key")
GITHUB = next(s for s in SECRETS if s.kind == "github_classic")
ENV = next(s for s in SECRETS if s.kind == "env_password")
PEM = next(s for s in SECRETS if s.kind == "pem_rsa")
SHOWN = [KEY, GITHUB, ENV, PEM]


def _fill(store: Any) -> None:
    store.add_session("leaky", title=f"deploy with {KEY.value}", source="cli")
    store.add_messages(
        "leaky",
        [
            {"role": "user", "content": f"nginx deploy fails, token {GITHUB.value} and {KEY.text}"},
            {
                "role": "assistant",
                "content": "checking the nginx config",
                "tool_calls": [
                    {"id": "c1", "name": "terminal", "args": {"command": f"echo {KEY.value}"}}
                ],
            },
            {"role": "tool", "content": ENV.text, "tool_call_id": "c1", "tool_name": "terminal"},
            {"role": "assistant", "content": f"nginx key file:\n{PEM.text}"},
        ],
    )


def _leaks(text: str) -> list[str]:
    return [s.kind for s in SHOWN if leaked(s, text)]


@pytest.fixture
def leaky(store_factory: StoreFactory) -> Any:
    store = store_factory.open("leaky")
    _fill(store)
    return store


def _all_text(docs: list[Document]) -> str:
    return "\n".join(d.page_content + json.dumps(d.metadata, default=str) for d in docs)


def test_the_retriever_redacts_by_default_and_not_when_told(leaky: Any) -> None:
    retriever = SessionRecallRetriever(store=leaky)
    found, recent = retriever.invoke("nginx deploy"), retriever.invoke("")
    assert found and recent
    assert _leaks(_all_text(found)) == [] and _leaks(_all_text(recent)) == []
    assert "[REDACTED" in found[0].metadata["title"] and "[REDACTED" in found[0].page_content
    assert "[REDACTED" in recent[0].metadata["preview"]
    raw = SessionRecallRetriever(store=leaky, redact=False).invoke("nginx deploy")
    assert KEY.value in raw[0].metadata["title"]  # the switch gives the stored text back


def test_a_standard_lcel_chain_sends_the_model_no_secret(leaky: Any) -> None:
    """``retriever | format_docs | prompt | llm``: what the model receives is recorded by a
    local fake model (LangChain's ``GenericFakeChatModel``; no server, no recording)."""
    seen: list[str] = []

    def format_docs(docs: list[Document]) -> str:
        return "\n\n".join(f"{d.metadata['title']}\n{d.page_content}" for d in docs)

    def record(value: Any) -> Any:
        seen.append(value.to_string())
        return value

    prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
    llm = GenericFakeChatModel(messages=iter([AIMessage("ok")]))
    retriever = SessionRecallRetriever(store=leaky)
    chain = (
        {"context": retriever | format_docs, "question": RunnableLambda(lambda q: q)}
        | prompt
        | RunnableLambda(record)
        | llm
    )
    chain.invoke("nginx deploy")
    assert seen and "nginx" in seen[0]
    assert _leaks(seen[0]) == []


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_tool_never_returns_a_secret(leaky: Any, mode: str) -> None:
    tool = create_session_search_tool(leaky)
    for arguments in ({"query": "nginx deploy"}, {"query": ""}):
        out = tool.invoke(arguments) if mode == "sync" else await tool.ainvoke(arguments)
        payload = json.loads(out)
        assert payload["count"] == 1, payload
        assert _leaks(out) == [], (arguments, out)
    echoed = json.loads(tool.invoke({"query": f"nginx {KEY.value}"}))
    assert KEY.value not in echoed["query"]


async def test_the_mcp_server_never_returns_a_secret(leaky: Any) -> None:
    from mcp.shared.memory import create_connected_server_and_client_session

    from langchain_session_recall.mcp_server import create_mcp_server

    server = create_mcp_server(leaky)
    async with create_connected_server_and_client_session(server) as client:
        texts = []
        for arguments in ({"query": "nginx deploy"}, {}):
            result = await client.call_tool("session_search", arguments)
            texts.append(result.content[0].text)  # type: ignore[union-attr]
        shown = await client.call_tool("session_show", {"session_id": "leaky"})
        texts.append(shown.content[0].text)  # type: ignore[union-attr]
    assert all(json.loads(t)["success"] for t in texts)
    assert _leaks("\n".join(texts)) == []


def test_the_cli_never_prints_a_secret(leaky: Any, store_factory: StoreFactory) -> None:
    db = store_factory.target("leaky").db
    for argv in (
        ["search", "nginx deploy", "--db", db],
        ["search", "nginx deploy", "--db", db, "--json"],
        ["search", "", "--db", db],
        ["recent", "--db", db],
        ["recent", "--db", db, "--json"],
        ["show", "leaky", "--db", db, "--no-pager"],
        ["show", "leaky", "--db", db, "--json"],
    ):
        result = run_cli(*argv)
        assert result.code == 0, (argv, result.err)
        assert _leaks(result.out + result.err) == [], argv
        assert "[REDACTED" in result.out, argv


def test_the_summarizer_logs_no_secret(caplog: pytest.LogCaptureFixture) -> None:
    """The model's failure quoted the request's Authorization header (as an HTTP client's
    error can): the log line and ``summary_error`` carry it redacted."""
    header = f"Authorization: Bearer {KEY.value}"

    def failing(_: Any) -> Any:
        raise RuntimeError(f"400 Bad Request; request headers: {header}")

    doc = Document(
        page_content="[USER #1]: nginx deploy", metadata={"session_id": "s1", "query": "nginx"}
    )
    caplog.set_level(logging.DEBUG)
    summarizer = SessionSummarizer(
        llm=RunnableLambda(failing),
        cache=False,
        max_attempts=1,
        temperature=None,
        max_output_tokens=None,
    )
    [out] = summarizer.invoke([doc])
    assert out.metadata["summary_status"] == "fallback"
    assert "summary of session s1 failed" in caplog.text
    assert KEY.value not in caplog.text and KEY.value not in out.metadata["summary_error"]
    assert "[REDACTED" in caplog.text


# Issue 32 item 8: a key in an identifier (a session id, a sub-session's id, the source, the
# model, a tool's name) reached the tool's reply, the Documents, the MCP and CLI JSON and the
# summarizer's prompt unredacted.
HF = next(s for s in SECRETS if s.kind == "huggingface")
GITLAB = next(s for s in SECRETS if s.kind == "gitlab_pat")
NPM = next(s for s in SECRETS if s.kind == "npm")
ROOT = f"run-{KEY.value}"
IDS = [KEY, GITHUB, HF, GITLAB, NPM]


def _fill_ids(store: Any) -> None:
    store.add_session(ROOT, source=f"bot-{GITHUB.value}", model=f"gpt-4o/{HF.value}", title="x")
    store.add_messages(ROOT, [{"role": "user", "content": "the nginx deploy failed again"}])
    child = f"sub-{GITLAB.value}"
    store.add_session(child, parent_session_id=ROOT, source="subagent")
    store.add_messages(
        child,
        [
            {"role": "assistant", "content": "looking at nginx logs"},
            {"role": "tool", "content": "nginx: ok", "tool_name": f"t-{NPM.value}"},
        ],
    )


def _id_leaks(text: str) -> list[str]:
    return [s.kind for s in IDS if leaked(s, text)]


@pytest.fixture
def ids_store(store_factory: StoreFactory) -> Any:
    store = store_factory.open("ids")
    _fill_ids(store)
    return store


def test_identifiers_are_redacted_in_documents_and_the_tool_reply(ids_store: Any) -> None:
    retriever = SessionRecallRetriever(store=ids_store)
    found, recent = retriever.invoke("nginx deploy"), retriever.invoke("")
    assert found and recent
    for doc in (*found, *recent):
        assert _id_leaks(_all_text([doc]) + str(doc.id)) == []
    assert found[0].metadata["session_id"] == "run-[REDACTED:openai_key]" == found[0].id
    tool = create_session_search_tool(ids_store)
    for arguments in ({"query": "nginx deploy"}, {"query": ""}):
        out = tool.invoke(arguments)
        assert json.loads(out)["count"] == 1
        assert _id_leaks(out) == [], out


async def test_identifiers_are_redacted_over_mcp_and_the_shown_id_still_opens(
    ids_store: Any,
) -> None:
    """``session_show`` is given the id as ``session_search`` showed it (redacted) and finds
    the session: the lookup matches the shown id against the store's ids."""
    from mcp.shared.memory import create_connected_server_and_client_session

    from langchain_session_recall.mcp_server import create_mcp_server

    async with create_connected_server_and_client_session(create_mcp_server(ids_store)) as c:
        found = await c.call_tool("session_search", {"query": "nginx deploy"})
        text = found.content[0].text  # type: ignore[union-attr]
        shown_id = json.loads(text)["results"][0]["session_id"]
        shown = await c.call_tool("session_show", {"session_id": shown_id})
        show_text = shown.content[0].text  # type: ignore[union-attr]
    payload = json.loads(show_text)
    assert payload["success"] and payload["message_count"] == 3, payload
    assert "nginx: ok" in payload["transcript"]
    assert _id_leaks(text) == [] and _id_leaks(show_text) == []


def test_identifiers_are_redacted_by_the_cli(ids_store: Any, store_factory: StoreFactory) -> None:
    db = store_factory.target("ids").db
    shown_id = "run-[REDACTED:openai_key]"
    for argv in (
        ["search", "nginx deploy", "--db", db, "--json"],
        ["search", "nginx deploy", "--db", db],
        ["recent", "--db", db, "--json"],
        ["show", ROOT, "--db", db, "--json"],
        ["show", shown_id, "--db", db, "--json"],  # the id as the CLI showed it
        ["show", shown_id, "--db", db, "--no-pager"],
    ):
        result = run_cli(*argv)
        assert result.code == 0, (argv, result.err)
        assert _id_leaks(result.out + result.err) == [], argv
        assert "nginx" in result.out, argv


def test_identifiers_never_reach_the_summarizer_prompt(
    ids_store: Any, store_factory: StoreFactory
) -> None:
    """The prompt (source, session id in the extractive header and the log lines) carries no
    key; the recap is cached under the real session id, so ``forget`` finds it."""
    prompts: list[str] = []

    def model(value: Any) -> AIMessage:
        prompts.append(value.to_string())
        return AIMessage("The nginx deploy failed and was looked at.")

    retriever = SessionRecallRetriever(store=ids_store)
    summarizer = SessionSummarizer(
        llm=RunnableLambda(model),
        store=ids_store,
        grounding=False,
        quality_gate=False,
        temperature=None,
        max_output_tokens=None,
    )
    [recap] = summarizer.invoke(retriever.invoke("nginx deploy"))
    assert prompts and _id_leaks("\n".join(prompts)) == []
    assert "bot-[REDACTED:github_token]" in prompts[0]  # the source, redacted
    assert _id_leaks(recap.page_content + json.dumps(recap.metadata, default=str)) == []
    with store_factory.target("ids").sql() as sql:
        cached = sql.execute("SELECT session_id FROM summary_cache")
    assert cached == [(ROOT,)]
