"""Write the notebooks from their cell sources and execute them in place (outputs stored):
the three in this folder, and LangChain's integration page, docs/integrations/session_recall.ipynb.

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
against Qwen2.5-Coder-1.5B-Instruct (Q4_K_M), a small local model served by llama.cpp on two
CPU cores. Its recaps go through the summarizer's quality gate and its grounding: every sentence
kept carries the ids of the messages that support it, and a sentence nothing supports is
removed. Each recap is shown next to the extractive recap the library makes without a model. A
small model can still state a fact wrongly with the right words: read the recaps against the
transcript. Set `OPENAI_API_KEY` to run it against a hosted model.
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
        "## 4. Summarize\n`create_session_recall_chain(retriever, llm)` takes the query string and returns one recap per session. Sessions are summarized in parallel, with retries, an overall deadline and an extractive fallback; secrets are redacted before anything leaves the process.\n\nEvery model answer goes through a quality gate, then each sentence is aligned with the messages that support it (`citations`, `summary_sentences`; unsupported sentences are removed and counted in `unsupported_sentences`). `summary_status` says what happened to each session: `summarized` (the model's recap passed), `rejected` (the model answered, the gate found it is not a recap: `summary_rejected_because` gives the reasons, `summary_rejected_text` the answer, and the Document carries the extractive recap instead), `fallback` (no answer: error, deadline or no model) or `cached`. The defaults (an output budget of 512 tokens, a deadline of 180 s) let a local 1.5B model finish its recaps."
    ),
    code(
        """
from langchain_session_recall import create_session_recall_chain

retriever = SessionRecallRetriever(store=store, k=2)
chain = create_session_recall_chain(
    retriever,
    _support.chat_model(temperature=0.1),
    max_tokens_param=_support.max_tokens_param(),  # llama.cpp reads a literal max_tokens
    timeout=_support.deadline(),  # the default; longer while recording on a busy machine
)
question = "how did we fix the CORS error?"
with _support.recorded("notebook_01_summarize"):
    recaps = chain.invoke(question)
extractive = create_session_recall_chain(retriever, None).invoke(question)  # no model
_support.show_recaps("notebook_01_summarize", recaps, extractive)
print("citations of the first recap:", recaps[0].metadata.get("citations"))
"""
    ),
    md(
        "**Read against the transcripts.** The CORS recap is right in substance, with each sentence citing the messages it rests on, and it keeps details the extractive recap cut (the `map` allow-list, the two origins). Two details are off: the 405 came from the app behind nginx, not from nginx, and the user's confirmation is message #52, not #43/#46 (the grounding cites by shared words, and can cite a question for its answer). In the Django session the model's first sentence said the session was about a CORS error: the search query's topic, not the session's. Nothing in the transcript supports it, so the grounding removed it (`x removed:` above); the rest is right, except that the assistant, not the user, confirmed PostgreSQL 15.8 is supported."
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

**Everything here is a real model.** The agent's turns and the tool's recaps come from
Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) served by llama.cpp, recorded as real HTTP traffic in
`cassettes/notebook_02_agent.yaml.gz` and replayed offline. One help is given, and said: this
model calls a tool only when `tool_choice` forces it (with `"auto"` it writes the call as JSON
text), so a small middleware forces `session_search` on the agent's **first** turn, and offers
no tool on the next one (offered tools again, the model writes another call as JSON text
instead of answering: that is what it did in the first recording). The query, the arguments and
the final answer are the model's own. (The middleware also gives the tool-call message a blank
content: llama-cpp-python's server refuses the `null` content OpenAI's API uses there.) The answer is printed as the model
wrote it, and checked below against what the recalled session says.
"""
    ),
    SETUP,
    code(
        """
import json
import tempfile
from pathlib import Path

from langchain.agents import create_agent
from langchain.agents.middleware import wrap_model_call

from langchain_session_recall import create_session_search_tool
from langchain_session_recall.demo import build_demo_store

store = build_demo_store(Path(tempfile.mkdtemp()) / "recall.db")
tool = create_session_search_tool(
    store,
    user_id="alice",  # the demo holds alice's and bob's sessions: one user's tool
    llm=_support.chat_model(temperature=0.1),
    max_tokens_param=_support.max_tokens_param(),  # llama.cpp reads a literal max_tokens
    timeout=_support.deadline(),  # the default; longer while recording on a busy machine
)
print(tool.description[:400], "...")
"""
    ),
    code(
        """
@wrap_model_call
def search_then_answer(request, handler):
    \"\"\"One forced session_search call, then an answer: this small model does not call tools
    with tool_choice="auto", and, offered tools again, writes another call as JSON text instead
    of answering. So the first turn forces the call and the next one offers no tools.\"\"\"
    if not any(m.type == "tool" for m in request.messages):
        return handler(request.override(tool_choice="session_search"))
    # llama-cpp-python's server refuses the `"content": null` that OpenAI's API expects on an
    # assistant message holding only tool calls: send it a blank content instead.
    messages = [
        m.model_copy(update={"content": m.content or " "}) if m.type == "ai" else m
        for m in request.messages
    ]
    return handler(request.override(messages=messages, tools=[], tool_choice=None))


agent_model = _support.chat_model(temperature=0)
print("agent's model:", agent_model.model_name)
agent = create_agent(
    agent_model,
    tools=[tool],
    system_prompt=(
        "You are a coding assistant with recall of past sessions. Answer from what "
        "session_search returns, in two or three sentences."
    ),
    middleware=[search_then_answer],
)
question = "The CORS error is back. How did we fix it last time?"
with _support.recorded("notebook_02_agent"):
    result = agent.invoke(
        {"messages": [{"role": "user", "content": question}]},
        config={"configurable": {"session_id": "today-chat"}},
    )
for message in result["messages"]:
    print(f"--- {message.type}")
    if getattr(message, "tool_calls", None):
        print("tool call:", json.dumps(message.tool_calls[0]["args"]))
    print(str(message.content)[:900])
"""
    ),
    md(
        "The tool's JSON is what the model reads; the full Documents travel as the tool message's artifact. Their metadata says what the summarizer decided on each recap, and the extractive recap (no model) is shown beside it."
    ),
    code(
        """
tool_message = next(m for m in result["messages"] if m.type == "tool")
payload = json.loads(tool_message.content)
print(json.dumps({k: v for k, v in payload.items() if k != "results"}, indent=2))
first_call = next(m for m in result["messages"] if m.type == "ai").tool_calls[0]
# The same call to a tool without a model: extractive recaps of the same sessions.
config = {"configurable": {"session_id": "today-chat"}}
plain = create_session_search_tool(store, user_id="alice")
plain = plain.invoke({**first_call, "type": "tool_call"}, config)
plain = plain.artifact
_support.show_recaps("notebook_02_agent", tool_message.artifact, plain)
"""
    ),
    code(
        """
answer = result["messages"][-1].content
# What the recalled session says about the fix (session 20261103_091512_a1b2c3, message #53):
facts = {"nginx": "nginx", "204 for the preflight": "204", "add_header ... always": "always"}
for fact, word in facts.items():
    print(f"answer mentions {fact!r}:", word.lower() in answer.lower())
"""
    ),
    md(
        "**The answer, read against the session.** Right in substance, short of what a user needs to act on it: the fix did add the CORS headers on every response, preflight included, in the site configuration, and a `map` allow-list of origins in the `http` block; but the answer names neither nginx nor its file (`/etc/nginx/sites-available/api.conf`), nor `always` on `add_header`, nor nginx answering the preflight itself with 204 (the checks above print what it holds). The recap it read names the nginx site config and the allow-list (the grounding check removed one unsupported sentence), and the extractive recap of the same session (above) holds the root cause and the fix in the session's own words. Recorded as it came: this 1.5B model recalls the right session and a usable recap, then loses details while answering."
    ),
    md(
        """
## The same recall without a tool call: `SessionRecallMiddleware`

A tool lets the model decide when to search. `SessionRecallMiddleware` searches for it: once per
run, with the user's latest message, before the first model call, and adds what it found to the
system message of that run's model calls, inside `<recalled_context>` tags, within `max_tokens`
(here 400; 4 characters per token by default, or pass `token_counter=`). The thread in progress
(`thread_id`) is left out, the search is scoped to the run's `user_id`, secrets are redacted, and
nothing is written into the thread's messages.

**No model here:** the agent's model is a stand-in that prints the system message it is sent
and answers with a fixed sentence, so this part runs offline without a recording. What it prints
is exactly what a real model would be shown.
"""
    ),
    code(
        """
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from langchain_session_recall import SessionRecallMiddleware


class ShowsWhatItIsSent(GenericFakeChatModel):
    \"\"\"A stand-in chat model: prints the system message it is sent, answers from `messages`.\"\"\"

    def _generate(self, messages, *args, **kwargs):
        print(messages[0].content)
        return super()._generate(messages, *args, **kwargs)


recall_agent = create_agent(
    ShowsWhatItIsSent(messages=iter([AIMessage("(the model's answer)")])),
    tools=[],
    system_prompt="You are a coding assistant.",
    middleware=[SessionRecallMiddleware(store=store, k=3, max_tokens=400)],
)
recalled = recall_agent.invoke(
    {"messages": [{"role": "user", "content": question}]},
    config={"configurable": {"thread_id": "today-chat", "user_id": "alice"}},
)
print("---\\nthe thread holds:", [m.type for m in recalled["messages"]])
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
print(
    "read-only:", store.read_only, "| our schema:", layout.own, "| FTS columns:", layout.fts_columns
)
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
    md(
        "### Recaps, read-only\nThe summarizer works on a read-only store too: its cache stays in memory (or in a `cache_path` side file), nothing is written to the Hermes file. The recaps below are Qwen2.5-Coder-1.5B's, recorded (`cassettes/notebook_03_recaps.yaml.gz`), next to the extractive ones."
    ),
    code(
        """
from langchain_session_recall import create_session_recall_chain

question = "pgbouncer too many connections"
hermes_retriever = SessionRecallRetriever(store=store, k=2)
chain = create_session_recall_chain(
    hermes_retriever,
    _support.chat_model(temperature=0.1),
    max_tokens_param=_support.max_tokens_param(),
    timeout=_support.deadline(),
)
with _support.recorded("notebook_03_recaps"):
    recaps = chain.invoke(question)
extractive = create_session_recall_chain(hermes_retriever, None).invoke(question)
_support.show_recaps("notebook_03_recaps", recaps, extractive)
"""
    ),
    md(
        "**Read against the transcripts.** Both recaps find the right fix and cite the right messages, and both state one fact wrongly in the session's own words, which no lexical check can see: the first says *idle* connections went from 100 to 23 (server connections did; 97 had been idle), the second calls mapping `host.docker.internal` to host-gateway the cause of the problem (it was the fix) and credits the user with the assistant's changes."
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
print(
    "file unchanged; files beside it:",
    sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name)),
)
"""
    ),
]


def raw(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_raw_cell(text.strip())


# LangChain's retriever page template (langchain-cli's integration_template/docs/retrievers.ipynb):
# Overview with the integration-details table, Setup, Instantiation, Usage, Use within a chain,
# API reference. Runs offline with no key: demo sessions, and a stand-in chat model said as such.
INTEGRATION = [
    raw(
        """
---
sidebar_label: Session Recall
---
"""
    ),
    md(
        """
# SessionRecallRetriever

This will help you get started with the Session Recall
[retriever](https://python.langchain.com/docs/concepts/retrievers/): recall of an agent's own
past conversations. Sessions are kept in SQLite (full-text index, FTS5) or PostgreSQL; a search
returns one `Document` per past session, its transcript windowed around the matches, with the
session's id, date, source, title and score in the metadata. The conversation in progress is
never returned, and secrets are redacted before a Document is built. For detailed documentation
of all `SessionRecallRetriever` features and configurations head to the
[API reference](#api-reference).

### Integration details

Bring-your-own data (your agents' sessions, recorded as they run or imported):

| Retriever | Self-host | Cloud offering | Package |
| :--- | :--- | :---: | :---: |
| [SessionRecallRetriever](../../langchain_session_recall/retriever.py) | ✅ | ❌ | langchain-session-recall |

## Setup

No API key and no service: the sessions live in a SQLite file (or your own PostgreSQL, with
`PostgresSessionStore`). A model is needed only to write recaps of what was found, or to
answer from it, as in [Use within a chain](#use-within-a-chain).

If you want to get automated tracing from individual queries, you can also set your
[LangSmith](https://docs.smith.langchain.com/) API key by uncommenting below. Each retriever
run carries LangSmith's standard params: `ls_retriever_name="session_recall"` and, with an
embedding model (hybrid search), `ls_embedding_provider` and `ls_embedding_model`.
"""
    ),
    code(
        """
# os.environ["LANGSMITH_API_KEY"] = getpass.getpass("Enter your LangSmith API key: ")
# os.environ["LANGSMITH_TRACING"] = "true"
"""
    ),
    md(
        """
### Installation

This retriever lives in the `langchain-session-recall` package (the line is commented out here:
this page is executed by the project's CI, offline, against the checkout):
"""
    ),
    code("# %pip install -qU langchain-session-recall"),
    md(
        """
## Instantiation

A retriever searches a session store. The package ships sample sessions (debugging, scripts,
design decisions, a sub-agent, cron runs) so this page has history to search; your own
sessions come from `SessionRecorder` (a callback recording an agent as it runs),
`SessionChatMessageHistory`, the importers (Hermes, Claude Code, LangGraph checkpoints, JSONL)
or `store.add_messages`, as the last lines below do:
"""
    ),
    code(
        """
import datetime as dt
import tempfile
from pathlib import Path

from langchain_session_recall import SessionRecallRetriever
from langchain_session_recall.demo import build_demo_store

store = build_demo_store(Path(tempfile.mkdtemp()) / "recall.db")  # SessionStore("recall.db")
started = dt.datetime(2026, 12, 1, 9, 30, tzinfo=dt.timezone.utc).timestamp()  # default: now
store.add_session("support-7", source="cli", title="Kafka consumer lag", started_at=started)
store.add_messages(
    "support-7",
    [
        {"role": "user", "content": "The orders consumer lags by 40k messages again."},
        {"role": "assistant", "content": "Raise the topic to 12 partitions and run 12 consumers."},
    ],
)

retriever = SessionRecallRetriever(store=store, k=2)
"""
    ),
    md("## Usage"),
    code(
        """
query = "how did we fix the CORS error?"

docs = retriever.invoke(query)
for doc in docs:
    m = doc.metadata
    print(f"{doc.id}  {m['when']}  score {m['score']:.2f}  {m['title']}")
print()
print(docs[0].page_content[:600])
"""
    ),
    md(
        """
An empty query lists recent sessions instead (previews, no search); `k`, `role_filter`,
`after` and `before` can be given per call:
"""
    ),
    code(
        """
for doc in retriever.invoke("", k=3):
    print(doc.metadata["when"], "|", doc.metadata["title"])
print([d.id for d in retriever.invoke("kafka partitions", k=1)])
"""
    ),
    md(
        """
## Use within a chain

Like other retrievers, `SessionRecallRetriever` can be incorporated into LLM applications via
[chains](https://python.langchain.com/docs/how_to/sequence/).

We will need a LLM or chat model. **This page uses a stand-in, not a language model**, so that
it runs offline and without an API key: `QuotingChatModel` below answers by quoting the
assistant line of the context that shares the most words with the question. Swap in any chat
model (for example `ChatOpenAI(model="gpt-4o-mini")`) and the chain is unchanged.
(The project's notebooks replay a real model's recorded traffic instead:
`notebooks/01_quickstart.ipynb`, `notebooks/02_agent_tool.ipynb`.)
"""
    ),
    code(
        """
import re

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult

STOP_WORDS = {"how", "did", "the", "what", "was", "and", "for", "you", "our"}


class QuotingChatModel(BaseChatModel):
    \"\"\"Offline stand-in for a chat model (no LLM): quotes the context's assistant line that
    shares the most words with the question.\"\"\"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        context, _, question = str(messages[-1].content).rpartition("Question:")
        words = set(re.findall(r"[a-z]{3,}", question.lower())) - STOP_WORDS
        lines = [line for line in context.splitlines() if line.startswith("[ASSISTANT]")]
        best = max(lines, key=lambda line: sum(w in line.lower() for w in words), default="")
        quote = best.removeprefix("[ASSISTANT]: ")
        answer = f"From a past session: {quote}" if best else "I don't know."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(answer))])

    @property
    def _llm_type(self) -> str:
        return "quoting-stand-in"


llm = QuotingChatModel()  # e.g. ChatOpenAI(model="gpt-4o-mini", temperature=0)
"""
    ),
    code(
        """
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough

prompt = ChatPromptTemplate.from_template(
    \"\"\"Answer the question based only on the context provided.

Context: {context}

Question: {question}\"\"\"
)


def format_docs(docs):
    return "\\n\\n".join(doc.page_content for doc in docs)


chain = (
    {"context": retriever | format_docs, "question": RunnablePassthrough()}
    | prompt
    | llm
    | StrOutputParser()
)
"""
    ),
    code('print(chain.invoke("How did we fix the CORS error?"))'),
    md(
        """
## Session Recall specifics

- **The live conversation is left out.** Pass the conversation's id as
  `config={"configurable": {"session_id": ...}}` (or LangGraph's `thread_id`): its whole chain
  of sessions (sub-agents, continuations) is never returned, so an agent does not "recall" what
  it is saying right now.
- **Tenants**: `user_id=` scopes a retriever to one user's sessions.
- **Redaction** is on by default: API keys, tokens and passwords become `[REDACTED...]` markers
  before a Document is built, so `retriever | format_docs | prompt | llm` sends a provider none.
- **Recaps**: `create_session_recall_chain(retriever, llm)` returns one grounded recap per
  session instead of raw transcripts; `create_session_search_tool(store)` gives an agent a
  `session_search` tool.
- **Hybrid search** (optional): `embeddings=` any LangChain `Embeddings`, blended with the
  lexical ranking.
"""
    ),
    code(
        """
config = {"configurable": {"session_id": "20261103_091512_a1b2c3"}}  # the CORS session is live
print([d.metadata["title"] for d in retriever.invoke(query, config=config)])
"""
    ),
    md(
        """
## API reference

For detailed documentation of all `SessionRecallRetriever` features and configurations head
to the API reference: the docstrings of
[`SessionRecallRetriever`](../../langchain_session_recall/retriever.py), the
[README](../../README.md#the-retriever) (every field, the Document metadata), the
[LCEL recipes](../lcel.md), [hybrid search](../hybrid.md), the
[summarizer](../summarizer.md) and the [provider page](provider.md).
"""
    ),
]

NOTEBOOKS = {
    "01_quickstart.ipynb": QUICKSTART,
    "02_agent_tool.ipynb": AGENT,
    "03_hermes_history.ipynb": HERMES,
    # LangChain's integration page, beside the other docs: executed from its own folder
    "../docs/integrations/session_recall.ipynb": INTEGRATION,
}


def build(names: list[str]) -> None:
    for name, cells in NOTEBOOKS.items():
        if names and name not in names and Path(name).name not in names:
            continue
        nb = nbformat.v4.new_notebook(cells=cells)
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        target = (HERE / name).resolve()
        target.parent.mkdir(parents=True, exist_ok=True)
        where = {"metadata": {"path": str(target.parent)}}
        NotebookClient(nb, timeout=3600, kernel_name="python3", resources=where).execute()
        for cell in nb.cells:  # stable files: no execution timestamps
            cell.get("metadata", {}).pop("execution", None)
        nbformat.write(nb, target)
        print("wrote", name)


if __name__ == "__main__":
    build(sys.argv[1:])
