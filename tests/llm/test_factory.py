"""Which model a session talks to: the agent's own adapter for the wires it speaks, for the whole session; litellm
for the long tail, imported only then."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from contextlib import aclosing

import anyio
import pytest

from coder_agent.llm.base import ReasoningDelta, TextDelta
from coder_agent.llm.direct_model import DirectModel
from coder_agent.llm.factory import make_model, needs_litellm
from coder_agent.llm.litellm_model import LiteLLMModel
from coder_agent.llm.wire.config import ModelConfig
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.contract import ANTHROPIC, HELLO, config_for

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "model",
    [
        "openai/gpt-4o",
        "openai/gpt-5-search-api",  # GPT-5 on Chat Completions (the others: the Responses API, test_responses_route)
        "anthropic/claude-sonnet-4-5",
        "openrouter/anthropic/claude-sonnet-4.5",
        "deepseek/deepseek-chat",
        "groq/llama-3.3-70b-versatile",
        "gemini/gemini-2.5-pro",
        "ollama/qwen2.5-coder",
        "xai/grok-4",
        "mistral/mistral-large-latest",
    ],
)
def test_the_wires_the_agent_speaks_get_its_own_adapter(model: str) -> None:
    config = ModelConfig(model=model, api_key="k")
    assert isinstance(make_model(config, environ={}), DirectModel)
    assert not needs_litellm(model, None, {})


@pytest.mark.parametrize("model", ["bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", "vertex_ai/gemini-2.5-pro"])
def test_the_long_tail_goes_through_litellm(model: str) -> None:
    assert isinstance(make_model(ModelConfig(model=model), environ={}), LiteLLMModel)
    assert needs_litellm(model, None, {})


async def test_anthropic_thinking_is_the_adapters_own(srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.thinking_then_text(["Hm."], ["thought"]))
    model = make_model(config_for(ANTHROPIC, srv, reasoning_effort="low"), environ={})
    with anyio.fail_after(30):
        async with aclosing(model.stream(HELLO)) as events:
            seen = [(type(e).__name__, e.text) async for e in events if isinstance(e, TextDelta | ReasoningDelta)]
    assert seen == [("ReasoningDelta", "Hm."), ("TextDelta", "thought")]
    assert srv.requests[0].headers["user-agent"].startswith("python-httpx/")
    assert srv.requests[0].body["thinking"] == {"type": "enabled", "budget_tokens": 1024}


@pytest.mark.e2e
def test_a_whole_session_on_the_agents_wires_never_imports_litellm() -> None:
    script = textwrap.dedent(
        """
        import sys, anyio
        from coder_agent.llm.factory import make_model
        from coder_agent.llm.wire.config import ModelConfig
        from coder_agent.llm.messages import TextPart, UserMessage
        from coder_agent.scripted.script import Reply, Script
        from coder_agent.scripted.server import ScriptedModelServer

        MODELS = ["openai/gpt-4o", "anthropic/claude-sonnet-4-5", "openrouter/openai/gpt-4o", "deepseek/deepseek-chat",
                  "ollama/qwen2.5-coder", "gemini/gemini-2.5-pro", "groq/llama-3.3-70b-versatile"]

        async def main():
            with ScriptedModelServer(Script(default=Reply.text("ok"))) as srv:
                for name in MODELS:
                    base = srv.anthropic_url if name.startswith("anthropic/") else srv.url
                    effort = "high" if name.startswith("anthropic/") else None
                    for _ in range(3):
                        model = make_model(ModelConfig(name, api_base=base, api_key="sk", reasoning_effort=effort))
                        async for event in model.stream([UserMessage(parts=[TextPart(text="hi")])]):
                            pass
            print(len(srv.requests), "litellm" in sys.modules)
            # httpx's command-line client (rich, click, pygments: ~100 ms) is not what the first call waits on
            print(sorted(name for name in ("rich", "click", "pygments") if name in sys.modules))

        anyio.run(main)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.split("\n")[:2] == ["21 False", "[]"]


@pytest.mark.e2e
def test_after_loading_litellms_first_call_imports_nothing_and_nothing_reaches_stdout() -> None:
    script = textwrap.dedent(
        """
        import sys, anyio
        from coder_agent.llm import loader
        from coder_agent.llm.wire.config import ModelConfig
        from coder_agent.llm.litellm_model import LiteLLMModel
        from coder_agent.llm.messages import TextPart, UserMessage
        from coder_agent.scripted.script import Reply, Script
        from coder_agent.scripted.server import ScriptedModelServer

        TOOLS = [{"type": "function", "function": {"name": "grep", "parameters": {"type": "object"}}}]

        async def main():
            await loader.load_litellm()
            with ScriptedModelServer(Script(default=Reply.text("a", "b"))) as srv:
                for name, base in (("openai/x", srv.url), ("anthropic/claude-sonnet-4-5", srv.anthropic_url)):
                    before = set(sys.modules)
                    model = LiteLLMModel(ModelConfig(name, api_base=base, api_key="sk"))
                    async for _ in model.stream([UserMessage(parts=[TextPart(text="hi")])], TOOLS):
                        pass
                    print(name, sorted(set(sys.modules) - before))

        anyio.run(main)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.splitlines() == ["openai/x []", "anthropic/claude-sonnet-4-5 []"]
