"""What this agent says about itself in `initialize`. Stdlib only: it is on the start-up fast path."""

from __future__ import annotations

from typing import Any

from .. import __version__

PROTOCOL_VERSION = 1


def model_sees_images(model: str | None) -> bool:
    """Whether litellm's map says the model takes images (about a millisecond: `llm.vision`)."""
    from ..llm.vision import sees_images

    return sees_images(model)


def initialize_result(image: bool | None = None) -> dict[str, Any]:
    """The `initialize` result, in wire form. Advertise only what works.

    `image`: whether the configured model takes images; None: find the model as the settings would
    (`settings_peek`, before they are loaded) and ask litellm's map.
    """
    if image is None:
        from ..settings_peek import configured_model

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
        },
        "agentInfo": {"name": "coder-agent", "title": "Coder Agent", "version": __version__},
        "authMethods": [],
    }
