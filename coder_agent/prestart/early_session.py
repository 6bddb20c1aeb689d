"""`session/new` answered before the runtime is imported, when its answer is known exactly. Stdlib only.

Editors send `session/new` right after `initialize`; importing the runtime (asyncio, anyio, pydantic, the wire
models: ~350 ms) would make it wait. Its answer needs only a new id, the roots the request names and three
settings (the model, the model menu and the mode of new sessions: `settings_peek`), so a plain request is
answered here while the runtime is imported in another thread (`prestart.early.answer_next`). The full agent then
takes the session over as if it had made it (`SessionHandlers.adopt`): it creates and saves it under that id,
starts the user's MCP servers, and sends the slash commands.

Anything else is left to the full agent, which answers or refuses it as ever: a root that is not an absolute path,
a field of the wrong type (an MCP server's included), settings the peek cannot read exactly or that `session/new`
is refused for. MCP servers the editor names are started by the full agent when it takes the session over, as a
`session/new` it answered itself would start them: in the background, after the answer.
"""

from __future__ import annotations

import os
from typing import Any

from ..kit.ids import new_id
from ..llm.wire import model_info
from .early import Answerer
from .session_options import config_options, mode_state
from .settings_peek import Peek


class EarlySession:
    """A session the early reader answered `session/new` for: what the full agent needs to take it over."""

    __slots__ = (
        *("additional_directories", "commands", "cwd", "home", "id", "mcp_servers", "mode", "model", "prompt"),
        *("result", "model_text", "system_prompt", "thought_level"),
    )

    def __init__(
        self,
        session_id: str,
        cwd: str,
        directories: list[str],
        mode: str,
        model: str | None,
        result: dict[str, Any],
        home: str = "",
        thought_level: str | None = None,
        mcp_servers: list[dict[str, Any]] | None = None,
    ) -> None:
        self.id = session_id
        self.cwd = cwd
        self.additional_directories = directories
        self.mode = mode
        self.model = model
        self.result = result  # the `session/new` result sent
        self.home = home  # the data folder its store is in (`Settings.home`)
        self.thought_level = thought_level  # as `first_thought_level` gives it
        self.mcp_servers = mcp_servers or []  # the MCP servers the request named, as it named them
        self.system_prompt: str | None = None  # the one the early first call was sent with (`early_prompt`)
        # The first prompt's line and its text blocks, once the early stage made its model call (`early_prompt`)
        self.prompt: tuple[bytes, list[str]] | None = None
        self.model_text: str | None = None  # what the model was sent of it, where that was not the typed text
        self.commands: list[dict[str, Any]] | None = None  # the slash commands announced early (`announce_commands`)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _pairs(value: Any) -> bool:
    """A list of `{name, value}` objects (`EnvVariable`, `HttpHeader`), each field a string."""
    return isinstance(value, list) and all(
        isinstance(pair, dict) and isinstance(pair.get("name"), str) and isinstance(pair.get("value"), str)
        for pair in value
    )


def _server(entry: Any) -> bool:
    """Whether the full agent takes this `mcpServers` entry as it is (`McpServerStdio`, `McpServerHttp`,
    `McpServerSse`): its fields of the right types. Anything else, it answers itself."""
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        return False
    if "type" in entry:
        kind_ok = entry["type"] in ("http", "sse") and isinstance(entry.get("url"), str)
        return kind_ok and _pairs(entry.get("headers", []))
    return isinstance(entry.get("command"), str) and _strings(entry.get("args", [])) and _pairs(entry.get("env", []))


def _roots(params: dict[str, Any]) -> tuple[str, list[str]] | None:
    """(cwd, additionalDirectories) of a request the full agent would accept as it is; else None."""
    cwd = params.get("cwd")
    directories = params.get("additionalDirectories", [])
    meta = params.get("_meta")
    servers = params.get("mcpServers")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        return None
    if not isinstance(servers, list) or not all(_server(entry) for entry in servers):
        return None
    if not isinstance(directories, list) or not all(isinstance(d, str) and os.path.isabs(d) for d in directories):
        return None
    if meta is not None and not isinstance(meta, dict):
        return None
    return cwd, list(directories)


def announce_commands(session: EarlySession, config_dir: str, out_fd: int) -> None:
    """Send the session's slash commands (built-in, the user's, the project's) right after the `session/new`
    answer, as the runtime would once in: a `/` typed at once shows them. The runtime announces again only when
    the list changed (the MCP servers' prompts). A failure to read costs the early announcement, nothing else."""
    from pathlib import Path  # here, as the menu: after the answer, not on its path (~7 ms)

    from .command_menu import menu
    from .early import write_message

    folder = Path(config_dir) / "commands" if config_dir else None
    try:
        session.commands = menu(folder, session.cwd, [session.cwd, *session.additional_directories])
    except Exception:  # the runtime announces them anyway
        import logging  # here: importing it costs the early answers ~5-50 ms

        logging.getLogger(__name__).exception("the early slash-command menu of %s could not be made", session.id)
        return
    update = {"sessionUpdate": "available_commands_update", "availableCommands": session.commands}
    params = {"sessionId": session.id, "update": update}
    write_message(out_fd, {"jsonrpc": "2.0", "method": "session/update", "params": params})


def new_session_answerer(settings: Peek) -> Answerer:
    """Answers a plain `session/new` as the full agent would, with these settings (an inexact peek: none)."""
    # The configured models, as `SessionConfig` lists them before the provider's list is fetched.
    menu = list(dict.fromkeys([*([settings.model] if settings.model else []), *settings.models]))

    def answer(params: dict[str, Any]) -> tuple[dict[str, Any], object] | None:
        roots = _roots(params)
        if roots is None or not settings.exact:
            return None
        session_id = new_id("sess")
        # Whether the model takes a thought level, from litellm's map as the full agent asks it (`model_info`: the
        # model's entries only, read already for `initialize`'s image capability): every option, in this answer.
        reasoning = model_info.info(settings.model).supports_reasoning
        level = settings.thought_level if reasoning and settings.thought_level != "off" else None
        options = config_options(settings.default_mode, settings.model, menu, level, reasoning=reasoning)
        result = {"sessionId": session_id, "modes": mode_state(settings.default_mode), "configOptions": options}
        made = EarlySession(
            session_id,
            *roots,
            settings.default_mode,
            settings.model,
            result,
            settings.home,
            level,
            params["mcpServers"],
        )
        return result, made

    return answer
