"""The models a provider offers, where it can be asked: an OpenAI-compatible server's `GET {base}/models`, and
Ollama's `GET /api/tags`.

Only servers the user named are asked (`CODER_AGENT_API_BASE` or the provider's base variable; Ollama's default
address): OpenAI's own list is long and mostly not chat models, and the hosted providers' lists are not what the
user configured. Each name comes back as a litellm model string with the configured model's provider prefix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio

from . import http_client
from .wire.providers import provider_prefix

LIST_TIMEOUT = 5.0
MAX_MODELS = 500
OLLAMA_DEFAULT_BASE = "http://localhost:11434"
# provider -> the variables naming its server (besides CODER_AGENT_API_BASE)
OPENAI_COMPATIBLE: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "hosted_vllm": ("HOSTED_VLLM_API_BASE",),
    "lm_studio": ("LM_STUDIO_API_BASE",),
}
OLLAMA = ("ollama", "ollama_chat")


class ModelListError(Exception):
    """The list could not be read; the message says why (never the key)."""


def listing(model: str, api_base: str | None, environ: Mapping[str, str]) -> tuple[str, str, str] | None:
    """(url, wire, provider) to ask for `model`'s provider's models; None when there is no server to ask."""
    provider = provider_prefix(model)
    if provider in OPENAI_COMPATIBLE:
        base = api_base or next((environ[v] for v in OPENAI_COMPATIBLE[provider] if environ.get(v, "").strip()), None)
        return (base.rstrip("/") + "/models", "openai", provider) if base else None
    if provider in OLLAMA:
        base = api_base or environ.get("OLLAMA_API_BASE", "").strip() or OLLAMA_DEFAULT_BASE
        return base.rstrip("/") + "/api/tags", "ollama", provider
    return None


def _names(payload: Any, wire: str) -> list[str]:
    if wire == "ollama":
        entries = payload.get("models") if isinstance(payload, dict) else None
        key = "name"
    else:
        entries = payload.get("data") if isinstance(payload, dict) else None
        key = "id"
    if not isinstance(entries, list):
        raise ModelListError("the answer lists no models")
    names = [entry.get(key) for entry in entries if isinstance(entry, dict)]
    return [name for name in names if isinstance(name, str) and name.strip()][:MAX_MODELS]


async def list_models(
    model: str, api_base: str | None, api_key: str | None, environ: Mapping[str, str], timeout: float = LIST_TIMEOUT
) -> list[str]:
    """The models the provider of `model` offers, as litellm model strings; [] when there is no server to ask.

    Bounded by `timeout`; `ModelListError` when the server cannot be asked or answers something unusable.
    """
    target = listing(model, api_base, environ)
    if target is None:
        return []
    url, wire, provider = target
    headers = {"Authorization": f"Bearer {api_key}"} if api_key and wire == "openai" else {}
    try:
        with anyio.fail_after(timeout):
            await anyio.to_thread.run_sync(http_client.prepare, abandon_on_cancel=True)  # a cancel need not wait
            response = await http_client.client().get(url, headers=headers, timeout=timeout)
    except TimeoutError:
        raise ModelListError(f"{url} did not answer within {timeout:g} s") from None
    except Exception as exc:  # httpx's errors: a refused connection, a bad URL, TLS ...
        raise ModelListError(f"{url}: {type(exc).__name__}: {exc}") from None
    if response.status_code != 200:
        raise ModelListError(f"{url} answered HTTP {response.status_code}")
    try:
        payload = response.json()
    except ValueError:
        raise ModelListError(f"{url} did not answer JSON") from None
    return [f"{provider}/{name}" for name in _names(payload, wire)]
