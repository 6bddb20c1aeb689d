"""How each provider that offers OpenAI Chat Completions differs from OpenAI's own API. Stdlib only.

One table instead of a class per provider: where its server is and where its key comes from (the variables litellm
reads, so a user's setup works the same on either path), and the few rules a provider has of its own. Sources: each
provider's API reference, and litellm's transformation for it (the contract suite compares the requests).
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

OPENAI_DEFAULT_BASE = "https://api.openai.com/v1"


class Dialect(NamedTuple):
    base_variables: tuple[str, ...]  # the variables naming its server (CODER_AGENT_API_BASE comes first)
    default_base: str | None  # None: a local server the user must name
    key_variables: tuple[str, ...]  # where its key is read from (CODER_AGENT_API_KEY comes first)
    default_key: str | None = None  # what is sent without a key (local servers check none)
    path: str = "/chat/completions"
    # How a reasoning effort is asked for: OpenAI's `reasoning_effort`, OpenRouter's `reasoning: {effort}`, or not
    # at all (the server has no such setting).
    effort: Literal["reasoning_effort", "reasoning", "none"] = "reasoning_effort"
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    stream_usage: bool = True  # takes `stream_options: {"include_usage": true}` (else sends usage unasked)
    # The model's own reasoning sent back on assistant messages: DeepSeek and Kimi require it after a tool call in
    # thinking mode; Groq and Cerebras refuse it ("property 'reasoning_content' is unsupported").
    reasoning_back: bool = True
    reasoning_details_back: bool = False  # OpenRouter: `reasoning_details` go back verbatim (signed thinking)
    cache_key: bool = False  # takes `prompt_cache_key` (OpenAI: requests with the same key share a cache)
    cache_header: str | None = None  # a header that routes a conversation's requests to the same cache (xAI)
    model_prefix: str = ""  # prepended to a model name that lacks it (Fireworks' `accounts/fireworks/models/`)
    text_only: bool = False  # user content as one string (DeepSeek takes no content parts; its models see no images)
    extra: tuple[tuple[str, Any], ...] = ()  # added to every request
    breakpoints_for: str = ""  # models (by name prefix) whose prompt caching is Anthropic's breakpoints, passed on

    def model_name(self, name: str) -> str:
        if self.model_prefix and not name.startswith(self.model_prefix.split("/", 1)[0] + "/"):
            return self.model_prefix + name
        return name

    @staticmethod
    def reasoning_model(name: str) -> bool:
        """An OpenAI reasoning model (o-series, GPT-5 and later): `max_completion_tokens`, not `max_tokens`."""
        return (len(name) > 1 and name[0] == "o" and name[1].isdigit()) or name.startswith(("gpt-5", "gpt-6"))

    def for_reasoning_models(self) -> Dialect:
        return self._replace(max_tokens_field="max_completion_tokens")

    def elsewhere(self) -> Dialect:
        """OpenAI's dialect for a server of the user's (a proxy, vLLM, llama.cpp ...): only what every server takes."""
        return self._replace(cache_key=False, max_tokens_field="max_tokens")


DIALECTS: dict[str, Dialect] = {
    "openai": Dialect(("OPENAI_BASE_URL", "OPENAI_API_BASE"), OPENAI_DEFAULT_BASE, ("OPENAI_API_KEY",), cache_key=True),
    "openrouter": Dialect(
        ("OPENROUTER_API_BASE",),
        "https://openrouter.ai/api/v1",
        ("OPENROUTER_API_KEY", "OR_API_KEY"),
        effort="reasoning",
        reasoning_back=False,
        reasoning_details_back=True,
        extra=(("usage", {"include": True}),),  # its usage accounting, as litellm asks for it
        breakpoints_for="anthropic/",  # Claude caches only where asked, and OpenRouter passes `cache_control` on
    ),
    "groq": Dialect(("GROQ_API_BASE",), "https://api.groq.com/openai/v1", ("GROQ_API_KEY",), reasoning_back=False),
    "deepseek": Dialect(("DEEPSEEK_API_BASE",), "https://api.deepseek.com", ("DEEPSEEK_API_KEY",), text_only=True),
    "xai": Dialect(("XAI_API_BASE",), "https://api.x.ai/v1", ("XAI_API_KEY",), cache_header="x-grok-conv-id"),
    "mistral": Dialect(
        ("MISTRAL_API_BASE",),
        "https://api.mistral.ai/v1",
        ("MISTRAL_API_KEY",),
        stream_usage=False,  # not in Mistral's API (litellm leaves it out too): its stream ends with the usage
        reasoning_back=False,
    ),
    "together_ai": Dialect(
        ("TOGETHER_AI_API_BASE", "TOGETHERAI_API_BASE"),
        "https://api.together.ai/v1",
        ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_AI_TOKEN"),
    ),
    "fireworks_ai": Dialect(
        ("FIREWORKS_API_BASE", "FIREWORKS_AI_API_BASE"),
        "https://api.fireworks.ai/inference/v1",
        ("FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY", "FIREWORKSAI_API_KEY", "FIREWORKS_AI_TOKEN"),
        model_prefix="accounts/fireworks/models/",
    ),
    "cerebras": Dialect(
        ("CEREBRAS_API_BASE",),
        "https://api.cerebras.ai/v1",
        ("CEREBRAS_API_KEY",),
        stream_usage=False,
        reasoning_back=False,
    ),
    "deepinfra": Dialect(("DEEPINFRA_API_BASE",), "https://api.deepinfra.com/v1/openai", ("DEEPINFRA_API_KEY",)),
    "moonshot": Dialect(("MOONSHOT_API_BASE",), "https://api.moonshot.ai/v1", ("MOONSHOT_API_KEY",)),
    "nebius": Dialect(("NEBIUS_API_BASE",), "https://api.studio.nebius.ai/v1", ("NEBIUS_API_KEY",)),
    # Gemini's OpenAI-compatible endpoint: one wire for every provider above, and Gemini 3's thought signatures
    # ride on the tool calls (`extra_content`), which the history keeps and sends back.
    "gemini": Dialect(
        ("GEMINI_API_BASE",),
        "https://generativelanguage.googleapis.com/v1beta/openai",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        reasoning_back=False,
    ),
    # Ollama's OpenAI-compatible `/v1` (litellm speaks its native /api/chat).
    "ollama": Dialect(
        ("OLLAMA_API_BASE",), "http://localhost:11434", ("OLLAMA_API_KEY",), "ollama", path="/v1/chat/completions"
    ),
    "ollama_chat": Dialect(
        ("OLLAMA_API_BASE",), "http://localhost:11434", ("OLLAMA_API_KEY",), "ollama", path="/v1/chat/completions"
    ),
    "hosted_vllm": Dialect(("HOSTED_VLLM_API_BASE",), None, ("HOSTED_VLLM_API_KEY",), "fake-api-key"),
    "lm_studio": Dialect(("LM_STUDIO_API_BASE",), None, ("LM_STUDIO_API_KEY",), "fake-api-key", effort="none"),
}
