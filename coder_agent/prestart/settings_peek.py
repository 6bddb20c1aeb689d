"""The settings the first answers need, read before `Settings.load` can run (stdlib only: see `prestart.early`).

`initialize` says whether prompts may carry images, which depends on the model; the early `session/new`
(`prestart.early_session`) needs the model, the model menu, the mode and the thought level of new sessions. Loading
the settings for real imports pydantic and python-dotenv (~150 ms); this reads the same places in the same order: the
environment, the user's `.env` files (config folder, then data folder: the first may move the second), then the
`config.toml` files (config folder, then data folder). `.env` lines in the plain forms (`KEY=value`, `export`,
quotes without escapes, comments) are read as python-dotenv reads them; anything else (an escape, a value over
several lines, a file that cannot be read) makes the peek inexact. An inexact peek is still the best guess for
`initialize`'s images, but the early `session/new` then leaves the request to the full agent.
`tests/test_settings_peek.py` compares the peek with `Settings.load` case by case.

`peek_model` goes further, for the early first model call (sent before the runtime is imported): it also adds
the keys `coder-agent login` saved, as `Settings.load` does, and gives the `ModelConfig` the runtime would build
(`server.assembly.model_factory`), the environment the runtime would route with, and whether a new session
would get MCP servers from the user's config. It gives nothing (None) rather than a guess.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..kit.credentials import is_agent_variable
from ..kit.modes import DEFAULT_MODE, MODE_IDS, THOUGHT_LEVEL_IDS

if TYPE_CHECKING:
    from ..llm.wire.config import ModelConfig

PREFIX = "CODER_AGENT_"
# the settings read from the environment and the `config.toml` files (those of `peek`, then those of `peek_model`)
_FIELDS = (
    *("model", "models", "default_mode", "thought_level", "mcp_timeout", "mcp_call_timeout"),
    *("api_base", "api_key", "request_timeout", "max_retries", "retry_base_delay", "max_tokens"),
    *("max_turn_requests", "mcp_config", "images"),
)
# python-dotenv splits lines on these alone; `str.splitlines` on more
_ODD_BREAKS = ("\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_PLAIN_NUMBER = re.compile(r"[0-9]+(\.[0-9]+)?")
_PLAIN_INTEGER = re.compile(r"[0-9]{1,18}")
CREDENTIALS_FILE = "credentials.toml"  # `userfiles.CREDENTIALS_FILE` (the keystore's)
MCP_FILE = "mcp.json"  # `userfiles.MCP_FILE`
MAX_MCP_FILE_BYTES = 1024 * 1024  # `mcp.config_files.MAX_FILE_BYTES`


class Peek(NamedTuple):
    model: str | None
    models: tuple[str, ...]
    default_mode: str
    exact: bool  # every source was read as `Settings.load` reads it, and these settings are usable
    home: str = ""  # `Settings.home`, the data folder (sessions): known when `exact`
    thought_level: str = "off"  # the thinking of new sessions whose model thinks
    images: bool | None = None  # `CODER_AGENT_IMAGES`: whether the model takes images, when the user said so
    config_dir: str = ""  # `Settings.config_dir`, the user's config folder (their commands): known when `exact`


class ModelPeek(NamedTuple):
    config: ModelConfig  # what `model_factory(...)(model, None)` builds from `Settings.load(lenient=True)`
    environ: dict[str, str]  # the environment after `Settings.load`'s merges (`.env` files, saved login keys)
    mcp_servers: bool  # the user's config may give a new session MCP servers (its `mcp.json`, or `mcp_config`)
    commands: str = ""  # the user's command files' folder (`Settings.config_dir` / "commands")


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
    """The user's `.env` files' variables added to `env`, what is set winning (`config.sources.merge_user_dotenv`)."""
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


def _number(value: Any, integer: bool = False) -> float:
    """A number setting's value as pydantic reads it (an `int` field's when `integer`); `_Unsure` unless it is in a
    plain form (digits, a dot: from the environment or `.env`; a TOML integer or float) whose reading is sure."""
    if isinstance(value, str) and (_PLAIN_INTEGER if integer else _PLAIN_NUMBER).fullmatch(value):
        return int(value) if integer else float(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value if integer else float(value)
    if isinstance(value, float) and not integer and math.isfinite(value):
        return value
    raise _Unsure("a number")


def _positive_number(value: Any) -> None:
    if _number(value) <= 0:
        raise _Unsure("a timeout")


def _bounded(
    raw: Mapping[str, Any],
    name: str,
    default: float | None,
    *,
    integer: bool = False,
    gt: float | None = None,
    ge: float | None = None,
    le: float | None = None,
) -> Any:
    """A number setting as its field reads it (`default` when unset), `_Unsure` when out of the field's bounds."""
    if name not in raw:
        return default
    value = _number(raw[name], integer)
    if (gt is not None and value <= gt) or (ge is not None and value < ge) or (le is not None and value > le):
        raise _Unsure(name)
    return value


_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})  # the strings pydantic reads as a bool
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def _flag(raw: Mapping[str, Any], name: str) -> bool | None:
    """A yes/no setting as its field reads it (None when unset), `_Unsure` for what pydantic would refuse."""
    value = raw.get(name)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
        return value.lower() in _TRUE
    raise _Unsure(name)


def _text(raw: Mapping[str, Any], name: str) -> str | None:
    """A text setting, blank counting as unset (`Settings._blank_is_unset`)."""
    value = raw.get(name)
    if value is not None and not isinstance(value, str):
        raise _Unsure(name)
    return value if value and value.strip() else None


def _values(env: Mapping[str, str]) -> dict[str, Any]:
    """Each field's value as `Settings.load` finds it: the environment's, else the `config.toml` files'."""
    raw: dict[str, Any] = {name: env[PREFIX + name.upper()] for name in _FIELDS if PREFIX + name.upper() in env}
    for option, value in _config_values(env).items():
        raw.setdefault(option, value)
    return raw


def _session(raw: Mapping[str, Any], home: str, config_dir: str = "") -> Peek:
    model = _text(raw, "model")
    models = raw.get("models", [])
    if isinstance(models, str):
        models = [part.strip() for part in models.split(",") if part.strip()]
    if not isinstance(models, list) or not all(isinstance(name, str) for name in models):
        raise _Unsure("models")
    mode = raw.get("default_mode", DEFAULT_MODE)
    if mode not in MODE_IDS:
        raise _Unsure("default_mode")
    level = raw.get("thought_level", "off")
    if level not in THOUGHT_LEVEL_IDS:
        raise _Unsure("thought_level")
    for timeout in ("mcp_timeout", "mcp_call_timeout"):
        if timeout in raw:
            _positive_number(raw[timeout])
    return Peek(model, tuple(models), mode, True, home, level, _flag(raw, "images"), config_dir)


def _exact(env: dict[str, str]) -> Peek:
    _merge_dotenv(env)
    return _session(_values(env), data_folder(env), _config_folder(env))


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


def configured_images(environ: Mapping[str, str] | None = None) -> tuple[str | None, bool | None]:
    """(CODER_AGENT_MODEL, CODER_AGENT_IMAGES) as `Settings.load` would find them; what `initialize` needs."""
    found = peek(environ)
    return found.model, found.images


def configured_model(environ: Mapping[str, str] | None = None) -> str | None:
    """CODER_AGENT_MODEL as `Settings.load` would find it (blank counts as unset), or None."""
    return peek(environ).model


def _merge_saved_keys(env: dict[str, str]) -> None:
    """The keys `coder-agent login` saved added to `env`, what is set winning (`config.sources.merge_saved_keys`, as
    `auth.keystore.KeyStore.load` reads them); `_Unsure` for a file it cannot read, or a key kept in the OS
    keyring that would count (its value is not read here)."""
    text = _read(os.path.join(_config_folder(env), CREDENTIALS_FILE))
    if text is None:
        return
    import tomllib

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _Unsure(CREDENTIALS_FILE) from exc
    table = document.get("keys", {})
    keys = {k: v for k, v in table.items() if isinstance(v, str) and v.strip()} if isinstance(table, dict) else {}
    keyring = document.get("keyring")
    names = keyring.get("names", []) if isinstance(keyring, dict) else []
    if not isinstance(names, list):
        raise _Unsure("keyring names")
    saved = {name: key.strip() for name, key in keys.items() if is_agent_variable(name)}
    for name in names:
        if isinstance(name, str) and is_agent_variable(name) and name not in saved and name not in env:
            raise _Unsure("a key in the OS keyring")
    for name, key in saved.items():
        env.setdefault(name, key)


def _mcp_servers(env: Mapping[str, str], raw: Mapping[str, Any]) -> bool:
    """Whether a new session may get MCP servers from the user's config (`server.session_mcp.user_servers`): any
    `mcp_config` at all, or an `mcp.json` in the config folder naming a server that is not disabled. An entry the
    runtime would leave out as unusable still counts (True is the safe side); `_Unsure` for a file the runtime
    would refuse whole (`mcp.config_files.read`)."""
    if "mcp_config" in raw:
        return True
    path = os.path.join(_config_folder(env), MCP_FILE)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_MCP_FILE_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise _Unsure(path) from exc
    if len(data) > MAX_MCP_FILE_BYTES:
        raise _Unsure(path)
    import json

    try:
        document = json.loads(data.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError among them
        raise _Unsure(path) from exc
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        raise _Unsure(path)
    return any(
        name.strip() and not (isinstance(entry, dict) and entry.get("disabled") is True)
        for name, entry in servers.items()
    )


def peek_model(environ: Mapping[str, str] | None = None) -> ModelPeek | None:
    """The configured model's `ModelConfig` as the runtime would build it, the environment it would route with, and
    whether new sessions may get MCP servers from the user's config.

    None whenever any source cannot be read exactly as `Settings.load` reads it, a setting involved would be a
    settings problem (one `session/new` or `session/prompt` is refused for), or no model is configured.
    """
    env = dict(os.environ if environ is None else environ)
    try:
        _merge_dotenv(env)
        _merge_saved_keys(env)
        raw = _values(env)
        model = _session(raw, data_folder(env)).model
        if model is None:
            return None
        _bounded(raw, "max_turn_requests", 100, integer=True, ge=1)
        api_base, api_key = _text(raw, "api_base"), _text(raw, "api_key")
        timeout = _bounded(raw, "request_timeout", 120.0, gt=0)
        max_retries = _bounded(raw, "max_retries", 3, integer=True, ge=0, le=10)
        retry_base_delay = _bounded(raw, "retry_base_delay", 1.0, ge=0)
        max_tokens = _bounded(raw, "max_tokens", None, integer=True, gt=0)
        mcp_servers = _mcp_servers(env, raw)
    except _Unsure:
        return None
    from ..kit import masking
    from ..llm.wire.config import ModelConfig
    from ..llm.wire.usable import request_key

    masking.learn_environ(env)  # what the early call's reply or error may echo: the early writer masks it

    config = ModelConfig(
        model=model,
        api_base=api_base,
        api_key=request_key(model, api_base, api_key, env),
        timeout=timeout,
        max_retries=max_retries,
        retry_base_delay=retry_base_delay,
        max_tokens=max_tokens,
    )
    return ModelPeek(config, env, mcp_servers, os.path.join(_config_folder(env), "commands"))
