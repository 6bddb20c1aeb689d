"""What this agent says about itself in `initialize`. Stdlib only: it is on the start-up fast path."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import __version__

PROTOCOL_VERSION = 1

# The login a client runs in a terminal: the agent's own command with these arguments (`coder-agent acp login`
# when the client appends them, `coder-agent login` when it replaces the command's: both are the login).
TERMINAL_LOGIN_ID = "terminal-login"
TERMINAL_LOGIN_ARGS = ["login"]
# For clients without terminal auth: the user logs in from a shell, then the agent takes the saved login.
SAVED_LOGIN_ID = "saved-login"


def terminal_auth(client_capabilities: Any) -> bool:
    """Whether the client opted in to terminal auth (`clientCapabilities.auth.terminal: true`)."""
    if not isinstance(client_capabilities, Mapping):
        return False
    auth = client_capabilities.get("auth")
    return isinstance(auth, Mapping) and auth.get("terminal") is True


def auth_methods(client_capabilities: Any) -> list[dict[str, Any]]:
    """The login methods offered: the terminal login only to clients that can run it."""
    methods: list[dict[str, Any]] = []
    if terminal_auth(client_capabilities):
        methods.append(
            {
                "type": "terminal",
                "id": TERMINAL_LOGIN_ID,
                "name": "Log in",
                "description": "Choose a model provider and paste its API key, or point at a local server "
                "(Ollama, llama.cpp, vLLM, LM Studio).",
                "args": list(TERMINAL_LOGIN_ARGS),
            }
        )
    methods.append(
        {
            "id": SAVED_LOGIN_ID,
            "name": "Use my saved login",
            "description": "Run `coder-agent login` in a terminal (or set the provider's key in this agent's env), "
            "then choose this.",
        }
    )
    return methods


def model_sees_images(model: str | None) -> bool:
    """Whether litellm's map says the model takes images (about a millisecond: `llm.vision`)."""
    from ..llm.wire.vision import sees_images

    return sees_images(model)


def initialize_result(
    client_capabilities: Any = None, image: bool | None = None, *, logout: bool = True
) -> dict[str, Any]:
    """The `initialize` result, in wire form, for a client with these (wire-form) capabilities. Advertise only
    what works.

    `image`: whether the configured model takes images; None: find the model as the settings would
    (`settings_peek`, before they are loaded) and ask litellm's map. `logout`: whether `logout` is offered (not
    to the remote clients of `coder-agent serve`: the saved keys are the operator's).
    """
    if image is None:
        from .settings_peek import configured_model

        image = model_sees_images(configured_model())
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": image, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": True},
            "sessionCapabilities": {
                "list": {},
                "resume": {},
                "close": {},
                "delete": {},
                "fork": {},  # unstable in v1: see agent/session_methods.py
                "additionalDirectories": {},
            },
            "auth": {"logout": {}} if logout else {},
        },
        "agentInfo": {"name": "coder-agent", "title": "Coder Agent", "version": __version__},
        "authMethods": auth_methods(client_capabilities),
    }
