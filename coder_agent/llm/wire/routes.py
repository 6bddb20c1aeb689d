"""Which model calls can skip litellm: the wire format, URL, key and request rules of a direct call.

Decided from the litellm model string, the settings and the environment, without importing litellm.
A call goes direct only where we send exactly what litellm would send (the contract tests compare the
two); anything unsure returns None and waits for litellm.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .anthropic_request import NeedsLiteLLM, anthropic_body, max_tokens_for
from .config import ModelConfig
from .openai_wire import openai_body, openai_headers
from .price_map import PriceMap
from .providers import provider_prefix

OPENAI_DEFAULT_BASE = "https://api.openai.com/v1"
ANTHROPIC_VERSION = "2023-06-01"
ANTHROPIC_DEFAULT_BASE = "https://api.anthropic.com"

# Environment that changes what litellm or the SDKs it drives send, in ways we do not reproduce.
_TRANSPORT_UNSURE_ENV = ("DISABLE_AIOHTTP_TRUST_ENV", "SSL_VERIFY", "SSL_CERTIFICATE")  # litellm's proxy/TLS knobs
_OPENAI_UNSURE_ENV = ("OPENAI_ORGANIZATION", "OPENAI_ORG_ID", "OPENAI_PROJECT", "OPENAI_PROJECT_ID")
_ANTHROPIC_UNSURE_ENV = ("LITELLM_ANTHROPIC_DISABLE_URL_SUFFIX",)


@dataclass(frozen=True)
class Route:
    wire: Literal["openai", "anthropic"]
    provider: str  # litellm's provider name
    model: str  # the name the provider knows the model by
    url: str  # the endpoint the request is posted to
    api_key: str | None  # None: no key found (the call fails, as litellm's would)
    send_reasoning_effort: bool = True  # OpenAI wire: whether litellm passes `reasoning_effort` on
    # OpenAI wire, per provider: what litellm adds to the headers and the body, and drops from messages.
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Mapping[str, Any] = field(default_factory=dict)
    drop_thinking_blocks: bool = False


def route_headers(route: Route) -> dict[str, str]:
    """The headers a direct call sends (the early first call too)."""
    key = route.api_key or ""
    if route.wire == "anthropic":
        return {
            "x-api-key": key,
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
            "accept": "application/json",
        }
    return {**openai_headers(key), **route.headers}


def route_body(
    route: Route,
    config: ModelConfig,
    prices: PriceMap,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """The body a direct call sends (`DirectModel.request`; the early first call too), from the messages in the
    provider's form; raises `NeedsLiteLLM` when it is not one we convert exactly as litellm would."""
    if route.wire == "anthropic":
        if config.reasoning_effort:
            raise NeedsLiteLLM("Anthropic thinking budgets are litellm's to map")
        max_tokens = config.max_tokens or max_tokens_for(route.model, prices)
        return anthropic_body(route.model, messages, tools, max_tokens)
    return openai_body(
        route.model,
        messages,
        tools,
        max_tokens=config.max_tokens,
        reasoning_effort=config.reasoning_effort if route.send_reasoning_effort else None,
        extra=route.body,
        drop=("thinking_blocks",) if route.drop_thinking_blocks else (),
    )


def _env(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name)
    return value if value and value.strip() else None


def provider_and_name(model: str, prices: PriceMap) -> tuple[str, str] | None:
    """(litellm provider, model name) for the providers we can call directly, as litellm resolves them."""
    prefix = provider_prefix(model)
    if prefix is not None:
        return prefix, model.split("/", 1)[1]
    # A bare name: litellm looks it up in its model list (built from the same map).
    for provider in ("openai", "anthropic"):
        entry = prices.info(model, provider)
        if entry is not None and entry.get("litellm_provider") == provider and entry.get("mode") == "chat":
            return provider, model
    return None


def direct_route(config: ModelConfig, prices: PriceMap, environ: Mapping[str, str]) -> Route | None:
    if any(_env(environ, variable) for variable in _TRANSPORT_UNSURE_ENV):
        return None
    resolved = provider_and_name(config.model, prices)
    if resolved is None:
        return None
    provider, name = resolved
    if provider_prefix(config.model) is None and config.api_base:
        return None  # litellm may pick the provider from a known api_base first
    if not prices.has_plain_prices(name, provider):
        return None
    if provider == "openai":
        return _openai(config, name, prices, environ)
    if provider == "anthropic":
        return _anthropic(config, name, prices, environ)
    if provider in _COMPATIBLE:
        return _compatible(provider, config, name, environ)
    return None


def _openai(config: ModelConfig, name: str, prices: PriceMap, environ: Mapping[str, str]) -> Route | None:
    if any(_env(environ, variable) for variable in _OPENAI_UNSURE_ENV):
        return None
    # o-series and GPT-5 models speak the Responses API (`responses_route.py`), not this wire.
    if len(name) > 1 and name[0] == "o" and name[1].isdigit():
        return None
    if "gpt-5" in name or "gpt-6" in name:
        return None
    entry = prices.info(name, "openai")
    if entry is not None and entry.get("mode") != "chat":
        return None
    base = config.api_base or _env(environ, "OPENAI_BASE_URL") or _env(environ, "OPENAI_API_BASE")
    key = config.api_key or _env(environ, "OPENAI_API_KEY")
    return Route(
        wire="openai",
        provider="openai",
        model=name,
        url=(base or OPENAI_DEFAULT_BASE).rstrip("/") + "/chat/completions",
        api_key=key,
        # litellm passes reasoning_effort on for models it does not know (a proxy or local server decides);
        # for the OpenAI models it knows that are neither o-series nor GPT-5, it drops it.
        send_reasoning_effort=entry is None,
    )


def _anthropic(config: ModelConfig, name: str, prices: PriceMap, environ: Mapping[str, str]) -> Route | None:
    if any(_env(environ, variable) for variable in _ANTHROPIC_UNSURE_ENV):
        return None
    if name.startswith(("claude-2", "claude-instant")):
        return None  # litellm's anthropic_text provider
    key = config.api_key or _env(environ, "ANTHROPIC_API_KEY")
    if key is None and _env(environ, "ANTHROPIC_AUTH_TOKEN"):
        return None  # a bearer token instead of a key: litellm's rules
    base = (
        config.api_base
        or _env(environ, "ANTHROPIC_API_BASE")
        or _env(environ, "ANTHROPIC_BASE_URL")
        or ANTHROPIC_DEFAULT_BASE
    )
    url = base if base.endswith("/v1/messages") else base + "/v1/messages"
    return Route(wire="anthropic", provider="anthropic", model=name, url=url, api_key=key)


def _compatible(provider: str, config: ModelConfig, name: str, environ: Mapping[str, str]) -> Route | None:
    """OpenAI-compatible providers whose requests litellm sends our history unchanged, bar the rules below."""
    base_variable, default_base, key_variables, default_key = _COMPATIBLE[provider]
    base = config.api_base or _env(environ, base_variable) or default_base
    if base is None:
        return None  # litellm fails its own way without an api_base
    key = config.api_key or next((v for k in key_variables if (v := _env(environ, k))), None) or default_key
    return Route(
        wire="openai",
        provider=provider,
        model=name,
        url=base.rstrip("/") + "/chat/completions",
        api_key=key,
        send_reasoning_effort=provider != "lm_studio",
        drop_thinking_blocks=provider == "hosted_vllm",
    )


# provider -> (api base variable, default api base, key variables, default key), as litellm reads them.
# Not here, so waiting for litellm (the contract suite showed each differ): OpenRouter (litellm reads only
# `delta.reasoning` and rewrites its error events), Groq (litellm sends no key when none is set, and reports
# error events as HTTP errors), DeepSeek (litellm flattens content lists, dropping images, and maps reasoning
# to `thinking`), Ollama (litellm speaks its native /api/chat, not the OpenAI-compatible /v1).
_COMPATIBLE: dict[str, tuple[str, str | None, tuple[str, ...], str | None]] = {
    "hosted_vllm": ("HOSTED_VLLM_API_BASE", None, ("HOSTED_VLLM_API_KEY",), "fake-api-key"),
    "lm_studio": ("LM_STUDIO_API_BASE", None, ("LM_STUDIO_API_KEY",), "fake-api-key"),
}
