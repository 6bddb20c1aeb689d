"""Requests that need a setting the user got wrong are refused with what to fix; the rest work.

An editor that starts an agent which exits right away shows only that it died. With an unusable setting the
agent stays up instead: `initialize` is answered, sessions can be listed, and each request that needs the
setting gets an error naming it and what is wrong with it.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..acp.errors import INTERNAL_ERROR, RequestError

_SESSIONS = ("session/new", "session/load", "session/resume", "session/fork")
_TURN = ("session/prompt",)

# setting -> the methods that cannot work without it ("files": a user config file that could not be read)
NEEDED_BY: dict[str, tuple[str, ...]] = {
    "CODER_AGENT_MODEL": _TURN,
    "CODER_AGENT_API_BASE": _TURN,
    "CODER_AGENT_API_KEY": _TURN,
    "CODER_AGENT_REQUEST_TIMEOUT": _TURN,
    "CODER_AGENT_MAX_RETRIES": _TURN,
    "CODER_AGENT_RETRY_BASE_DELAY": _TURN,
    "CODER_AGENT_MAX_TOKENS": _TURN,
    "CODER_AGENT_MAX_TURN_REQUESTS": _TURN,
    "CODER_AGENT_IMAGES": _TURN,
    "CODER_AGENT_INPUT_PRICE": _TURN,
    "CODER_AGENT_OUTPUT_PRICE": _TURN,
    "CODER_AGENT_DEFAULT_MODE": ("session/new",),
    "CODER_AGENT_THOUGHT_LEVEL": ("session/new",),
    "CODER_AGENT_MODELS": (*_SESSIONS, *_TURN, "session/set_config_option"),
    "CODER_AGENT_MCP_TIMEOUT": (*_SESSIONS, *_TURN),
    "CODER_AGENT_MCP_CALL_TIMEOUT": (*_SESSIONS, *_TURN),
    "files": (*_SESSIONS, *_TURN, "session/set_config_option", "session/set_mode"),
}
WHERE = (
    "Fix it where the agent's settings come from (the env of the editor's agent configuration, or "
    "~/.config/coder-agent/.env), then restart the agent."
)


class SettingsProblems:
    def __init__(self, problems: Mapping[str, str]) -> None:
        self._problems = dict(problems)

    def check(self, method: str) -> None:
        """Raise the error for `method` when a setting it needs is unusable."""
        found = {name: why for name, why in self._problems.items() if method in NEEDED_BY.get(name, ())}
        if not found:
            return
        what = "; ".join(why if name == "files" else f"{name} is invalid: {why}" for name, why in sorted(found.items()))
        raise RequestError(INTERNAL_ERROR, f"{what}. {WHERE}", {"settings": sorted(found)})
