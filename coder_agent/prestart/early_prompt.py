"""The first prompt's first model call, streamed before the runtime is imported. Stdlib only.

An editor whose user typed a message before the agent started sends `session/prompt` right after the
`session/new` reply; importing the runtime takes ~300 ms more. When the early reader answered that
`session/new` (`server.early_session`) and the prompt is plain text, this stage builds the request the turn's
first model call would send (`Prep` readies what it needs in the import thread: the settings, the route, the
tools' specs; the system prompt is made from the session's folder as soon as `session/new` is answered),
sends it (`llm.raw_http`) and shows the text of the reply as `agent_message_chunk`s, until the runtime is in,
any other input comes, or the reply holds anything but text (`llm.early_call.stream_text`).

The prompt line itself stays unread: the full agent handles the prompt as ever, and its first model call takes
the early one over when the bodies are the same bytes (`DirectModel`). Anything this stage is not sure of
(settings it cannot read exactly, MCP servers, a project `.mcp.json`, a slash command, an image or a link, a
proxy, a provider it does not stream for, a server it cannot reach) leaves the prompt to the full agent.
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
    from ..llm.wire.price_map import PriceMap
    from ..llm.wire.responses_route import ResponsesRoute
    from ..llm.wire.routes import Route

_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")
_TEXT_KEYS = {"type", "text", "annotations", "_meta"}


class Prep:
    """What the early call needs that does not depend on the prompt, made in the import thread (`run`)."""

    def __init__(self) -> None:
        self.config: ModelConfig | None = None
        self.route: Route | ResponsesRoute | None = None
        self.prices: PriceMap | None = None
        self.specs: list[dict[str, Any]] = []
        self.tls: Any = None

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
        from ..llm.wire import price_map
        from ..llm.wire.routes import direct_route

        prices = price_map.loaded() or price_map.partial(route_keys(found.config.model))  # ~1 ms, not ~30
        if prices is None:
            return
        route: Route | ResponsesRoute | None = direct_route(found.config, prices, environ)
        if route is None:  # GPT-5 and o-series: OpenAI's Responses API (issue 23)
            from ..llm.wire.responses_route import responses_route

            config = found.config
            route = responses_route(config.model, config.api_base, config.api_key, prices, environ)
        if route is None or route.api_key is None:
            return
        if route.url.startswith("https:"):
            self.tls = _tls_context(environ)
        elif not route.url.startswith("http:"):
            return
        from .tool_specs import builtin_specs

        self.specs = builtin_specs()
        self.config, self.prices, self.route = found.config, prices, route


def route_keys(model: str) -> set[str]:
    """The price map's entries `routes.direct_route` may look up for `model`."""
    prefix, name = model.split("/", 1) if "/" in model else ("openai", model)
    return {model, name, *(f"{provider}/{name}" for provider in ("openai", "anthropic", prefix))}


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
    """The session's system prompt, made in a thread from the moment `session/new` is answered."""

    def __init__(self, session: EarlySession) -> None:
        self.text: str | None = None
        self._thread = threading.Thread(target=self._make, args=(session,), name="early-system-prompt", daemon=True)
        self._thread.start()

    def _make(self, session: EarlySession) -> None:
        from .project_facts import system_prompt_now

        try:
            self.text = system_prompt_now(session.cwd, session.additional_directories)
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
    if texts[0].lstrip().startswith("/"):
        return None  # a slash command, maybe: the full agent knows them
    return "\n\n".join(texts)


def request_body(prep: Prep, system_text: str, user_text: str, session_id: str = "") -> bytes:
    """The body `DirectModel.request` (or `ResponsesModel.request`, which keys the prompt cache by the session) makes
    for [system, user] with the built-in tools, as it sends it."""
    from ..llm.wire.routes import Route, route_body

    assert prep.route is not None and prep.config is not None and prep.prices is not None
    messages = [{"role": "system", "content": system_text}, {"role": "user", "content": user_text}]
    if not isinstance(prep.route, Route):
        return json.dumps(prep.route.body(prep.config, messages, prep.specs, cache_key=session_id)).encode()
    return json.dumps(route_body(prep.route, prep.config, prep.prices, messages, prep.specs)).encode()


def request_headers(route: Route | ResponsesRoute) -> dict[str, str]:
    from ..llm.wire.routes import Route, route_headers

    return route_headers(route) if isinstance(route, Route) else route.request_headers()


def _chunk(session_id: str, message_id: str, text: str) -> dict[str, Any]:
    content = {"type": "text", "text": text}
    update = {"sessionUpdate": "agent_message_chunk", "content": content, "messageId": message_id}
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id, "update": update}}


def run(
    early: EarlyRead,
    in_fd: int,
    out_fd: int,
    ready_fd: int,
    made: Callable[[], Prep | None],
    system: SystemPrompt,
) -> EarlyRead:
    """Wait for the next line; if it is a plain prompt to the early session, start its model call and show its
    text until the runtime is ready (`ready_fd`) or more input comes. The line stays unread either way.

    `made()` gives the `Prep` the import thread makes first thing (waiting for it if need be), or None."""
    session = early.answered
    if not isinstance(session, EarlySession):
        return early
    buffer = bytearray(early.unread)
    state = _fill_line(in_fd, buffer, ready_fd)
    kept = EarlyRead(bytes(buffer), early.initialize, eof=state == "eof")
    kept.answered = session
    if state != "line":
        return kept
    line, _, rest = bytes(buffer).partition(b"\n")
    request = _request(line.rstrip(b"\r"), "session/prompt")
    text = _prompt_text(request[1], session.id) if request is not None else None
    if text is None or rest or _ready(ready_fd):
        return kept
    if os.path.lexists(os.path.join(session.cwd, ".mcp.json")):
        return kept  # the full agent asks about the project's MCP servers before the first call
    prep = made()
    system_prompt = system.get()
    if prep is None or prep.route is None or prep.config is None or system_prompt is None:
        return kept
    from ..kit.prompts import system_text

    body = request_body(prep, system_text(system_prompt, session.mode), text, session.id)
    assert request is not None
    if all(set(block) == {"type", "text"} for block in request[1]["prompt"]):
        # Taken: should the input end now, the early stage keeps this turn as the full agent would (`early_exit`)
        session.prompt = (line + b"\n", [block["text"] for block in request[1]["prompt"]])

    def reach(fd: int, for_write: bool, seconds: float) -> bool | None:
        """While the server is reached (its name, the connect, TLS, the request sent): input or the runtime
        stop the wait, as they stop the stream; a server that accepts and never answers freezes nothing."""
        import select

        readable, writable, _ = select.select(
            [in_fd, ready_fd] + ([] if for_write else [fd]), [fd] if for_write else [], [], seconds
        )
        if in_fd in readable or ready_fd in readable:
            return False
        return True if readable or writable else None

    try:
        response = raw_http.post(
            prep.route.url, request_headers(prep.route), body, prep.config.timeout, prep.tls, wait=reach
        )
    except (OSError, ValueError, raw_http.Interrupted):
        return kept  # the full agent makes the call: it reaches the same failure, and reports it
    early_call.allow_plain(prep.route.url, prep.tls)
    call = early_call.EarlyCall(prep.route.url, body, response, new_id("msg"), session.id)
    session.system_prompt = system_prompt
    early_call.hand_over(call)

    def show(delta: str) -> None:
        write_message(out_fd, _chunk(session.id, call.message_id, delta))

    def wait(response: raw_http.RawResponse) -> bool:
        if response.buffered():
            return True
        import select

        readable, _, _ = select.select([response.sock.fileno(), in_fd, ready_fd], [], [], response.stall_left())
        return bool(readable) and in_fd not in readable and ready_fd not in readable

    text_of = early_call.TEXT_OF[prep.route.wire]

    def valid_text(data: str) -> str | None:
        text = text_of(data)
        return None if text is not None and not is_valid(text) else text

    early_call.stream_text(call, show, wait, valid_text)
    return kept


def _ready(fd: int) -> bool:
    import select

    return bool(select.select([fd], [], [], 0)[0])
