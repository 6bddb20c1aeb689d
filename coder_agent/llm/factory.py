"""The model a session's turn talks to: the agent's own adapter for the wires it speaks, litellm for the rest.

One choice per model for the whole session, made from the model string, the settings and the environment
(`wire/routes.py`): OpenAI Chat Completions and its providers, and Anthropic Messages, go to `DirectModel`; every
other provider (Bedrock, Vertex, Azure, Cohere, ...) to `LiteLLMModel`, whose import starts as soon as a session's
model needs it (`needs_litellm`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..prestart.early_call import EarlyCall
from .base import Model
from .direct_model import DirectModel, close_unclaimed
from .wire.config import ModelConfig
from .wire.routes import route_for


def make_model(
    config: ModelConfig,
    cache_key: str | None = None,
    early: EarlyCall | None = None,
    environ: Mapping[str, str] = os.environ,
) -> Model:
    """`cache_key`: the session's (the providers that take one route its calls to the same cache); `early`: the
    session's early first call, which its first model call takes over when it sends the same bytes."""
    route = route_for(config, environ)
    if route is not None:
        return DirectModel(config, route, cache_key, early)
    if early is not None and early.claim():  # the early stage routes as this does: a settings change since, maybe
        close_unclaimed(early, f"{config.model} goes through litellm")
    from .litellm_model import LiteLLMModel  # here: its module imports litellm's loader

    return LiteLLMModel(config)


def needs_litellm(model: str, api_base: str | None, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether calls to `model` go through litellm (the long tail of providers)."""
    return route_for(ModelConfig(model=model, api_base=api_base), environ) is None
