"""Which wire a model is spoken on, where its requests go and with what key. Stdlib only.

The agent speaks three wires itself, for the whole session: OpenAI's Responses API for GPT-5 and o-series models
(`responses_route.py`), OpenAI Chat Completions (OpenAI and the providers that offer it: `dialects.py` says how
each differs) and Anthropic Messages. Every other provider (Bedrock, Vertex, Azure, Cohere, ...) is litellm's:
`session_route` returns None for it, and the session's model goes through litellm.

Decided from the litellm model string, the settings and the environment, without importing litellm; the early first
call (before the runtime is in) routes the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

from . import model_info
from .anthropic_request import anthropic_body
from .config import ModelConfig
from .dialects import DIALECTS, Dialect
from .openai_wire import chat_body, openai_headers
from .providers import provider_prefix
from .responses_route import ResponsesRoute, responses_route

ANTHROPIC_VERSION = "2023-06-01"
ANTHROPIC_DEFAULT_BASE = "https://api.anthropic.com"


class Route(NamedTuple):
    wire: Literal["openai", "anthropic"]  # "openai": Chat Completions
    provider: str  # litellm's provider name
    model: str  # the name the provider knows the model by
    url: str  # the endpoint the request is posted to
    api_key: str | None  # None: no key found (the call fails before it is sent, as litellm's would)
    dialect: Dialect | None = None  # Chat Completions: the provider's own rules
    bearer: bool = False  # Anthropic: the key is a bearer token (`ANTHROPIC_AUTH_TOKEN`), not an API key


def route_headers(route: Route, cache_key: str | None = None) -> dict[str, str]:
    """The headers a call sends (the early first call's too)."""
    key = route.api_key or ""
    if route.wire == "anthropic":
        auth = {"authorization": f"Bearer {key}"} if route.bearer else {"x-api-key": key}
        return {
            **auth,
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
            "accept": "application/json",
        }
    headers = openai_headers(key)
    dialect = route.dialect
    if dialect is not None and dialect.cache_header and cache_key:
        headers[dialect.cache_header] = cache_key
    return headers


def route_body(
    route: Route,
    config: ModelConfig,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    cache_key: str | None = None,
) -> dict[str, Any]:
    """The body a call sends (the early first call's too), from the messages in the provider-neutral form
    (`ChatMessage.to_provider`). `cache_key`: the session's, for the providers that route by one."""
    info = model_info.info(config.model)
    # A model the map says does not reason is asked for no effort (providers refuse it; litellm drops it too); a model
    # it does not know may (a local server's model: the server decides).
    effort = config.reasoning_effort if info.supports_reasoning or not info.known else None
    if route.wire == "anthropic":
        return anthropic_body(
            route.model,
            messages,
            tools,
            max_tokens=config.max_tokens,
            output_limit=info.max_output_tokens,
            effort=effort,
            adaptive=info.adaptive_thinking,
        )
    assert route.dialect is not None
    return chat_body(
        route.dialect,
        route.model,
        messages,
        tools,
        max_tokens=config.max_tokens,
        reasoning_effort=effort,
        cache_key=cache_key,
    )


def _env(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name)
    return value.strip() if value and value.strip() else None


def provider_and_name(model: str) -> tuple[str, str] | None:
    """(litellm provider, model name) as litellm resolves a model string; None for a bare name it would not know."""
    prefix = provider_prefix(model)
    if prefix is not None:
        return prefix, model.split("/", 1)[1]
    owner = model_info.info(model).entry.get("litellm_provider")  # litellm's model lists are built from its map
    return (str(owner), model) if owner in ("openai", "anthropic") else None


def route_for(config: ModelConfig, environ: Mapping[str, str]) -> Route | None:
    """The route of `config.model` on a wire the agent speaks; None: a provider litellm serves."""
    resolved = provider_and_name(config.model)
    if resolved is None:
        return None
    provider, name = resolved
    if provider == "anthropic":
        return _anthropic(config, name, environ)
    dialect = DIALECTS.get(provider)
    if dialect is None:
        return None
    if provider == "openai" and dialect.reasoning_model(name):
        dialect = dialect.for_reasoning_models()
    base = config.api_base or next((v for k in dialect.base_variables if (v := _env(environ, k))), None)
    base = base or dialect.default_base
    if base is None:
        return None  # a local server named nowhere: litellm fails its own way
    if provider == "openai" and base.rstrip("/") != dialect.default_base:
        dialect = dialect.elsewhere()  # a server of the user's: no OpenAI-only parameters
    key = config.api_key or next((v for k in dialect.key_variables if (v := _env(environ, k))), None)
    base = base.rstrip("/")
    path = dialect.path
    if path.startswith("/v1/") and base.endswith("/v1"):  # Ollama's server named with its `/v1`
        path = path[len("/v1") :]
    return Route(
        wire="openai",
        provider=provider,
        model=dialect.model_name(name),
        url=base + path,
        api_key=key or dialect.default_key,
        dialect=dialect,
    )


def _anthropic(config: ModelConfig, name: str, environ: Mapping[str, str]) -> Route | None:
    if name.startswith(("claude-2", "claude-instant")):
        return None  # the legacy text-completion API: litellm's anthropic_text provider
    key = config.api_key or _env(environ, "ANTHROPIC_API_KEY")
    token = None if key else _env(environ, "ANTHROPIC_AUTH_TOKEN")
    base = (
        config.api_base
        or _env(environ, "ANTHROPIC_API_BASE")
        or _env(environ, "ANTHROPIC_BASE_URL")
        or ANTHROPIC_DEFAULT_BASE
    ).rstrip("/")
    url = base if base.endswith("/v1/messages") else base + "/v1/messages"
    return Route(
        wire="anthropic", provider="anthropic", model=name, url=url, api_key=key or token, bearer=token is not None
    )


def session_route(config: ModelConfig, environ: Mapping[str, str]) -> Route | ResponsesRoute | None:
    """The route of `config.model` for a whole session, the one choice the model factory and the early first call
    both make: OpenAI's Responses API for GPT-5 and o-series models (asked first), else Chat Completions or
    Anthropic Messages (`route_for`); None: a provider litellm serves."""
    return responses_route(config, environ) or route_for(config, environ)
