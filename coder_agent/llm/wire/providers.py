"""What we know about a provider from the model string alone (standard library only: no litellm)."""

from __future__ import annotations

# The variable each provider reads its key from, as litellm reads it (CODER_AGENT_API_KEY comes first).
KEY_VARIABLES = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "groq": "GROQ_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "xai": "XAI_API_KEY",
    "cohere": "COHERE_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "fireworks_ai": "FIREWORKS_AI_API_KEY",
    "perplexity": "PERPLEXITYAI_API_KEY",
    "cerebras": "CEREBRAS_API_KEY",
    "hosted_vllm": "HOSTED_VLLM_API_KEY",
    "lm_studio": "LM_STUDIO_API_KEY",
    "ollama": "OLLAMA_API_KEY",
    "ollama_chat": "OLLAMA_API_KEY",
}

# Bare model names litellm sends to a provider without a prefix (it looks them up in its model list).
_BARE_PREFIXES = (
    ("gpt-", "openai"),
    ("chatgpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude-", "anthropic"),
)


def provider_prefix(model: str) -> str | None:
    """The `provider/` part of a litellm model string, or None for a bare name."""
    prefix, slash, _ = model.partition("/")
    return prefix if slash else None


def likely_provider(model: str) -> str | None:
    """The provider a model string points at, as far as its name tells (for messages, not for routing)."""
    prefix = provider_prefix(model)
    if prefix is not None:
        return prefix
    for start, provider in _BARE_PREFIXES:
        if model.startswith(start):
            return provider
    return None


def key_variable(model: str) -> str | None:
    provider = likely_provider(model)
    return KEY_VARIABLES.get(provider) if provider else None
