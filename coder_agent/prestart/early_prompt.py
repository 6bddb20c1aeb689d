"""The first prompt's first model call, streamed before the runtime is imported. Stdlib only.

An editor whose user typed a message before the agent started sends `session/prompt` right after the
`session/new` reply; importing the runtime takes ~300 ms more. When the early reader answered that
`session/new` (`prestart.early_session`) and the prompt is plain text, this stage builds the request the turn's
first model call would send (`Prep` readies what it needs in the import thread: the settings, the route, the
tools' specs; the system prompt is made from the session's folder as soon as `session/new` is answered),
sends it (`raw_http`) and shows the thoughts and text of the reply as `agent_thought_chunk`s and
`agent_message_chunk`s, until the runtime is in, any other input comes, or the reply holds anything else
(`early_call.stream_text`). A reply that ends (text only, `end_turn`) before the runtime is in ends the turn:
the prompt is answered at once.

The prompt line itself stays unread: the full agent handles the prompt as ever, and its first model call takes
the early one over when the bodies are the same bytes (`DirectModel`); the call goes down with the rest of what
the early stage read (`EarlyRead.call`). A slash command is expanded as the turn expands it (`kit.commands`; the
user's and the project's Markdown commands read by `prestart.command_menu`; `/init`). Anything this stage is not
sure of (settings it cannot read exactly, MCP servers, a project `.mcp.json`, a command only the full agent runs,
an image or a link, a proxy, a provider it does not speak, a server it cannot reach) leaves the prompt to the full
agent.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..kit.ids import new_id
from ..kit.unicode import is_valid
from . import early_call, raw_http
from .early import EarlyRead, _fill_line, _request, write_message
from .early_session import EarlySession

if TYPE_CHECKING:
    from ..llm.wire.config import ModelConfig
    from ..llm.wire.responses_route import ResponsesRoute
    from ..llm.wire.routes import Route

_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")
_TEXT_KEYS = {"type", "text", "annotations", "_meta"}


class Prep:
    """What the early call needs that does not depend on the prompt, made in the import thread (`run`)."""

    def __init__(self) -> None:
        self.config: ModelConfig | None = None
        self.route: Route | ResponsesRoute | None = None
        self.specs: list[dict[str, Any]] = []
        self.tls: Any = None
        self.commands = ""  # the user's command files' folder

    def run(self) -> None:
        """Read the settings and route the model; leaves `route` None when the early call cannot be made."""
        try:
            self._run()
        except Exception:  # whatever goes wrong here, the full agent makes the call as it always does
            self.route = None

    def _run(self) -> None:
        from .settings_peek import peek_model

        found = peek_model()
        if found is None or found.mcp_servers:
            return
        environ = found.environ
        if any(environ.get(name) or environ.get(name.upper()) for name in _PROXY_VARIABLES):
            return  # httpx would go through the proxy
        from ..llm.wire.routes import session_route

        # As the model factory routes it (GPT-5 and o-series: the Responses API): its model's entries in litellm's map,
        # ~1 ms
        route = session_route(found.config, environ)
        if route is None or route.api_key is None:
            return
        if route.url.startswith("https:"):
            self.tls = _tls_context(environ)
        elif not route.url.startswith("http:"):
            return
        from .tool_specs import builtin_specs

        self.specs = builtin_specs()
        self.config, self.route, self.commands = found.config, route, found.commands
        # What the prompt's arrival would import otherwise (~20-30 ms, most of the wait for its first chunk): the
        # system prompt's facts (its thread starts at `session/new`), its text, the check of the reply's text.
        from ..kit import commands, prompts, unicode  # noqa: F401
        from . import command_menu, project_facts  # noqa: F401


def _tls_context(environ: Mapping[str, str]) -> Any:
    """The TLS context httpx makes (`httpx.create_ssl_context(trust_env=True)`): certifi's CAs, or the
    SSL_CERT_FILE / SSL_CERT_DIR the environment names."""
    import ssl

    cert_file, cert_dir = environ.get("SSL_CERT_FILE"), environ.get("SSL_CERT_DIR")
    if cert_file and os.path.isfile(cert_file):
        return ssl.create_default_context(cafile=cert_file)
    if cert_dir and os.path.isdir(cert_dir):
        return ssl.create_default_context(capath=cert_dir)
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


class SystemPrompt:
    """A session's system prompt for these folders, made in a thread: from the moment `session/new` is answered, or
    before, for the folder the agent was started in (`for_session` takes it when the session's is the same)."""

    def __init__(self, cwd: str, directories: list[str]) -> None:
        self.text: str | None = None
        self.folders = (cwd, list(directories))
        self._thread = threading.Thread(target=self._make, name="early-system-prompt", daemon=True)
        self._thread.start()

    def for_session(self, session: EarlySession) -> SystemPrompt:
        """This one, when made for the session's folders; else one made for them now."""
        if self.folders == (session.cwd, list(session.additional_directories)):
            return self
        return SystemPrompt(session.cwd, session.additional_directories)

    def _make(self) -> None:
        from .project_facts import system_prompt_now

        try:
            self.text = system_prompt_now(*self.folders)
        except Exception:
            self.text = None

    def get(self) -> str | None:
        self._thread.join()
        return self.text


def _prompt_text(params: dict[str, Any], session_id: str) -> str | None:
    """The user message's text of a plain-text prompt for this session; None for anything else."""
    blocks = params.get("prompt")
    if params.get("sessionId") != session_id or not isinstance(blocks, list) or not blocks:
        return None
    texts = []
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") != "text" or not set(block) <= _TEXT_KEYS:
            return None
        text = block.get("text")
        if not isinstance(text, str):
            return None
        texts.append(text)
    return "\n\n".join(texts)


def model_text(texts: list[str], session: EarlySession, commands: str) -> str | None:
    """What the model reads of a prompt, as the turn makes it (`agent.commands`): a slash command expanded (the
    user's or the project's Markdown command, `/init`); an unknown `/word`, as typed. None for a command only the
    full agent runs (the other built-ins, a file it could not read: it says why)."""
    from ..kit import commands as known
    from . import command_menu

    text = "\n\n".join(texts)
    named = known.invocation(texts[0]) if texts[0].lstrip().startswith("/") else None
    if named is None:
        return text
    name, arguments = named
    if any(name == builtin for builtin, _, _ in command_menu.BUILTIN_MENU):
        expanded = known.init_text(arguments) if name == "init" else None
    else:
        from pathlib import Path

        roots = [session.cwd, *session.additional_directories]
        found = [f for f in command_menu.command_files(Path(commands), session.cwd, roots) if f.name == name]
        if not found:
            return text  # no such command: plain text for the model
        expanded = None if found[0].refused else known.with_arguments(found[0].body, arguments)
    return None if expanded is None else "\n\n".join([expanded, *texts[1:]])


def request_body(prep: Prep, system_text: str, user_text: str, session_id: str) -> bytes:
    """The body `DirectModel.request` (or `ResponsesModel.request`) makes for [system, user] with the built-in tools,
    as it sends it; the session's id keys the prompt cache."""
    from ..llm.wire.routes import Route, route_body

    assert prep.route is not None and prep.config is not None
    messages = [{"role": "system", "content": system_text}, {"role": "user", "content": user_text}]
    if not isinstance(prep.route, Route):
        return json.dumps(prep.route.body(prep.config, messages, prep.specs, cache_key=session_id)).encode()
    return json.dumps(route_body(prep.route, prep.config, messages, prep.specs, session_id)).encode()


def request_headers(route: Route | ResponsesRoute, session_id: str) -> dict[str, str]:
    """The headers the model adapter sends (a provider that takes the cache key as a header gets the session's)."""
    from ..llm.wire.routes import Route, route_headers

    return route_headers(route, session_id) if isinstance(route, Route) else route.request_headers()


def _chunk(session_id: str, kind: str, message_id: str, text: str) -> dict[str, Any]:
    content = {"type": "text", "text": text}
    name = "agent_message_chunk" if kind == "text" else "agent_thought_chunk"
    update = {"sessionUpdate": name, "content": content, "messageId": message_id}
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id, "update": update}}


def run(
    early: EarlyRead,
    in_fd: int,
    out_fd: int,
    ready_fd: int,
    made: Callable[[], Prep | None],
    system: SystemPrompt,
    sent: Callable[[], None] = lambda: None,
) -> EarlyRead:
    """Wait for the next line; if it is a plain prompt to the early session, start its model call and show its
    text until the runtime is ready (`ready_fd`) or more input comes. The line stays unread either way.

    `made()` gives the `Prep` the import thread makes first thing (waiting for it if need be), or None."""
    session = early.answered
    if not isinstance(session, EarlySession):
        return early
    buffer = bytearray(early.unread)
    state = _fill_line(in_fd, buffer, ready_fd, sent)
    kept = EarlyRead(bytes(buffer), early.initialize, eof=state == "eof")
    kept.answered = session
    if state != "line":
        return kept
    line, _, rest = bytes(buffer).partition(b"\n")
    request = _request(line.rstrip(b"\r"), "session/prompt")
    text = _prompt_text(request[1], session.id) if request is not None else None
    if text is None or rest or _ready(ready_fd):
        return kept
    if session.mcp_servers or os.path.lexists(os.path.join(session.cwd, ".mcp.json")):
        return kept  # the first call offers the MCP servers' tools; and the full agent asks about the project's
    prep = made()
    system_prompt = system.get()
    if prep is None or prep.route is None or prep.config is None or system_prompt is None:
        return kept
    assert request is not None
    typed = [block["text"] for block in request[1]["prompt"]]
    text = model_text(typed, session, prep.commands)
    if text is None:
        return kept
    from ..kit.prompts import system_text

    if session.thought_level is not None:  # the session thinks from its first call (`CODER_AGENT_THOUGHT_LEVEL`)
        prep.config = prep.config.replace(reasoning_effort=session.thought_level)
    body = request_body(prep, system_text(system_prompt, session.mode), text, session.id)
    assert request is not None
    if all(set(block) == {"type", "text"} for block in request[1]["prompt"]):
        # Taken: should the input end now, the early stage keeps this turn as the full agent would (`early_exit`)
        session.prompt = (line + b"\n", [block["text"] for block in request[1]["prompt"]])
        session.model_text = text if text != "\n\n".join(typed) else None

    def reach(fd: int, for_write: bool, seconds: float) -> bool | None:
        """While the server is reached (its name, the connect, TLS, the request sent): input or the runtime
        stop the wait, as they stop the stream; a server that accepts and never answers freezes nothing."""
        import select

        reads, writes = [in_fd, ready_fd] + ([] if for_write else [fd]), [fd] if for_write else []
        readable, writable, _ = select.select(reads, writes, [], 0)
        if not (readable or writable):  # the network keeps the reader waiting: the runtime's import goes on meanwhile
            sent()
            readable, writable, _ = select.select(reads, writes, [], seconds)
        if in_fd in readable or ready_fd in readable:
            return False
        return True if readable or writable else None

    try:
        response = raw_http.post(
            prep.route.url, request_headers(prep.route, session.id), body, prep.config.timeout, prep.tls, wait=reach
        )
    except (OSError, ValueError, raw_http.Interrupted):
        return kept  # the full agent makes the call: it reaches the same failure, and reports it
    sent()
    call = early_call.EarlyCall(prep.route.url, body, response, new_id("msg"), session.id, prep.tls, new_id("thought"))
    session.system_prompt = system_prompt
    kept.call = call

    def show(kind: str, text: str) -> None:
        message_id = call.message_id if kind == "text" else call.thought_id
        write_message(out_fd, _chunk(session.id, kind, message_id, text))

    def wait(response: raw_http.RawResponse) -> bool:
        if response.buffered():
            return True
        import select

        readable, _, _ = select.select([response.sock.fileno(), in_fd, ready_fd], [], [], response.stall_left())
        return bool(readable) and in_fd not in readable and ready_fd not in readable

    text_of = early_call.TEXT_OF[prep.route.wire]

    def valid_text(data: str) -> early_call.Read | None:
        read = text_of(data)
        return None if read is not None and not all(is_valid(text) for _, text in read[0]) else read

    if early_call.stream_text(call, show, wait, valid_text):
        # The whole reply came (text only, `end_turn`) before the runtime: the prompt is answered now, as the
        # turn ends. The runtime still handles the prompt line: it keeps the turn (history, usage, title), and
        # its own answer to it is not sent (`server.early_reply`).
        call.answered = request[0]
        write_message(out_fd, {"jsonrpc": "2.0", "id": request[0], "result": {"stopReason": "end_turn"}})
    return kept


def _ready(fd: int) -> bool:
    import select

    return bool(select.select([fd], [], [], 0)[0])
