"""What the end-to-end tests share: where the repo is, the agent's environment, and how long a first prompt takes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

# The driving helpers live in tests/support/driving.py (the in-process tests use them too); here for the e2e tests.
from tests.support.driving import REPO_ROOT, BackgroundPrompt, initialize, request, texts, updates

__all__ = [
    "FIRST_PROMPT_TIMEOUT",
    "REPO_ROOT",
    "BackgroundPrompt",
    "EnvFactory",
    "initialize",
    "request",
    "scripted_env",
    "texts",
    "updates",
]

EnvFactory = Callable[..., dict[str, str]]  # the `agent_env` fixture

# The first prompt of a process waits for litellm to import (~2-6 s on a busy 2-core machine).
FIRST_PROMPT_TIMEOUT = 45.0


def scripted_env(model_url: str, home: Path) -> dict[str, str]:
    """The agent's environment for a module-scoped scenario (the `agent_env` fixture is per test)."""
    return {
        "PYTHONPATH": str(REPO_ROOT),
        "CODER_AGENT_MODEL": "openai/scripted",
        "CODER_AGENT_API_BASE": model_url,
        "CODER_AGENT_API_KEY": "sk-test",
        "CODER_AGENT_HOME": str(home),
        "CODER_AGENT_RETRY_BASE_DELAY": "0.01",
        "CODER_AGENT_MAX_RETRIES": "2",
        "CODER_AGENT_REQUEST_TIMEOUT": "20",
    }
