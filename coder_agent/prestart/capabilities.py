"""What this agent says about itself in `initialize`. Stdlib only: it is on the start-up fast path."""

from __future__ import annotations

import sys
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
# For clients without terminal auth that render forms: `authenticate` asks for the provider and key in one.
FORM_LOGIN_ID = "form-login"


def terminal_auth(client_capabilities: Any) -> bool:
    """Whether the client opted in to terminal auth: `clientCapabilities.auth.terminal: true`, or the flag that
    came before it, `clientCapabilities._meta["terminal-auth"]: true` (Zed's first form; the ACP registry's own
    check still sends it)."""
    return terminal_auth_flag(client_capabilities) or _auth_terminal(client_capabilities)


def _auth_terminal(client_capabilities: Any) -> bool:
    if not isinstance(client_capabilities, Mapping):
        return False
    auth = client_capabilities.get("auth")
    return isinstance(auth, Mapping) and auth.get("terminal") is True


def terminal_auth_flag(client_capabilities: Any) -> bool:
    """Whether the client sent the older flag, `_meta["terminal-auth"]`: such a client runs the command that the
    method's own `_meta["terminal-auth"]` names (it knows nothing of `args` appended to the agent's command)."""
    if not isinstance(client_capabilities, Mapping):
        return False
    meta = client_capabilities.get("_meta")
    return isinstance(meta, Mapping) and meta.get("terminal-auth") is True


def form_elicitation(client_capabilities: Any) -> bool:
    """Whether the client renders forms (`clientCapabilities.elicitation.form` present and an object)."""
    if not isinstance(client_capabilities, Mapping):
        return False
    elicitation = client_capabilities.get("elicitation")
    return isinstance(elicitation, Mapping) and isinstance(elicitation.get("form"), Mapping)


def auth_methods(client_capabilities: Any, form_login: bool = True) -> list[dict[str, Any]]:
    """The login methods offered: the terminal login to clients that can run it, else the form login to clients
    that render forms (and `form_login`: not to the remote clients of `coder-agent serve`)."""
    methods: list[dict[str, Any]] = []
    if form_login and form_elicitation(client_capabilities) and not terminal_auth(client_capabilities):
        methods.append(
            {
                "id": FORM_LOGIN_ID,
                "name": "Log in",
                "description": "Choose a model provider and enter its API key, or point at a local server "
                "(Ollama, llama.cpp, vLLM, LM Studio). Saved in your config folder, as `coder-agent login` does.",
            }
        )
    if terminal_auth(client_capabilities):
        method: dict[str, Any] = {
            "type": "terminal",
            "id": TERMINAL_LOGIN_ID,
            "name": "Log in",
            "description": "Choose a model provider and paste its API key, or point at a local server "
            "(Ollama, llama.cpp, vLLM, LM Studio).",
            "args": list(TERMINAL_LOGIN_ARGS),
        }
        if terminal_auth_flag(client_capabilities):
            # This interpreter runs the login whatever started the agent (a script on PATH, uvx's own venv).
            command = {"command": sys.executable, "args": ["-m", "coder_agent", *TERMINAL_LOGIN_ARGS]}
            method["_meta"] = {"terminal-auth": {**command, "label": "Coder Agent login"}}
        methods.append(method)
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

    `image`: whether the configured model takes images; None: find the model (and `CODER_AGENT_IMAGES`) as the
    settings would (`settings_peek`, before they are loaded); unless the user said, ask litellm's map.
    `logout`: whether `logout` and the form login are offered (not to the remote clients of `coder-agent serve`:
    the saved keys are the operator's).
    """
    if image is None:
        from .settings_peek import configured_images

        model, said = configured_images()
        image = said if said is not None else model_sees_images(model)
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
        "authMethods": auth_methods(client_capabilities, form_login=logout),
    }
