"""The agent's credentials, in one place, and the environment its child processes get without them.

A variable is the agent's when it is

- any `CODER_AGENT_*` setting (the model's address and key among them),
- one of the provider key variables litellm reads for a model provider (`PROVIDER_KEY_VARIABLES`), or
- any other variable whose value is a key the agent holds (the value of `CODER_AGENT_API_KEY` or of a
  provider key variable): a key copied under a name of the user's choosing.

Commands the model runs and MCP stdio servers get none of them. Everything else of the user's passes
unchanged: `GITHUB_TOKEN`, `AWS_*` and `GOOGLE_APPLICATION_CREDENTIALS` serve the user's own tools too, so
they are not ours to take away. Standard library only: `settings` and `acp` startup import this.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

PREFIX = "CODER_AGENT_"
API_KEY_VARIABLE = PREFIX + "API_KEY"

# The key variables litellm 1.106 reads for model providers (its `get_llm_provider`, `main.completion` and
# `validate_environment`, plus the Bedrock and Vertex credentials). Not the general cloud variables.
PROVIDER_KEY_VARIABLES = frozenset(
    {
        "AI21_API_KEY",
        "ALEPHALPHA_API_KEY",
        "ALEPH_ALPHA_API_KEY",
        "AMAZON_NOVA_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_AWS_API_KEY",
        "ANYSCALE_API_KEY",
        "ARK_API_KEY",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AZURE_AD_TOKEN",
        "AZURE_AI_API_KEY",
        "AZURE_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "BASETEN_API_KEY",
        "BEDROCK_MANTLE_API_KEY",
        "BYTEZ_API_KEY",
        "CEREBRAS_API_KEY",
        "CHUTES_API_KEY",
        "CLOUDFLARE_API_KEY",
        "CODESTRAL_API_KEY",
        "COHERE_API_KEY",
        "COMETAPI_KEY",
        "CO_API_KEY",
        "DASHSCOPE_API_KEY",
        "DATABRICKS_API_KEY",
        "DATAROBOT_API_TOKEN",
        "DEEPINFRA_API_KEY",
        "DEEPSEEK_API_KEY",
        "EDENAI_API_KEY",
        "FEATHERLESS_AI_API_KEY",
        "FIREWORKSAI_API_KEY",
        "FIREWORKS_AI_API_KEY",
        "FIREWORKS_AI_TOKEN",
        "FIREWORKS_API_KEY",
        "FRIENDLIAI_API_KEY",
        "FRIENDLI_TOKEN",
        "GALADRIEL_API_KEY",
        "GEMINI_API_KEY",
        "GIGACHAT_API_KEY",
        "GIGACHAT_CREDENTIALS",
        "GITHUB_API_KEY",
        "GOOGLE_API_KEY",
        "GROQ_API_KEY",
        "HOSTED_VLLM_API_KEY",
        "HUGGINGFACE_API_KEY",
        "HYPERBOLIC_API_KEY",
        "INCEPTION_API_KEY",
        "INFINITY_API_KEY",
        "LAMBDA_API_KEY",
        "LITELLM_PROXY_API_KEY",
        "LLAMA_API_KEY",
        "LM_STUDIO_API_KEY",
        "MARITALK_API_KEY",
        "META_API_KEY",
        "MINIMAX_API_KEY",
        "MISTRAL_API_KEY",
        "MOONSHOT_API_KEY",
        "NEBIUS_API_KEY",
        "NLP_CLOUD_API_KEY",
        "NOVITA_API_KEY",
        "NVIDIA_NIM_API_KEY",
        "OLLAMA_API_KEY",
        "OPENAI_API_KEY",
        "OPENAI_LIKE_API_KEY",
        "OPENROUTER_API_KEY",
        "OR_API_KEY",
        "OVHCLOUD_API_KEY",
        "PALM_API_KEY",
        "PERPLEXITYAI_API_KEY",
        "PERPLEXITY_API_KEY",
        "PREDIBASE_API_KEY",
        "REPLICATE_API_KEY",
        "REPLICATE_API_TOKEN",
        "SAMBANOVA_API_KEY",
        "TOGETHERAI_API_KEY",
        "TOGETHER_AI_API_KEY",
        "TOGETHER_AI_TOKEN",
        "TOGETHER_API_KEY",
        "VERCEL_AI_GATEWAY_API_KEY",
        "VERTEXAI_CREDENTIALS",
        "VERTEX_CREDENTIALS",
        "VOLCENGINE_API_KEY",
        "VOYAGE_API_KEY",
        "WANDB_API_KEY",
        "WATSONX_APIKEY",
        "WATSONX_API_KEY",
        "WATSONX_TOKEN",
        "WATSONX_ZENAPIKEY",
        "WX_API_KEY",
        "XAI_API_KEY",
        "XINFERENCE_API_KEY",
    }
)

# A shorter value ("none", "ollama", "1") is no secret, and matching it would strip unrelated variables.
MIN_KEY_LENGTH = 8


def is_agent_variable(name: str) -> bool:
    """Whether `name` is one of the agent's own variables (a setting or a provider key), whatever its value."""
    return name.startswith(PREFIX) or name in PROVIDER_KEY_VARIABLES


def held_keys(environ: Mapping[str, str]) -> frozenset[str]:
    """The keys the agent holds in `environ`: its API key and every provider key set there."""
    return frozenset(
        value
        for name, value in environ.items()
        if (name == API_KEY_VARIABLE or name in PROVIDER_KEY_VARIABLES) and len(value.strip()) >= MIN_KEY_LENGTH
    )


def without_credentials(env: Mapping[str, str], agent_environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` without the agent's credentials; `agent_environ` (default: ours) tells which keys the agent holds."""
    keys = held_keys(os.environ if agent_environ is None else agent_environ)
    return {name: value for name, value in env.items() if not is_agent_variable(name) and value not in keys}


def child_environment(agent_environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a child process gets: the agent's own (default `os.environ`) without its credentials."""
    source = os.environ if agent_environ is None else agent_environ
    return without_credentials(source, source)
