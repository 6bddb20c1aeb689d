"""Which variables are the agent's credentials, and what a child process gets instead."""

from __future__ import annotations

from coder_agent.kit.credentials import (
    PROVIDER_KEY_VARIABLES,
    child_environment,
    is_agent_variable,
    without_credentials,
)

# The provider key variables litellm reads that must never reach a child (from the task that introduced the rule).
MUST_COVER = [
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "AZURE_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "TOGETHERAI_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "FIREWORKS_AI_API_KEY",
    "COHERE_API_KEY",
    "CO_API_KEY",
    "XAI_API_KEY",
    "PERPLEXITYAI_API_KEY",
    "HUGGINGFACE_API_KEY",
    "REPLICATE_API_KEY",
    "DEEPINFRA_API_KEY",
    "CEREBRAS_API_KEY",
    "AWS_BEARER_TOKEN_BEDROCK",
    "VERTEXAI_CREDENTIALS",
    "VERTEX_CREDENTIALS",
]


def test_every_setting_and_provider_key_is_the_agents_and_the_users_general_variables_are_not() -> None:
    assert set(MUST_COVER) <= PROVIDER_KEY_VARIABLES
    assert is_agent_variable("CODER_AGENT_MODEL") and is_agent_variable("CODER_AGENT_ANYTHING_NEW")
    for users in ("GITHUB_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "GOOGLE_APPLICATION_CREDENTIALS"):
        assert not is_agent_variable(users)


def test_a_child_gets_no_credential_nor_a_copy_of_a_key_under_another_name() -> None:
    agent = {
        "PATH": "/usr/bin",
        "CODER_AGENT_API_KEY": "sk-agent-0123456789",
        "CODER_AGENT_MODEL": "openai/gpt-4o",
        "GEMINI_API_KEY": "gem-0123456789",
        "KEY_FOR_MY_SCRIPT": "sk-agent-0123456789",
        "ALSO_GEMINI": "gem-0123456789",
        "GITHUB_TOKEN": "ghp_0123456789",
    }
    assert child_environment(agent) == {"PATH": "/usr/bin", "GITHUB_TOKEN": "ghp_0123456789"}


def test_a_short_non_secret_value_does_not_strip_unrelated_variables() -> None:
    agent = {"CODER_AGENT_API_KEY": "none", "OLLAMA_API_KEY": "ollama", "MODE": "none", "USER": "ollama"}
    assert child_environment(agent) == {"MODE": "none", "USER": "ollama"}


def test_a_given_environment_is_filtered_by_the_keys_the_agent_holds() -> None:
    env = {"HOME": "/home/u", "TOKEN": "sk-held-0123456789", "OPENAI_API_KEY": "sk-other-0123456789"}
    held = {"ANTHROPIC_API_KEY": "sk-held-0123456789"}
    assert without_credentials(env, held) == {"HOME": "/home/u"}
