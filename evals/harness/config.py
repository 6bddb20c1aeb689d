"""A run's settings (saved as `run.json`, so `--resume` runs on exactly as started) and the agent's env."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .client import PermissionPolicy, Profile
from .errors import one_line
from .offline import API_KEY, MODEL
from .procs import tool_path
from .task import Task

REPO_ROOT = Path(__file__).resolve().parents[2]
Offline = Literal["golden", "null"]
Sandbox = Literal["local", "docker"]

# Settings a run decides itself: the user's own values for these are not passed on to the agent.
_RUN_OWNED = ("MODEL", "HOME", "DEFAULT_MODE", "MAX_TURN_REQUESTS", "MODELS")
_OFFLINE_OWNED = ("API_BASE", "API_KEY", "MAX_RETRIES", "RETRY_BASE_DELAY", "REQUEST_TIMEOUT")
# litellm must not reach the network for its cost map when the model is scripted.
_OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "HF_HUB_OFFLINE": "1",
}


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    suite: str
    tasks: list[str] = Field(default_factory=list, description="only these task ids (default: all)")
    model: str | None = Field(default=None, description="litellm model string for real runs")
    offline: Offline | None = Field(default=None, description="play each task's golden.json or null.json")
    profile: Profile = "editor"
    permission: PermissionPolicy = "allow"
    trials: int = Field(default=1, ge=1)
    workers: int = Field(default=1, ge=1)
    retries: int = Field(default=0, ge=0, le=3)
    sandbox: Sandbox = Field(default="local", description="where the agent and verifier run: here, or a container")
    image: str | None = Field(default=None, description="docker: the base image of tasks without environment/")

    @model_validator(mode="after")
    def _one_model(self) -> RunConfig:
        if (self.model is None) == (self.offline is None):
            raise ValueError("give exactly one of --model (a real run) and --offline golden|null")
        return self

    @property
    def model_name(self) -> str:
        return self.model if self.model is not None else f"scripted-{self.offline}"

    def save(self, run_dir: Path) -> None:
        (run_dir / "run.json").write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, run_dir: Path) -> RunConfig:
        path = run_dir / "run.json"
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ValueError(f"{run_dir} is not a run folder (it has no run.json)") from exc
        except ValidationError as exc:
            raise ValueError(f"{path} does not hold a run's settings: {one_line(exc)}") from exc


def python_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment in which `python` and `coder_agent` are this checkout's (for the agent and the model server)."""
    source = dict(os.environ if base is None else base)
    python_path = [str(REPO_ROOT), *filter(None, [source.get("PYTHONPATH")])]
    return {**source, "PYTHONPATH": os.pathsep.join(python_path), "PATH": tool_path(source)}


def agent_env(
    config: RunConfig, task: Task, home: Path, api_base: str | None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The agent's environment: the user's (so provider keys reach litellm), with the run's settings over it."""
    owned = _RUN_OWNED + (_OFFLINE_OWNED if config.offline else ())
    env = {
        key: value
        for key, value in python_env(base).items()
        if not (key.startswith("CODER_AGENT_") and key.removeprefix("CODER_AGENT_") in owned)
    }
    env.update(
        {
            "CODER_AGENT_HOME": str(home),
            "CODER_AGENT_MAX_TURN_REQUESTS": str(task.config.limits.max_turn_requests),
        }
    )
    if config.offline:
        assert api_base is not None
        env.update(_OFFLINE_ENV)
        env.update(
            {
                "CODER_AGENT_MODEL": MODEL,
                "CODER_AGENT_API_BASE": api_base,
                "CODER_AGENT_API_KEY": API_KEY,
                "CODER_AGENT_MAX_RETRIES": "0",  # the script is exact: a retry would play the next reply
                "CODER_AGENT_REQUEST_TIMEOUT": "30",
            }
        )
    else:
        assert config.model is not None
        env["CODER_AGENT_MODEL"] = config.model
    return env
