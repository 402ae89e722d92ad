"""Write the notebooks from their cell sources and execute them in place (outputs stored).

python notebooks/build_notebooks.py            # replaying cassettes
RECORD=1 python notebooks/build_notebooks.py   # against the local LLM server, re-recording
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent


def md(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(text.strip())


def code(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(text.strip())


SETUP = code(
    """
%config InlineBackend.figure_format = "png"
import _support  # real model with OPENAI_API_KEY, recorded otherwise (see _support.py)
"""
)

QUICKSTART = [
    md(
        """
# Quickstart: recall past agent sessions

An agent forgets everything when a session ends. `langchain-session-recall` keeps every session in
SQLite with a full-text index, finds the sessions that answer a question like *"how did we fix
the CORS error?"*, and recaps them with a chat model.

This notebook runs offline: model calls replay from `cassettes/`, real HTTP traffic recorded
against SmolLM2-135M-Instruct, a tiny local model served by llama.cpp. Its answers are mostly not
recaps, and the summarizer's quality gate rejects them: below, each rejected answer is shown as
rejected, with the gate's reasons, next to the extractive recap that replaced it. Set
`OPENAI_API_KEY` to run it against a real model.
"""
    ),
    SETUP,
    md(
        "## 1. A store with some history\nThe package ships realistic sample sessions: debugging, scripts, design decisions, a sub-agent, a Chinese-language session, cron runs."
    ),
    code(
        """
import tempfile
from pathlib import Path

from langchain_session_recall import SessionRecallRetriever
from langchain_session_recall.demo import build_demo_store

store = build_demo_store(Path(tempfile.mkdtemp()) / "recall.db")
sessions = store.recent_sessions(limit=100, exclude_sources=())
print(len(sessions), "root sessions")
"""
    ),
    md(
        "## 2. Search\nA natural question works: stop words are dropped and any content word may match; sessions are ranked by all their matching messages."
    ),
    code(
        """
retriever = SessionRecallRetriever(store=store, k=5)
docs = retriever.invoke("how did we fix the CORS error?")
for d in docs:
    m = d.metadata
    print(f"{m['score']:6.2f}  {m['when']}  {m['source']:<9} {m['title']}")
"""
    ),
    md(
        "Each result is one `Document` per session: the transcript of its whole chain (sub-agents and continuations included), windowed around the first match."
    ),
    code("print(docs[0].page_content[:700])"),
    md("### Which sessions matched, and how strongly"),
    code(
        """
import matplotlib.pyplot as plt

query = "docker OR postgres OR nginx OR backup"
hits = SessionRecallRetriever(store=store, k=5).invoke(query)
labels = [d.metadata["title"][:45] for d in hits][::-1]
scores = [d.metadata["score"] for d in hits][::-1]
fig, ax = plt.subplots(figsize=(8, 3))
ax.barh(labels, scores, color="#4c72b0")
ax.set_xlabel("session score (sum of matching messages, decayed)")
ax.set_title(f"search: {query}")
fig.tight_layout()
"""
    ),
    md(
        "## 3. Browse recent sessions\nAn empty query lists recent sessions: no search, no model, instant."
    ),
    code(
        """
browse = SessionRecallRetriever(store=store, exclude_sources=("tool", "cron"))  # skip automation
for d in browse.invoke("", k=5):
    print(d.metadata["when"], "|", d.metadata["source"], "|", d.metadata["title"])
"""
    ),
    md("### Sessions over time, by source"),
    code(
        """
import datetime as dt

by_source = {}
for s in sessions:
    by_source.setdefault(s.source, []).append(
        dt.datetime.fromtimestamp(s.started_at, dt.timezone.utc)
    )
fig, ax = plt.subplots(figsize=(8, 2.5))
for row, (source, times) in enumerate(sorted(by_source.items())):
    ax.scatter(times, [row] * len(times), s=40, label=source)
ax.set_yticks(range(len(by_source)), sorted(by_source))
ax.set_title("root sessions per source")
fig.autofmt_xdate()
fig.tight_layout()
"""
    ),
    md(
        "## 4. Summarize\n`create_session_recall_chain(retriever, llm)` takes the query string and returns one recap per session. Sessions are summarized in parallel, with retries, an overall deadline and an extractive fallback; secrets are redacted before anything leaves the process.\n\nEvery model answer goes through a quality gate. `summary_status` says what happened to each session: `summarized` (the model's recap passed), `rejected` (the model answered, the gate found it is not a recap: `summary_rejected_because` gives the reasons, `summary_rejected_text` the answer, and the Document carries the extractive recap instead), `fallback` (no answer: error, deadline or no model) or `cached`."
    ),
    code(
        """
import textwrap

from langchain_session_recall import create_session_recall_chain

llm = _support.chat_model(temperature=0.1)
chain = create_session_recall_chain(
    SessionRecallRetriever(store=store, k=2),
    llm,
    max_output_tokens=96,
    max_tokens_param=_support.max_tokens_param(),
    timeout=_support.deadline(),  # seconds for all sessions; longer while recording
)
with _support.recorded("notebook_01_summarize"):
    recaps = chain.invoke("how did we fix the CORS error?")
print("recaps by", recaps[0].metadata["summary_model"], "\\n")
for r in recaps:
    m = r.metadata
    print(f"=== {m['title']}: {m['summary_status']}")
    if m["summary_status"] == "rejected":
        print(
            "model's answer, REJECTED by the quality gate because:",
            ", ".join(m["summary_rejected_because"]),
        )
        print(textwrap.indent(textwrap.shorten(m["summary_rejected_text"], 500), "  | "))
        print("replaced by the extractive recap:")
    print(textwrap.indent(r.page_content.strip()[:600], "    "), "\\n")
"""
    ),
    md(
        "Run it again: the cache in the session database answers, with no model call. A recap that passed the gate comes back as `cached`; a rejected answer stays rejected (the verdict is cached with it), it never turns into a summary."
    ),
    code(
        """
again = chain.invoke("how did we fix the CORS error?")
for r in again:
    m = r.metadata
    print(
        m["title"],
        "->",
        m["summary_status"],
        m.get("summary_rejected_because", ""),
        "| from the cache:",
        m["summary_status"] == "cached" or m.get("summary_from_cache", False),
    )
"""
    ),
]

AGENT = [
    md(
        """
# An agent that recalls a past fix

`create_session_search_tool(store, llm)` gives an agent a `session_search` tool. Its description
tells the model to use it when the user says "we did this before" or asks about earlier work; the
current conversation is never searched (its id comes from the run config, not from the model).

**What is real here, and what is scripted.** The committed recordings come from
SmolLM2-135M-Instruct, which cannot drive this tool: it ignores the `tools` of a request, and
forced with `tool_choice` it fills the arguments with junk (no `query` at all, a `role_filter` of
`"1.0.3"`). So, offline, the agent's own turns come from a **scripted** chat model, not a language
model: it makes the tool call, and its final message only lists what the tool returned, marked as
scripted. The tool itself is real: it searches the store, and its summarizer's calls to SmolLM2
are real HTTP traffic (replayed from `cassettes/notebook_02_agent.yaml.gz`), which the quality
gate rejects. With `OPENAI_API_KEY` set, or with cassettes recorded from a model that can call
tools, a language model drives the agent; the cell below prints which.
"""
    ),
    SETUP,
    code(
        """
import json
import tempfile
from pathlib import Path

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from langchain_session_recall import create_session_search_tool
from langchain_session_recall.demo import build_demo_store

store = build_demo_store(Path(tempfile.mkdtemp()) / "recall.db")
tool = create_session_search_tool(
    store,
    llm=_support.chat_model(temperature=0.1),
    max_output_tokens=96,
    max_tokens_param=_support.max_tokens_param(),
    timeout=_support.deadline(),  # seconds for all sessions; longer while recording
)
print(tool.description[:400], "...")
"""
    ),
    code(
        """
class ScriptedAgentModel(BaseChatModel):
    \"\"\"SCRIPTED stand-in for the agent's model (no language model): it calls session_search
    once, then replies with a list of what the tool returned, marked as scripted.\"\"\"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        tool_results = [m for m in messages if m.type == "tool"]
        if not tool_results:
            call = {
                "name": "session_search",
                "args": {"query": "CORS error nginx", "limit": 2},
                "id": "call_1",
            }
            reply = AIMessage("", tool_calls=[call])
        else:
            found = json.loads(tool_results[-1].content)["results"]
            lines = ["[SCRIPTED reply, not written by a model] session_search returned:"]
            lines += [f"- {r['when']}: {r['title']}" for r in found]
            reply = AIMessage("\\n".join(lines))
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def bind_tools(self, tools, **kwargs):
        return self

    @property
    def _llm_type(self):
        return "scripted-agent"


if _support.agent_model_calls_tools():  # live, or recorded from a model that can call tools
    agent_model = _support.chat_model(temperature=0)
    print("agent's model:", agent_model.model_name)
else:
    agent_model = ScriptedAgentModel()
    print("agent's model: SCRIPTED (no language model)")

agent = create_agent(
    agent_model,
    tools=[tool],
    system_prompt="You are a coding assistant with recall of past sessions.",
)
with _support.recorded("notebook_02_agent"):
    result = agent.invoke(
        {
            "messages": [
                {"role": "user", "content": "The CORS error is back. How did we fix it last time?"}
            ]
        },
        config={"configurable": {"session_id": "today-chat"}},
    )
for message in result["messages"]:
    print(f"--- {message.type}")
    print(str(message.content)[:700])
"""
    ),
    md(
        "The tool's JSON is what the model reads; the full Documents travel as the tool message's artifact. Their metadata says what the quality gate decided on each recap: a `rejected` model answer is shown with its reasons, and the tool handed the model the extractive recap instead."
    ),
    code(
        """
import textwrap

tool_message = next(m for m in result["messages"] if m.type == "tool")
payload = json.loads(tool_message.content)
print(json.dumps({k: v for k, v in payload.items() if k != "results"}, indent=2))
for doc in tool_message.artifact:
    m = doc.metadata
    print(f"\\n=== {m['when']} {m['title']}: {m['summary_status']} ({m['summary_model']})")
    if m["summary_status"] == "rejected":
        print(
            "model's answer, REJECTED by the quality gate because:",
            ", ".join(m["summary_rejected_because"]),
        )
        print(textwrap.indent(textwrap.shorten(m["summary_rejected_text"], 400), "  | "))
        print("replaced by the extractive recap:")
    print(textwrap.indent(doc.page_content.strip()[:500], "    "))
"""
    ),
]

HERMES = [
    md(
        """
# Explore a Hermes `state.db`, read-only

If you use the Hermes agent, your history already lives in `~/.hermes/state.db`. This notebook
opens a small generated stand-in (`notebooks/data/hermes_state.db`, same schema) read-only:
nothing in the file changes, no `-wal`/`-shm` appears beside it.
"""
    ),
    SETUP,
    code(
        """
import hashlib
from pathlib import Path

from langchain_session_recall import SessionRecallRetriever, SessionStore

path = Path("data/hermes_state.db")  # your own: SessionStore.open_hermes()
digest = hashlib.sha256(path.read_bytes()).hexdigest()
store = SessionStore.open_hermes(path)
layout = store.layout
print("read-only:", store.read_only, "| our schema:", layout.own, "| FTS columns:", layout.fts_columns)
print("visibility rule:", layout.visibility)
"""
    ),
    code(
        """
retriever = SessionRecallRetriever(store=store, k=3)
# Browsing: leave out automation runs so the user's own sessions show (search only demotes them).
browse = SessionRecallRetriever(store=store, exclude_sources=("tool", "cron"))
for d in browse.invoke("", k=5):
    print(d.metadata["when"], d.metadata["source"], "|", d.metadata["title"])
"""
    ),
    code(
        """
for q in ["docker networking", "pgbouncer too many connections", "rename photos exif"]:
    top = retriever.invoke(q, k=1)
    print(f"{q!r:40} -> {top[0].metadata['title'] if top else 'nothing'}")
"""
    ),
    md("### Activity by source"),
    code(
        """
import collections

import matplotlib.pyplot as plt

sessions = store.recent_sessions(limit=1000, exclude_sources=())
counts = collections.Counter(s.source for s in sessions)
messages = collections.Counter()
for s in sessions:
    messages[s.source] += s.message_count
fig, ax = plt.subplots(figsize=(7, 2.8))
sources = sorted(counts)
ax.bar(sources, [messages[s] for s in sources], color="#55a868")
ax.set_ylabel("messages (root sessions)")
ax.set_title("Hermes history by source")
fig.tight_layout()
"""
    ),
    code(
        """
store.close()
assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
print("file unchanged; files beside it:", sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name)))
"""
    ),
]

NOTEBOOKS = {
    "01_quickstart.ipynb": QUICKSTART,
    "02_agent_tool.ipynb": AGENT,
    "03_hermes_history.ipynb": HERMES,
}


def build(names: list[str]) -> None:
    for name, cells in NOTEBOOKS.items():
        if names and name not in names:
            continue
        nb = nbformat.v4.new_notebook(cells=cells)
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        NotebookClient(
            nb, timeout=3600, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
        ).execute()
        for cell in nb.cells:  # stable files: no execution timestamps
            cell.get("metadata", {}).pop("execution", None)
        nbformat.write(nb, HERE / name)
        print("wrote", name)


if __name__ == "__main__":
    build(sys.argv[1:])
