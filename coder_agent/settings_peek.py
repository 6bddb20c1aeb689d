"""The configured model, read before `initialize` is answered (stdlib only: see `acp.early`).

`initialize` says whether prompts may carry images, which depends on the model. Loading the settings for
real imports pydantic and python-dotenv (~70 ms); this reads the same places in the same order, for the one
setting: the environment, the user's `.env` files (config folder, then data folder), then
`$CODER_AGENT_HOME/config.toml`, each with a simple line reader (`KEY=value`, `export`, quotes, comments;
`model = "..."` before any TOML table). A value written in syntax only python-dotenv or a full TOML parser
reads is missed here: images are then not offered, and nothing else changes. No pathlib, no regular expressions:
they would cost milliseconds before the first reply.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

_KEYS = ("CODER_AGENT_MODEL", "CODER_AGENT_HOME")


def _value(raw: str) -> str:
    raw = raw.strip()
    if raw[:1] in ("'", '"'):
        end = raw.find(raw[0], 1)
        return raw[1:end] if end > 0 else raw[1:]
    return raw.split(" #", 1)[0].strip()


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def _dotenv(path: str) -> dict[str, str]:
    text = _read(path)
    if text is None:
        return {}
    found: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("export ") or line.startswith("export\t"):
            line = line[len("export") :].strip()
        key, equals, raw = line.partition("=")
        if equals and key.strip() in _KEYS:
            found.setdefault(key.strip(), _value(raw))
    return found


def _xdg(environ: Mapping[str, str], variable: str, fallback: str) -> str:
    value = environ.get(variable, "")
    return value if os.path.isabs(value) else os.path.join(environ.get("HOME") or os.path.expanduser("~"), fallback)


def _config_model(path: str) -> str | None:
    text = _read(path)
    if text is None:
        return None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            return None  # a table: top-level keys come before it
        key, equals, raw = line.partition("=")
        raw = raw.strip()
        if equals and key.strip() == "model" and raw[:1] in ("'", '"') and raw.find(raw[0], 1) > 0:
            return _value(raw)
    return None


def _home(env: Mapping[str, str]) -> str:
    value = (env.get("CODER_AGENT_HOME") or "").strip()
    return (
        os.path.expanduser(value) if value else os.path.join(_xdg(env, "XDG_DATA_HOME", ".local/share"), "coder-agent")
    )


def configured_model(environ: Mapping[str, str] | None = None) -> str | None:
    """CODER_AGENT_MODEL as `Settings.load` would find it (blank counts as unset), or None."""
    env = dict(os.environ if environ is None else environ)

    def model() -> str | None:
        return (env.get("CODER_AGENT_MODEL") or "").strip() or None

    own = os.path.join(_xdg(env, "XDG_CONFIG_HOME", ".config"), "coder-agent", ".env")
    for path in (own, None):  # the config folder's file may move the data folder: it is read first
        if model() is not None:
            return model()
        for key, value in _dotenv(path or os.path.join(_home(env), ".env")).items():
            env.setdefault(key, value)
    if model() is not None:
        return model()
    found = _config_model(os.path.join(_home(env), "config.toml"))
    return (found or "").strip() or None
