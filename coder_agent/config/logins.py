"""A login: the providers one can choose, and saving the choice, whoever asked (`coder-agent login` in a terminal,
or an editor's form, `server/login_form.py`).

What is saved, in the user's config folder only: the key (`credentials.toml`, 600, or the OS keyring) under the
provider's key variable (`CODER_AGENT_API_KEY` for a local server), and the model (and a local server's
address) in `config.toml`. Logging in to a hosted provider takes out a local server's address and key saved
before, so the new provider's traffic and key never go to the old server.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .keystore import KeyStore, Where
from .userfiles import CONFIG_FILE, set_top_level, write_private

LOCAL_KEY = "CODER_AGENT_API_KEY"


@dataclass(frozen=True)
class Provider:
    id: str
    name: str
    key_variable: str | None  # None: a local server (its key, if any, is CODER_AGENT_API_KEY)
    default_model: str
    prefix: str  # the litellm provider prefix of its models
    default_base: str | None = None  # local servers: where they usually listen

    @property
    def local(self) -> bool:
        return self.key_variable is None


PROVIDERS = [
    Provider("anthropic", "Anthropic", "ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5", "anthropic"),
    Provider("openai", "OpenAI", "OPENAI_API_KEY", "openai/gpt-4.1", "openai"),
    Provider("openrouter", "OpenRouter", "OPENROUTER_API_KEY", "openrouter/anthropic/claude-sonnet-4.5", "openrouter"),
    Provider("gemini", "Google Gemini", "GEMINI_API_KEY", "gemini/gemini-2.5-pro", "gemini"),
    Provider("mistral", "Mistral", "MISTRAL_API_KEY", "mistral/devstral-medium-latest", "mistral"),
    Provider("deepseek", "DeepSeek", "DEEPSEEK_API_KEY", "deepseek/deepseek-chat", "deepseek"),
    Provider("groq", "Groq", "GROQ_API_KEY", "groq/moonshotai/kimi-k2-instruct", "groq"),
    Provider("xai", "xAI", "XAI_API_KEY", "xai/grok-4", "xai"),
    Provider(
        "local",
        "A local OpenAI-compatible server (llama.cpp, vLLM, LM Studio, ...)",
        None,
        "",
        "openai",
        "http://localhost:8080/v1",
    ),
    Provider("ollama", "Ollama", None, "", "ollama_chat", "http://localhost:11434"),
]


@dataclass
class Choice:
    model: str
    key_variable: str | None = None
    key: str | None = None
    api_base: str | None = None


def provider(provider_id: str) -> Provider | None:
    return next((p for p in PROVIDERS if p.id == provider_id), None)


def full_model(provider: Provider, model: str | None) -> str:
    """The litellm model string: the provider's default, or `model` with the provider's prefix if it has none."""
    model = (model or "").strip() or provider.default_model
    if provider.local:
        return model if model.startswith(f"{provider.prefix}/") else f"{provider.prefix}/{model}"
    return model if "/" in model else f"{provider.prefix}/{model}"


def save_login(config_dir: Path, choice: Choice, where: Where = "auto") -> str:
    """Keep the choice in the user's config folder; where the key went (or a note that there is none)."""
    store = KeyStore(config_dir)
    place = "no key (the server checks none)"
    if choice.key_variable is not None and choice.key is not None:
        place = store.save(choice.key_variable, choice.key, where)
    if choice.key_variable != LOCAL_KEY:
        store.remove([LOCAL_KEY])  # a local server's key must not go to another provider
    path = config_dir / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = "# coder-agent settings (see `coder-agent config`). `coder-agent login` sets model and api_base.\n"
    values: dict[str, object] = {"model": choice.model}
    if choice.api_base:
        values["api_base"] = choice.api_base
    write_private(path, set_top_level(text, values, remove=() if choice.api_base else ("api_base",)))
    return place
