"""The model a session's turn talks to: the agent's own adapter for the wires it speaks, litellm for the rest.

One choice per model for the whole session, made from the model string, the settings and the environment
(`wire/routes.session_route`, which the early first call makes too): GPT-5 and o-series models on OpenAI go to
`ResponsesModel` (the Responses API, asked first); OpenAI Chat Completions and its providers, and Anthropic
Messages, to `DirectModel`; every other provider (Bedrock, Vertex, Azure, Cohere, ...) to `LiteLLMModel`, whose
import starts as soon as a session's model needs it (`needs_litellm`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..prestart.early_call import EarlyCall
from .base import Model
from .direct_model import DirectModel, close_unclaimed
from .responses_model import ResponsesModel
from .wire.config import ModelConfig
from .wire.routes import Route, session_route


def make_model(
    config: ModelConfig,
    cache_key: str | None = None,
    early: EarlyCall | None = None,
    environ: Mapping[str, str] = os.environ,
) -> Model:
    """`cache_key`: the session's (the providers that take one route its calls to the same cache); `early`: the
    session's early first call, which its first model call takes over when it sends the same bytes."""
    route = session_route(config, environ)
    if isinstance(route, Route):
        return DirectModel(config, route, cache_key, early)
    if route is not None:
        return ResponsesModel(config, route, cache_key, early)
    if early is not None and early.claim():  # the early stage routes as this does: a settings change since, maybe
        close_unclaimed(early, f"{config.model} goes through litellm")
    from .litellm_model import LiteLLMModel  # here: its module imports litellm's loader

    return LiteLLMModel(config)


def needs_litellm(model: str, api_base: str | None, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether calls to `model` go through litellm (the long tail of providers)."""
    return session_route(ModelConfig(model=model, api_base=api_base), environ) is None
