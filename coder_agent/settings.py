"""All settings, in one place, read only from sources the user controls.

In order of precedence:

1. the process environment (the editor's agent configuration sets it);
2. the user's `.env` in the config folder, `$XDG_CONFIG_HOME/coder-agent/.env` (`~/.config/coder-agent/.env`);
3. the user's `.env` in the data folder, `$CODER_AGENT_HOME/.env`;
4. the data folder's `config.toml` (the settings' names in lower case, without the prefix);
5. the defaults.

Nothing in the folder the agent starts in is read. Editors start the agent in whatever repository the user
opened, maybe someone else's: a `.env` there could otherwise turn on `bypass` mode (every command runs
unasked) or send the user's key to another host. `workspace_dotenv_warning` says so when one is there.

The `.env` files' variables are added to the environment (never over a value already set), so the provider
keys they hold (`OPENAI_API_KEY`, ...) reach litellm; `credentials` keeps them from child processes.
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path

from dotenv import dotenv_values
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from .credentials import PREFIX, is_agent_variable
from .modes import MODE_IDS

log = logging.getLogger(__name__)

DOTENV = ".env"
MAX_WORKSPACE_DOTENV_BYTES = 1024 * 1024  # a workspace .env is only looked at to warn: read no more


class SettingsError(Exception):
    """A setting has a value we cannot use; the message names it."""


def _xdg_folder(environ: Mapping[str, str], variable: str, fallback: str) -> Path:
    """An XDG base folder: the variable when it holds an absolute path (the spec ignores others), else the default."""
    value = environ.get(variable, "")
    if os.path.isabs(value):
        return Path(value)
    return Path(environ.get("HOME") or Path.home()) / fallback


def default_home(environ: Mapping[str, str]) -> Path:
    return _xdg_folder(environ, "XDG_DATA_HOME", ".local/share") / "coder-agent"


def config_dir(environ: Mapping[str, str]) -> Path:
    """The user's config folder: `$XDG_CONFIG_HOME/coder-agent`, by default `~/.config/coder-agent`."""
    return _xdg_folder(environ, "XDG_CONFIG_HOME", ".config") / "coder-agent"


def home_of(environ: Mapping[str, str]) -> Path:
    """The data folder: `CODER_AGENT_HOME`, else `$XDG_DATA_HOME/coder-agent`."""
    value = environ.get(PREFIX + "HOME", "").strip()
    return Path(value).expanduser() if value else default_home(environ)


class Settings(BaseModel):
    """Each field is read from `CODER_AGENT_<FIELD NAME IN CAPITALS>`."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    model: str | None = Field(default=None, description="litellm model string, e.g. anthropic/claude-sonnet-4-5")
    api_base: str | None = Field(default=None, description="Base URL given to litellm as api_base")
    api_key: str | None = Field(default=None, description="API key; else litellm's own provider variables")
    home: Path = Field(description="Data folder: sessions, logs, user config")
    log_level: str = Field(default="INFO", description="DEBUG, INFO, WARNING or ERROR")
    request_timeout: float = Field(default=120.0, gt=0, description="Seconds without data before a model call fails")
    max_retries: int = Field(default=3, ge=0, le=10, description="Retries of a failed model call (429, 5xx, ...)")
    retry_base_delay: float = Field(default=1.0, ge=0, description="First retry delay in seconds; doubles each time")
    max_tokens: int | None = Field(default=None, gt=0, description="Cap on tokens per model reply")
    models: list[str] = Field(default_factory=list, description="Models offered in the editor's model menu")
    default_mode: str = Field(default="default", description="Mode of new sessions")
    max_turn_requests: int = Field(default=100, ge=1, description="Model calls per prompt turn before it stops")
    mcp_timeout: float = Field(default=30.0, gt=0, description="Seconds an MCP server may take to start")
    mcp_call_timeout: float = Field(default=120.0, gt=0, description="Seconds an MCP tool call may take")
    serve_token: str | None = Field(
        default=None, description="Bearer token clients of `coder-agent serve` must send; unset: one is made at start"
    )
    serve_origins: list[str] = Field(
        default_factory=list, description="Browser origins `coder-agent serve` accepts besides its own address"
    )

    # Settings that could not be used (`load(lenient=True)`): setting name -> what is wrong. Each stands at its
    # default meanwhile, and the requests that need it are refused with that message (`SettingsProblems`).
    _problems: dict[str, str] = PrivateAttr(default_factory=dict)

    @property
    def problems(self) -> dict[str, str]:
        return dict(self._problems)

    @field_validator("models", "serve_origins", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("default_mode")
    @classmethod
    def _known_mode(cls, value: str) -> str:
        if value not in MODE_IDS:
            raise ValueError(f"must be one of {', '.join(MODE_IDS)}")
        return value

    @field_validator("model", "api_base", "api_key", "serve_token", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("log_level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        level = value.upper()
        if level not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
            raise ValueError("must be DEBUG, INFO, WARNING or ERROR")
        return level

    @property
    def log_dir(self) -> Path:
        return self.home / "logs"

    @classmethod
    def load(
        cls, environ: MutableMapping[str, str] | None = None, *, user_files: bool = True, lenient: bool = False
    ) -> Settings:
        """The settings from `environ` (default: the process environment) and the user's own files.

        With `user_files`, the variables of the user's `.env` files are first added to `environ` (values already
        set win), so that provider keys kept there reach litellm. Nothing is read from the current folder.
        An unusable setting raises `SettingsError` naming it; with `lenient`, it stays at its default instead and
        is listed in `problems` (the agent stays up and says what to fix when a request needs it).
        """
        env = os.environ if environ is None else environ
        problems: dict[str, str] = {}
        if user_files:
            try:
                merge_user_dotenv(env)
            except SettingsError as exc:
                if not lenient:
                    raise
                problems["files"] = str(exc)
        values: dict[str, object] = {}
        for name in cls.model_fields:
            raw = env.get(PREFIX + name.upper())
            if raw is not None:
                values[name] = raw
        values["home"] = home_of(env)
        try:
            config = read_config_file(Path(str(values["home"])) / "config.toml")
        except SettingsError as exc:
            if not lenient:
                raise
            problems["files"], config = str(exc), {}
        for option, setting in config.items():
            if option in cls.model_fields:
                values.setdefault(option, setting)
        try:
            settings = cls.model_validate(values)
        except ValidationError as exc:
            found = {
                PREFIX + str(err["loc"][0]).upper(): str(err["msg"]).removeprefix("Value error, ")
                for err in exc.errors(include_url=False)
            }
            if not lenient:
                listed = "; ".join(f"{name}: {message}" for name, message in found.items())
                raise SettingsError(f"invalid settings: {listed}") from None
            problems.update(found)
            usable = {k: v for k, v in values.items() if PREFIX + k.upper() not in found or k == "home"}
            settings = cls.model_validate(usable)
        settings._problems = problems
        return settings


def user_dotenv_files(environ: Mapping[str, str]) -> list[Path]:
    """The trusted `.env` files, first one winning: the config folder's, then the data folder's."""
    files = [config_dir(environ) / DOTENV, home_of(environ) / DOTENV]
    return files if files[0] != files[1] else files[:1]


def merge_user_dotenv(environ: MutableMapping[str, str]) -> list[Path]:
    """Add the variables of the user's `.env` files to `environ` (what is set wins); the files that were read.

    The config folder's file may name the data folder (`CODER_AGENT_HOME`), so it is read first.
    """
    read: list[Path] = []
    for which in range(2):  # the list is looked at again after the first file: it may move the data folder
        files = user_dotenv_files(environ)
        if which >= len(files):
            break
        values = read_dotenv(files[which])
        if values is not None:
            read.append(files[which])
            for key, value in values.items():
                environ.setdefault(key, value)
    return read


def read_dotenv(path: Path) -> dict[str, str] | None:
    """A `.env` file's variables, as python-dotenv reads them (quotes, escapes, comments, multi-line values;
    `export` allowed; no `${VAR}` expansion: values are literal). None when there is no such file."""
    try:
        with path.open(encoding="utf-8") as handle:
            text = handle.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"cannot read {path}: {exc}") from None
    return _parse_dotenv(text)


def _parse_dotenv(text: str) -> dict[str, str]:
    values = dotenv_values(stream=io.StringIO(text), interpolate=False)
    return {key: value for key, value in values.items() if value is not None}


def read_config_file(path: Path) -> dict[str, object]:
    """The user's config file (`$CODER_AGENT_HOME/config.toml`): the settings' names in lower case."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"invalid config file {path}: {exc}") from None


def workspace_dotenv_warning(start: Path, environ: Mapping[str, str]) -> str | None:
    """What to tell the user when the folder the agent starts in has a `.env` naming our settings or keys.

    That file is never read for settings or credentials (see the module's docstring). Only variable names are
    quoted, never values; a file that is one of the user's own trusted files gets no warning.
    """
    path = start / DOTENV
    try:
        if not path.is_file() or any(path.samefile(own) for own in user_dotenv_files(environ) if own.exists()):
            return None
        with path.open("rb") as handle:
            text = handle.read(MAX_WORKSPACE_DOTENV_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    names = sorted(name for name in _parse_dotenv(text) if is_agent_variable(name))
    if not names:
        return None
    return (
        f"ignoring {', '.join(names)} in {path}: settings and keys are never read from the folder the agent "
        f"starts in (it may be someone else's repository). Put them in {config_dir(environ) / DOTENV} or in the "
        "editor's agent configuration (env)."
    )


def warn_about_workspace_dotenv(start: Path | None = None, environ: Mapping[str, str] | None = None) -> None:
    """Log `workspace_dotenv_warning` for the current folder (once logging is set up), if there is one."""
    message = workspace_dotenv_warning(
        Path.cwd() if start is None else start, os.environ if environ is None else environ
    )
    if message is not None:
        log.warning("%s", message)
