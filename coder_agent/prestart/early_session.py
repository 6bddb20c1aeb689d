"""`session/new` answered before the runtime is imported, when its answer is known exactly. Stdlib only.

Editors send `session/new` right after `initialize`; importing the runtime (asyncio, anyio, pydantic, the wire
models: ~350 ms) would make it wait. Its answer needs only a new id, the roots the request names and three
settings (the model, the model menu and the mode of new sessions: `settings_peek`), so a plain request is
answered here while the runtime is imported in another thread (`acp.early.answer_next`). The full agent then
takes the session over as if it had made it (`SessionHandlers.adopt`): it creates and saves it under that id,
starts the user's MCP servers, and sends the slash commands.

Anything else is left to the full agent, which answers or refuses it as ever: MCP servers from the editor, a
root that is not an absolute path, a field of the wrong type, settings the peek cannot read exactly or that
`session/new` is refused for.
"""

from __future__ import annotations

import os
from typing import Any

from ..kit.ids import new_id
from .early import Answerer
from .session_options import config_options, mode_state
from .settings_peek import Peek


class EarlySession:
    """A session the early reader answered `session/new` for: what the full agent needs to take it over."""

    __slots__ = (
        *("additional_directories", "commands", "cwd", "home", "id", "mode", "model", "prompt", "result"),
        "system_prompt",
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
    ) -> None:
        self.id = session_id
        self.cwd = cwd
        self.additional_directories = directories
        self.mode = mode
        self.model = model
        self.result = result  # the `session/new` result sent
        self.home = home  # the data folder its store is in (`Settings.home`)
        self.system_prompt: str | None = None  # the one the early first call was sent with (`early_prompt`)
        # The first prompt's line and its text blocks, once the early stage made its model call (`early_prompt`)
        self.prompt: tuple[bytes, list[str]] | None = None
        self.commands: list[dict[str, Any]] | None = None  # the slash commands announced early (`announce_commands`)


def _roots(params: dict[str, Any]) -> tuple[str, list[str]] | None:
    """(cwd, additionalDirectories) of a request the full agent would accept as it is; else None."""
    cwd = params.get("cwd")
    directories = params.get("additionalDirectories", [])
    meta = params.get("_meta")
    if not isinstance(cwd, str) or not os.path.isabs(cwd) or params.get("mcpServers") != []:
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
        # No thought level: whether a model takes one is known once litellm or its map is loaded, never this early
        # (the full agent offers it when it is, as it does for sessions it made itself).
        options = config_options(settings.default_mode, settings.model, menu, None, reasoning=False)
        result = {"sessionId": session_id, "modes": mode_state(settings.default_mode), "configOptions": options}
        return result, EarlySession(session_id, *roots, settings.default_mode, settings.model, result, settings.home)

    return answer
