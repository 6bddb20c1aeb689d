"""Whether a model has a usable credential, decided without litellm (it is on a prompt's fast path).

A model's credential is usable when

- `CODER_AGENT_API_KEY` is set, or
- a base URL is given (`CODER_AGENT_API_BASE`, or the provider's own base variable such as `OPENAI_BASE_URL`):
  a local OpenAI-compatible server or a proxy may need no key, and only it can say (its 401 is shown as is).
  With `CODER_AGENT_API_BASE` and no key at all, the agent sends the placeholder key `no-key` (the OpenAI
  client refuses to send none), so a server that checks none just works; or
- the provider needs no key (Ollama, vLLM, LM Studio, llamafile: local servers), or
- one of the provider's key variables is set (`KEY_VARIABLES`), or
- the provider is not one whose key variables we know (Bedrock, Vertex, Azure, SageMaker ... use cloud
  credentials litellm finds its own way): litellm decides, and its error says what is missing.

So a prompt is refused as "auth required" (-32000) only when no model is configured, or when we know for sure
that the provider's key is missing. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping

from .providers import likely_provider

# provider -> the variables litellm takes its key from (the first is the one to suggest)
KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "openrouter": ("OPENROUTER_API_KEY", "OR_API_KEY"),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "cohere_chat": ("COHERE_API_KEY", "CO_API_KEY"),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_AI_TOKEN"),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY", "FIREWORKSAI_API_KEY", "FIREWORKS_AI_TOKEN"),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "cerebras": ("CEREBRAS_API_KEY",),
    "deepinfra": ("DEEPINFRA_API_KEY",),
    "moonshot": ("MOONSHOT_API_KEY",),
    "nebius": ("NEBIUS_API_KEY",),
}

# Local servers: litellm sends a placeholder key or none.
NO_KEY_PROVIDERS = frozenset({"ollama", "ollama_chat", "hosted_vllm", "lm_studio", "llamafile", "vllm"})

# A provider's own base URL variable: the server it names may take any key, or none.
BASE_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "anthropic": ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"),
}


def _set(environ: Mapping[str, str], name: str) -> bool:
    return bool(environ.get(name, "").strip())


def missing_key(model: str, api_base: str | None, api_key: str | None, environ: Mapping[str, str]) -> str | None:
    """The variable to set when `model` surely has no usable key; None when it has one (or we cannot tell)."""
    if api_key or api_base:
        return None
    provider = likely_provider(model)
    if provider is None or provider in NO_KEY_PROVIDERS:
        return None
    if any(_set(environ, name) for name in BASE_VARIABLES.get(provider, ())):
        return None
    variables = KEY_VARIABLES.get(provider)
    if variables is None or any(_set(environ, name) for name in variables):
        return None
    return variables[0]


NO_KEY_PLACEHOLDER = "no-key"


def request_key(model: str, api_base: str | None, api_key: str | None, environ: Mapping[str, str]) -> str | None:
    """The key to give the model call: the configured one, else the provider's own key variable as `environ` has it
    (the saved login's keys are there), else the placeholder for a server named by `api_base`; else None (litellm
    reads the provider's other variables itself)."""
    if api_key:
        return api_key
    provider = likely_provider(model)
    variables = KEY_VARIABLES.get(provider or "", ())
    if variables and _set(environ, variables[0]):
        return environ[variables[0]].strip()
    if api_base and missing_key(model, None, None, environ) is not None:
        return NO_KEY_PLACEHOLDER
    return None


def missing_key_message(model: str, variable: str) -> str:
    return (
        f"No key for {model}: run `coder-agent login` (or choose the login your editor offers), or set {variable} "
        "(or CODER_AGENT_API_KEY) in the env of the editor's agent configuration, then try again."
    )


NO_MODEL_MESSAGE = (
    "No model is configured. Run `coder-agent login` (or choose the login your editor offers) to pick a provider "
    "and a model, or set CODER_AGENT_MODEL to a litellm model string (for example anthropic/claude-sonnet-4-5, "
    "openai/gpt-4o or ollama/qwen2.5-coder) and give its key in CODER_AGENT_API_KEY or the provider's own variable "
    "(ANTHROPIC_API_KEY, OPENAI_API_KEY, ...). For an OpenAI-compatible server also set CODER_AGENT_API_BASE."
)
