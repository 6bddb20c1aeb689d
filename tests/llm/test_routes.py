"""Which wire a model is spoken on, where its calls go, with what key: from the model string, the settings and the
environment alone."""

from __future__ import annotations

from types import ModuleType

import pytest

from coder_agent.llm.wire.config import ModelConfig
from coder_agent.llm.wire.routes import Route, route_body, route_for, route_headers

BASE = "http://127.0.0.1:8000/v1"
KEYS = {"OPENAI_API_KEY": "sk", "ANTHROPIC_API_KEY": "sk-ant"}


def route(model: str, env: dict[str, str] | None = None, **config: object) -> Route | None:
    return route_for(ModelConfig(model=model, **config), {**KEYS, **(env or {})})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("model", "api_base", "wire", "url"),
    [
        ("openai/qwen-coder", BASE, "openai", f"{BASE}/chat/completions"),
        ("openai/gpt-4o", None, "openai", "https://api.openai.com/v1/chat/completions"),
        ("gpt-4o", None, "openai", "https://api.openai.com/v1/chat/completions"),
        ("openai/gpt-5-mini", None, "openai", "https://api.openai.com/v1/chat/completions"),
        ("openai/o3-mini", None, "openai", "https://api.openai.com/v1/chat/completions"),
        ("anthropic/claude-sonnet-4-5", None, "anthropic", "https://api.anthropic.com/v1/messages"),
        ("claude-sonnet-4-5", None, "anthropic", "https://api.anthropic.com/v1/messages"),
        ("anthropic/claude-sonnet-4-5", "http://proxy:1/v1/messages", "anthropic", "http://proxy:1/v1/messages"),
        ("openrouter/anthropic/claude-sonnet-4.5", None, "openai", "https://openrouter.ai/api/v1/chat/completions"),
        ("groq/llama-3.3-70b-versatile", None, "openai", "https://api.groq.com/openai/v1/chat/completions"),
        ("deepseek/deepseek-chat", None, "openai", "https://api.deepseek.com/chat/completions"),
        ("xai/grok-4", None, "openai", "https://api.x.ai/v1/chat/completions"),
        ("mistral/mistral-large-latest", None, "openai", "https://api.mistral.ai/v1/chat/completions"),
        ("together_ai/Qwen/Qwen3-Coder", None, "openai", "https://api.together.ai/v1/chat/completions"),
        ("fireworks_ai/kimi-k2", None, "openai", "https://api.fireworks.ai/inference/v1/chat/completions"),
        ("cerebras/qwen-3-coder-480b", None, "openai", "https://api.cerebras.ai/v1/chat/completions"),
        (
            "gemini/gemini-2.5-pro",
            None,
            "openai",
            "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions",
        ),
        ("ollama/qwen2.5-coder", None, "openai", "http://localhost:11434/v1/chat/completions"),
        ("ollama_chat/qwen2.5-coder", "http://gpu:11434/v1", "openai", "http://gpu:11434/v1/chat/completions"),
        ("hosted_vllm/qwen", BASE, "openai", f"{BASE}/chat/completions"),
        ("lm_studio/qwen", BASE, "openai", f"{BASE}/chat/completions"),
    ],
)
def test_these_are_spoken_by_the_agent(model: str, api_base: str | None, wire: str, url: str) -> None:
    found = route(model, api_base=api_base)
    assert found is not None and (found.wire, found.url) == (wire, url)


@pytest.mark.parametrize(
    ("model", "api_base"),
    [
        ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", None),
        ("vertex_ai/gemini-2.5-pro", None),
        ("azure/gpt-4o", None),
        ("cohere/command-r-plus", None),
        ("anthropic/claude-2.1", None),  # the legacy text-completion API
        ("hosted_vllm/qwen", None),  # no api_base: litellm fails its own way
        ("gpt-oss-foo", BASE),  # no provider litellm knows: it says so
    ],
)
def test_the_long_tail_is_litellms(model: str, api_base: str | None) -> None:
    assert route(model, api_base=api_base) is None


def test_keys_come_from_the_setting_then_the_providers_variables() -> None:
    assert route("openai/q", api_base=BASE, api_key="mine").api_key == "mine"  # type: ignore[union-attr]
    assert route("openai/q", api_base=BASE).api_key == "sk"  # type: ignore[union-attr]
    assert route("lm_studio/q", api_base=BASE).api_key == "fake-api-key"  # type: ignore[union-attr]
    assert route("openrouter/x/y", {"OR_API_KEY": "or"}).api_key == "or"  # type: ignore[union-attr]
    assert route("gemini/gemini-2.5-pro", {"GOOGLE_API_KEY": "g"}).api_key == "g"  # type: ignore[union-attr]
    anthropic = route("anthropic/claude-sonnet-4-5", {"ANTHROPIC_API_KEY": " "})
    assert anthropic is not None and anthropic.api_key is None  # blank is unset: the call says no key was found


def test_an_anthropic_bearer_token_is_sent_as_one() -> None:
    found = route_for(ModelConfig(model="anthropic/claude-sonnet-4-5"), {"ANTHROPIC_AUTH_TOKEN": "tok"})
    assert found is not None
    headers = route_headers(found)
    assert headers["authorization"] == "Bearer tok" and "x-api-key" not in headers


def body(
    model: str, api_base: str | None = None, cache_key: str | None = "sess_1", **config: object
) -> dict[str, object]:
    settings = ModelConfig(model=model, api_base=api_base, **config)  # type: ignore[arg-type]
    found = route_for(settings, KEYS)
    assert found is not None
    return route_body(found, settings, [{"role": "user", "content": "hi"}], [], cache_key)


def test_openai_reasoning_models_take_max_completion_tokens() -> None:
    assert body("openai/gpt-5-mini", max_tokens=100)["max_completion_tokens"] == 100
    assert body("openai/o3", max_tokens=100)["max_completion_tokens"] == 100
    assert body("openai/gpt-4o", max_tokens=100)["max_tokens"] == 100
    assert body("openai/gpt-5-mini", BASE, max_tokens=100)["max_tokens"] == 100  # a server of the user's


def test_the_session_keys_openais_prompt_cache_and_xais() -> None:
    assert body("openai/gpt-4o")["prompt_cache_key"] == "sess_1"
    assert "prompt_cache_key" not in body("openai/qwen", BASE)  # a server of the user's may refuse it
    assert "prompt_cache_key" not in body("deepseek/deepseek-chat")  # caches by prefix alone
    xai = route("xai/grok-4")
    assert xai is not None and route_headers(xai, "sess_1")["x-grok-conv-id"] == "sess_1"


def test_claude_through_openrouter_gets_anthropics_cache_breakpoints() -> None:
    claude = body("openrouter/anthropic/claude-sonnet-4.5")
    assert claude["messages"][-1]["content"] == [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]
    assert body("openrouter/openai/gpt-4o")["messages"][-1]["content"] == "hi"  # OpenAI caches by itself


def test_a_reasoning_effort_goes_where_the_model_reasons() -> None:
    assert "reasoning_effort" not in body("openai/gpt-4o", reasoning_effort="low")  # the map: no reasoning
    assert body("openai/qwen", BASE, reasoning_effort="low")["reasoning_effort"] == "low"  # unknown: it decides
    assert body("openrouter/openai/o3", reasoning_effort="high")["reasoning"] == {"effort": "high"}
    assert "reasoning_effort" not in body("lm_studio/qwen", BASE, reasoning_effort="low")


def test_fireworks_models_get_their_account_prefix() -> None:
    assert body("fireworks_ai/kimi-k2")["model"] == "accounts/fireworks/models/kimi-k2"
    assert body("fireworks_ai/accounts/me/models/x")["model"] == "accounts/me/models/x"


# Where the default server differs from litellm's on purpose: Ollama's OpenAI-compatible `/v1` (litellm speaks its
# native `/api/chat`), Gemini's OpenAI-compatible endpoint (litellm speaks its native API), DeepSeek's stable API
# (litellm's `/beta` adds prefix completion, which the agent does not use).
OURS = {"ollama", "gemini", "deepseek"}


@pytest.mark.parametrize(
    "model",
    [
        "openai/gpt-4o",
        "openrouter/x/y",
        "groq/llama-3.3-70b-versatile",
        "xai/grok-4",
        "mistral/mistral-large-latest",
        "fireworks_ai/accounts/fireworks/models/x",
        "cerebras/qwen-3-coder-480b",
        "deepinfra/x/y",
        "moonshot/kimi-k2",
        "nebius/x",
        "together_ai/x/y",
    ],
)
def test_the_default_servers_are_litellms(litellm: ModuleType, model: str) -> None:
    found = route(model)
    assert found is not None and found.provider not in OURS
    _, provider, _, base = litellm.get_llm_provider(model)
    assert provider == found.provider
    if base is None:  # litellm reads some providers' default base later, in their own handler
        pytest.skip(f"litellm names no default base for {provider} here")
    assert found.url == base.rstrip("/") + "/chat/completions"
