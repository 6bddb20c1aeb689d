"""Tools of a real MCP server over stdio: how they are offered, gated and called."""

from __future__ import annotations

import base64

import anyio
import pytest

from coder_agent.acp.schema import ContentToolCallContent, EmbeddedResource, ImageContent, ResourceLink, TextContent
from coder_agent.agent.permissions.gate import PermissionRules, decide
from coder_agent.mcp import McpServers

from ..support.mcp_servers import CONTEXT, processes_with, running, stdio

pytestmark = pytest.mark.anyio


async def test_the_tools_are_namespaced_with_their_schemas_descriptions_and_gates(tag: str) -> None:
    async with running([stdio("demo", tag)]) as run:
        tools = {tool.name: tool for tool in run.mcp.tools()}
        assert {"mcp__demo__add", "mcp__demo__echo_image", "mcp__demo__resources_demo"} <= set(tools)
        add = tools["mcp__demo__add"]
        spec = add.spec()
        assert spec["function"]["name"] == "mcp__demo__add"
        assert spec["function"]["description"] == "Add two numbers."
        assert spec["function"]["parameters"]["required"] == ["a", "b"]
        assert add.read_only and not tools["mcp__demo__echo_image"].read_only

        read_intent = await add.prepare(add.parse({"a": 1}), CONTEXT)
        assert (read_intent.title, read_intent.kind, read_intent.effect) == ("demo: Add numbers", "read", "read")
        die = tools["mcp__demo__die"]
        intent = await die.prepare(die.parse({}), CONTEXT)
        assert (intent.title, intent.kind, intent.effect, intent.command) == ("demo: die", "other", "execute", None)

        rules = PermissionRules()
        assert decide("default", add.name, read_intent, rules, ["/tmp"]).action == "allow"
        assert decide("default", die.name, intent, rules, ["/tmp"]).action == "ask"
        rules.remember(die.name, intent, allowed=True)
        assert decide("default", die.name, intent, rules, ["/tmp"]).action == "allow"
        assert run.reports == []


async def test_calls_return_text_images_structured_content_and_resources(tag: str) -> None:
    async with running([stdio("demo", tag)]) as run:
        added = await run.call("mcp__demo__add", a=2, b=40)
        assert (added.output, added.failed, added.raw_output) == ("42", False, {"result": 42})
        assert added.content == [ContentToolCallContent(content=TextContent(text="42"))]

        image = await run.call("mcp__demo__echo_image", caption="a pixel")
        assert image.output == "a pixel\n[image: image/png]"
        shown = image.content[1]
        assert isinstance(shown, ContentToolCallContent) and isinstance(shown.content, ImageContent)
        assert shown.content.mime_type == "image/png"
        assert base64.b64decode(shown.content.data).startswith(b"\x89PNG")

        summed = await run.call("mcp__demo__structured", terms=[1, 2, 3])
        assert summed.raw_output == {"total": 6, "terms": [1, 2, 3]}
        assert '"total": 6' in summed.output

        resources = await run.call("mcp__demo__resources_demo")
        assert (
            resources.output == "[resource: file:///notes.txt]\nnote body\n[resource link: big.log <file:///big.log>]"
        )
        blocks = [item.content for item in resources.content if isinstance(item, ContentToolCallContent)]
        assert isinstance(blocks[0], EmbeddedResource) and blocks[0].resource.uri == "file:///notes.txt"
        assert isinstance(blocks[1], ResourceLink) and blocks[1].name == "big.log"


async def test_tool_errors_bad_arguments_and_long_results_come_back_as_results(tag: str) -> None:
    async with running([stdio("demo", tag)]) as run:
        failed = await run.call("mcp__demo__fail", message="boom")
        assert failed.failed and "boom" in failed.output
        invalid = await run.call("mcp__demo__add", a="not a number")  # the server judges the arguments
        assert invalid.failed and "validation error" in invalid.output
        long = await run.call("mcp__demo__big", size=150_000)
        assert len(long.output) < 100_200
        assert long.output.endswith("[output truncated: 150000 characters in all, showing the first 100000]")
        assert not (await run.call("mcp__demo__add", a=1, b=1)).failed


async def test_the_env_reaches_a_stdio_server_with_the_safe_defaults(tag: str) -> None:
    async with running([stdio("demo", tag, env={"DEMO_TOKEN": "s3cret"})]) as run:
        assert (await run.call("mcp__demo__get_env", name="DEMO_TOKEN")).output == "s3cret"
        assert (await run.call("mcp__demo__get_env", name="PATH")).output not in ("", "<unset>")
        assert (await run.call("mcp__demo__get_env", name="CODER_AGENT_NOT_PASSED")).output == "<unset>"


async def test_a_stdio_server_gets_none_of_the_agents_credentials(tag: str, monkeypatch: pytest.MonkeyPatch) -> None:
    agent_keys = {
        "CODER_AGENT_API_KEY": "sk-agent-own-key-0001",
        "CODER_AGENT_API_BASE": "http://127.0.0.1:9/v1",
        "OPENAI_API_KEY": "sk-openai-key-0002",
        "ANTHROPIC_API_KEY": "sk-ant-key-0003",
    }
    for name, value in agent_keys.items():
        monkeypatch.setenv(name, value)
    async with running([stdio("demo", tag, env={"DEMO_TOKEN": "s3cret"})]) as run:
        seen = {name: (await run.call("mcp__demo__get_env", name=name)).output for name in agent_keys}
        assert (await run.call("mcp__demo__get_env", name="DEMO_TOKEN")).output == "s3cret"
    assert seen == dict.fromkeys(agent_keys, "<unset>")


async def test_tools_listed_over_several_pages_get_valid_unique_names(tag: str) -> None:
    async with running([stdio("odd server!", tag, mode="paged")]) as run:
        names = sorted(tool.name for tool in run.mcp.tools())
        assert len(names) == 4
        assert "mcp__odd_server___first_tool" in names and "mcp__odd_server___last_tool" in names
        long_name = next(name for name in names if "xxx" in name)
        assert len(long_name) == 64
        result = await run.call(long_name)
        assert result.output == "called " + "x" * 80


async def test_close_leaves_no_server_process(tag: str) -> None:
    async with running([stdio("one", tag), stdio("two", tag)]) as run:
        assert len(processes_with(tag)) == 2
        with anyio.fail_after(15):
            await run.mcp.close()
        assert processes_with(tag) == []
        assert run.mcp.tools() == []


async def test_cancelling_run_leaves_no_server_process(tag: str) -> None:
    async def report(message: str) -> None:
        raise AssertionError(message)

    mcp = McpServers([stdio("one", tag)], report=report)
    with anyio.fail_after(60):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(mcp.run)
            await mcp.wait_ready(40)
            assert len(mcp.tools()) > 0 and len(processes_with(tag)) == 1
            task_group.cancel_scope.cancel()
    assert processes_with(tag) == []
