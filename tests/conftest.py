"""Test-wide set-up: litellm must never reach the internet, whichever test imports it first."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("REPEATED_STREAMING_CHUNK_LIMIT", "100000")


import pytest


@pytest.fixture
def anyio_backend() -> str:
    # litellm is asyncio-only; everything runs on anyio's asyncio backend.
    return "asyncio"
