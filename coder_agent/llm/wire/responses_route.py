"""Which models the agent calls on OpenAI's Responses API itself, and where. Stdlib only.

GPT-5 and the o-series (`openai/gpt-5…`, `openai/o1…`, `o3…`, `o4…`, or their bare names) are reasoning models
whose reasoning must go back with each request to be kept across a session's turns, which only the Responses API
allows; litellm sends them to Chat Completions, where it is lost. So they take this wire for the whole session,
without litellm. Left out: the models litellm's map says the Responses API does not serve (its
`supported_endpoints`), search models (Chat Completions only) and entries that are not chat models.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

from . import model_info
from .config import ModelConfig
from .openai_wire import openai_headers
from .providers import provider_prefix
from .responses_request import responses_body

OPENAI_DEFAULT_BASE = "https://api.openai.com/v1"
_NAMES = re.compile(r"^(?:gpt-5|o[134])(?:$|[-.])")
# The headers the OpenAI SDK adds from these variables (litellm passes them on to it).
_HEADER_VARIABLES = (
    ("OpenAI-Organization", ("OPENAI_ORGANIZATION", "OPENAI_ORG_ID")),
    ("OpenAI-Project", ("OPENAI_PROJECT", "OPENAI_PROJECT_ID")),
)


class ResponsesRoute(NamedTuple):
    model: str  # the name OpenAI knows the model by
    url: str  # where the request is posted: `<api base>/responses`
    api_key: str | None  # None: no key found (the call fails with the agent's "no key" error, sending nothing)
    reasoning: bool  # whether the model reasons: it then gets the reasoning options and sends its reasoning back
    headers: Mapping[str, str] = MappingProxyType({})

    @property
    def wire(self) -> str:
        """As `Route.wire`: the early first call reads its stream by it."""
        return "responses"

    def request_headers(self) -> dict[str, str]:
        return {**openai_headers(self.api_key or ""), **self.headers}

    def body(
        self,
        config: ModelConfig,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        *,
        cache_key: str | None,
        summary: bool = True,
    ) -> dict[str, Any]:
        """The request for these messages (in the provider's form): the one rule for `ResponsesModel` and the early
        first call, whose bodies must be the same bytes for the call to be taken over."""
        return responses_body(
            self.model,
            messages,
            tools,
            reasoning=self.reasoning,
            effort=config.reasoning_effort,
            summary=summary,
            max_tokens=config.max_tokens,
            cache_key=cache_key,
        )


def _env(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(name)
    return value.strip() if value and value.strip() else None


def responses_name(model: str) -> str | None:
    """The model's name on OpenAI when the string names a GPT-5 or o-series model on OpenAI, else None."""
    prefix = provider_prefix(model)
    if prefix is not None and prefix != "openai":
        return None
    name = model.split("/", 1)[1] if prefix else model
    return name if _NAMES.match(name) and "search" not in name else None


def responses_route(config: ModelConfig, environ: Mapping[str, str]) -> ResponsesRoute | None:
    """The route of a GPT-5 or o-series model on OpenAI's Responses API; None for any other model, or one the map
    says this API does not serve (it then takes Chat Completions: `routes.route_for`)."""
    model, api_base = config.model, config.api_base
    name = responses_name(model)
    if name is None or (provider_prefix(model) is None and api_base):
        return None  # a bare name with an api_base: litellm may pick another provider by the address
    entry = model_info.info(model).entry or None  # the model's entry in litellm's map (~1 ms: its keys only)
    if entry is not None:
        endpoints = entry.get("supported_endpoints")
        if entry.get("mode") not in ("chat", "responses"):
            return None
        if isinstance(endpoints, list) and "/v1/responses" not in endpoints:
            return None
    base = api_base or _env(environ, "OPENAI_BASE_URL") or _env(environ, "OPENAI_API_BASE") or OPENAI_DEFAULT_BASE
    headers = {
        header: value
        for header, variables in _HEADER_VARIABLES
        if (value := next((v for name in variables if (v := _env(environ, name))), None)) is not None
    }
    return ResponsesRoute(
        model=name,
        url=base.rstrip("/") + "/responses",
        api_key=config.api_key or _env(environ, "OPENAI_API_KEY"),
        reasoning=entry is None or entry.get("supports_reasoning") is not False,
        headers=headers,
    )
