"""All settings, in one place: the environment wins over a `.env` file, which wins over defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

PREFIX = "CODER_AGENT_"


class SettingsError(Exception):
    """A setting has a value we cannot use; the message names it."""


def default_home(environ: Mapping[str, str]) -> Path:
    data_home = environ.get("XDG_DATA_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".local" / "share")
    return Path(data_home) / "coder-agent"


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

    @field_validator("models", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("default_mode")
    @classmethod
    def _known_mode(cls, value: str) -> str:
        modes = ("ask", "default", "accept-edits", "plan", "bypass")
        if value not in modes:
            raise ValueError(f"must be one of {', '.join(modes)}")
        return value

    @field_validator("model", "api_base", "api_key", mode="before")
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
    def load(cls, environ: Mapping[str, str] | None = None, dotenv: Path | None = Path(".env")) -> Settings:
        env = dict(os.environ if environ is None else environ)
        if dotenv is not None:
            for key, value in read_dotenv(dotenv).items():
                env.setdefault(key, value)
        values: dict[str, object] = {}
        for name in cls.model_fields:
            raw = env.get(PREFIX + name.upper())
            if raw is not None:
                values[name] = raw
        values.setdefault("home", default_home(env))
        for option, setting in read_config_file(Path(str(values["home"])) / "config.toml").items():
            if option in cls.model_fields:
                values.setdefault(option, setting)
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            problems = "; ".join(
                f"{PREFIX}{'.'.join(str(p) for p in err['loc']).upper()}: {err['msg']}"
                for err in exc.errors(include_url=False)
            )
            raise SettingsError(f"invalid settings: {problems}") from None


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


def read_dotenv(path: Path) -> dict[str, str]:
    """`KEY=value` lines; `export`, quotes and `#` comments are understood. A missing file is empty."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    values: dict[str, str] = {}
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        key, value = key.strip(), value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        if key:
            values[key] = value
    return values
