"""Which path a call takes: direct while litellm loads, litellm once it is ready, litellm when unsure."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from contextlib import aclosing
from pathlib import Path

import anyio
import pytest

from coder_agent.llm.base import TextDelta
from coder_agent.llm.fast_start import FastStartModel
from coder_agent.scripted.script import Reply
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.contract import ANTHROPIC, HELLO, OPENAI, Wire, config_for

pytestmark = pytest.mark.anyio


async def texts(model: FastStartModel) -> list[str]:
    with anyio.fail_after(30):
        async with aclosing(model.stream(HELLO)) as events:
            return [event.text async for event in events if isinstance(event, TextDelta)]


def agents(srv: ScriptedModelServer) -> list[str]:
    return [request.headers.get("user-agent", "") for request in srv.requests]


@pytest.mark.parametrize("wire", [OPENAI, ANTHROPIC], ids=lambda w: w.name)
async def test_before_litellm_is_ready_the_call_goes_direct(srv: ScriptedModelServer, wire: Wire) -> None:
    srv.enqueue(Reply.text("fast"))
    model = FastStartModel(config_for(wire, srv), litellm_ready=lambda: False)
    assert await texts(model) == ["fast"]
    assert agents(srv)[0].startswith("python-httpx/")


async def test_once_litellm_is_ready_every_call_goes_through_it(srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.text("slow"))
    model = FastStartModel(config_for(OPENAI, srv), litellm_ready=lambda: True)
    assert await texts(model) == ["slow"]
    assert agents(srv)[0].startswith("AsyncOpenAI/")


async def test_a_call_that_started_direct_retries_direct(srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.error(503, "busy"), Reply.text("ok"))
    answers = iter([False])  # litellm becomes ready right after this call picked its path
    model = FastStartModel(config_for(OPENAI, srv), litellm_ready=lambda: next(answers, True))
    assert await texts(model) == ["ok"]
    assert [agent.split("/")[0] for agent in agents(srv)] == ["python-httpx", "python-httpx"]


async def test_anthropic_thinking_waits_for_litellm(srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.text("thought"))
    model = FastStartModel(config_for(ANTHROPIC, srv, reasoning_effort="low"), litellm_ready=lambda: False)
    assert await texts(model) == ["thought"]
    assert agents(srv)[0].startswith("litellm/")
    assert srv.requests[0].body["thinking"] == {"type": "enabled", "budget_tokens": 1024}


async def test_a_provider_we_do_not_reproduce_waits_for_litellm(srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.text("via litellm"))
    config = config_for(OPENAI, srv, model="openrouter/openai/gpt-4o")
    model = FastStartModel(config, litellm_ready=lambda: False)
    assert await texts(model) == ["via litellm"]
    assert not agents(srv)[0].startswith("python-httpx/")


@pytest.mark.e2e
def test_the_first_call_of_a_process_streams_before_litellm_is_imported(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys, anyio
        from coder_agent.llm.wire.config import ModelConfig
        from coder_agent.llm.fast_start import FastStartModel
        from coder_agent.llm.messages import TextPart, UserMessage
        from coder_agent.scripted.script import Reply
        from coder_agent.scripted.server import ScriptedModelServer

        async def main():
            with ScriptedModelServer([Reply.text("first")]) as srv:
                model = FastStartModel(ModelConfig("openai/scripted", api_base=srv.url, api_key="sk"))
                async for event in model.stream([UserMessage(parts=[TextPart(text="hi")])]):
                    print(type(event).__name__, "litellm" in sys.modules)
            # httpx's command-line client (rich, click, pygments: ~100 ms) is not what the first call waits on
            print(sorted(name for name in ("rich", "click", "pygments") if name in sys.modules))

        anyio.run(main)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.split("\n")[:3] == ["TextDelta False", "Completion False", "[]"]


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
            assert loader.ready()
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
