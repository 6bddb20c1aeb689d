"""The settings the first answers need, read before `Settings.load` can run (stdlib only: see `acp.early`).

`initialize` says whether prompts may carry images, which depends on the model; the early `session/new`
(`server.early_session`) needs the model, the model menu and the mode of new sessions. Loading the settings for
real imports pydantic and python-dotenv (~150 ms); this reads the same places in the same order: the
environment, the user's `.env` files (config folder, then data folder: the first may move the second), then the
`config.toml` files (config folder, then data folder). `.env` lines in the plain forms (`KEY=value`, `export`,
quotes without escapes, comments) are read as python-dotenv reads them; anything else (an escape, a value over
several lines, a file that cannot be read) makes the peek inexact. An inexact peek is still the best guess for
`initialize`'s images, but the early `session/new` then leaves the request to the full agent.
`tests/test_settings_peek.py` compares the peek with `Settings.load` case by case.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from .modes import DEFAULT_MODE, MODE_IDS

PREFIX = "CODER_AGENT_"
_FIELDS = ("model", "models", "default_mode", "mcp_timeout", "mcp_call_timeout")
# python-dotenv splits lines on these alone; `str.splitlines` on more
_ODD_BREAKS = ("\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_PLAIN_NUMBER = re.compile(r"[0-9]+(\.[0-9]+)?")


class Peek(NamedTuple):
    model: str | None
    models: tuple[str, ...]
    default_mode: str
    exact: bool  # every source was read as `Settings.load` reads it, and these settings are usable


class _Unsure(Exception):
    """A source or a value the peek cannot read exactly as `Settings.load` does."""


def _read(path: str) -> str | None:
    """A user file's text; None when there is none (`_Unsure` when it cannot be read)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise _Unsure(path) from exc


def _quoted(text: str) -> str:
    """A quoted value and what may follow it on its line (spaces, a comment); `_Unsure` for anything else."""
    end = text.find(text[0], 1)
    if end < 0:
        raise _Unsure("a quoted value over several lines")
    rest = text[end + 1 :].strip()
    if rest and not rest.startswith("#"):
        raise ValueError("not a binding")  # python-dotenv skips such a line
    return text[1:end]


def _binding(line: str) -> tuple[str, str] | None:
    """A `.env` line's (key, value) as python-dotenv reads it; None for a line it gives no value."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    if line.startswith("export") and line[6:7].isspace():
        line = line[6:].lstrip()
    if "\\" in line or line[:1] in ("'", '"'):
        raise _Unsure("an escape or a quoted key")
    key, equals, value = line.partition("=")
    key = key.rstrip()
    if not equals or not key or "#" in key or any(c.isspace() for c in key):
        return None
    value = value.lstrip()
    if value[:1] in ("'", '"'):
        try:
            return key, _quoted(value)
        except ValueError:
            return None
    return key, re.sub(r"\s+#.*", "", value).rstrip()


def _dotenv(path: str) -> dict[str, str] | None:
    text = _read(path)
    if text is None:
        return None
    if any(c in text for c in _ODD_BREAKS):
        raise _Unsure(path)
    found: dict[str, str] = {}
    for line in text.splitlines():
        binding = _binding(line)
        if binding is not None:
            found[binding[0]] = binding[1]  # the last one wins, as in python-dotenv
    return found


def _xdg(env: Mapping[str, str], variable: str, fallback: str) -> str:
    value = env.get(variable, "")
    return value if os.path.isabs(value) else os.path.join(env.get("HOME") or os.path.expanduser("~"), fallback)


def data_folder(env: Mapping[str, str]) -> str:
    """`Settings.home`: `CODER_AGENT_HOME`, else `$XDG_DATA_HOME/coder-agent`."""
    value = (env.get(PREFIX + "HOME") or "").strip()
    default = os.path.join(_xdg(env, "XDG_DATA_HOME", ".local/share"), "coder-agent")
    return os.path.expanduser(value) if value else default


def _config_folder(env: Mapping[str, str]) -> str:
    value = (env.get(PREFIX + "CONFIG_DIR") or "").strip()
    default = os.path.join(_xdg(env, "XDG_CONFIG_HOME", ".config"), "coder-agent")
    return os.path.expanduser(value) if value else default


def _once(paths: list[str]) -> list[str]:
    return paths if os.path.normpath(paths[0]) != os.path.normpath(paths[1]) else paths[:1]


def _merge_dotenv(env: dict[str, str]) -> None:
    """The user's `.env` files' variables added to `env`, what is set winning (`settings.merge_user_dotenv`)."""
    for which in range(2):  # the config folder's file may move the data folder: the list is made again
        files = _once([os.path.join(_config_folder(env), ".env"), os.path.join(data_folder(env), ".env")])
        if which >= len(files):
            break
        for key, value in (_dotenv(files[which]) or {}).items():
            env.setdefault(key, value)


def _config_values(env: Mapping[str, str]) -> dict[str, Any]:
    """Each field's value from the `config.toml` files (the first file that has it wins)."""
    values: dict[str, Any] = {}
    files = _once([os.path.join(_config_folder(env), "config.toml"), os.path.join(data_folder(env), "config.toml")])
    for path in files:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except UnicodeDecodeError as exc:
            raise _Unsure(path) from exc
        except OSError:
            continue  # `Settings.load` reads such a file as empty
        import tomllib  # here: only a user with such a file pays its import

        try:
            config = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise _Unsure(path) from exc
        for option in _FIELDS:
            if option in config and option not in values:
                values[option] = config[option]
    return values


def _positive_number(value: Any) -> None:
    if isinstance(value, str) and _PLAIN_NUMBER.fullmatch(value) and float(value) > 0:
        return
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return
    raise _Unsure("a timeout")


def _exact(env: dict[str, str]) -> Peek:
    _merge_dotenv(env)
    raw: dict[str, Any] = {name: env[PREFIX + name.upper()] for name in _FIELDS if PREFIX + name.upper() in env}
    for option, value in _config_values(env).items():
        raw.setdefault(option, value)
    model = raw.get("model")
    if model is not None and not isinstance(model, str):
        raise _Unsure("model")
    models = raw.get("models", [])
    if isinstance(models, str):
        models = [part.strip() for part in models.split(",") if part.strip()]
    if not isinstance(models, list) or not all(isinstance(name, str) for name in models):
        raise _Unsure("models")
    mode = raw.get("default_mode", DEFAULT_MODE)
    if mode not in MODE_IDS:
        raise _Unsure("default_mode")
    for timeout in ("mcp_timeout", "mcp_call_timeout"):
        if timeout in raw:
            _positive_number(raw[timeout])
    return Peek(model if model and model.strip() else None, tuple(models), mode, True)


def peek(environ: Mapping[str, str] | None = None) -> Peek:
    """The model, the model menu and the mode of new sessions, as `Settings.load` would find them.

    `exact` is False when some source could not be read exactly, or a value would be a settings problem that
    `session/new` is refused for; `model` is then the best guess from what could be read.
    """
    env = dict(os.environ if environ is None else environ)
    try:
        return _exact(env)
    except _Unsure:
        model = (env.get(PREFIX + "MODEL") or "").strip() or None
        return Peek(model, (), DEFAULT_MODE, False)


def configured_model(environ: Mapping[str, str] | None = None) -> str | None:
    """CODER_AGENT_MODEL as `Settings.load` would find it (blank counts as unset), or None."""
    return peek(environ).model
