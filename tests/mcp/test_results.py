"""MCP call results as coder-agent tool results: what the model reads and what the editor shows."""

from __future__ import annotations

import mcp_types as mcp

from coder_agent.acp.schema import (
    AudioContent,
    BlobResourceContents,
    ContentToolCallContent,
    EmbeddedResource,
    TextContent,
)
from coder_agent.mcp.results import MAX_EDITOR_TEXT, convert


def _shown(result_content: list[object]) -> list[object]:
    return [item.content for item in result_content if isinstance(item, ContentToolCallContent)]


def test_audiences_decide_who_sees_a_block() -> None:
    result = convert(
        mcp.CallToolResult(
            content=[
                mcp.TextContent(text="for the model", annotations=mcp.Annotations(audience=["assistant"])),
                mcp.TextContent(text="for the user", annotations=mcp.Annotations(audience=["user"])),
                mcp.TextContent(text="for both"),
            ]
        )
    )
    assert result.output == "for the model\nfor both"
    assert _shown(result.content) == [TextContent(text="for the user"), TextContent(text="for both")]


def test_audio_and_binary_resources_are_noted_for_the_model_and_shown_in_the_editor() -> None:
    blob = mcp.BlobResourceContents(uri="file:///a.bin", blob="AAEC", mime_type="application/octet-stream")
    result = convert(
        mcp.CallToolResult(
            content=[mcp.AudioContent(data="UklGRg==", mime_type="audio/wav"), mcp.EmbeddedResource(resource=blob)]
        )
    )
    assert result.output == "[audio: audio/wav]\n[binary resource: file:///a.bin (application/octet-stream)]"
    assert _shown(result.content) == [
        AudioContent(data="UklGRg==", mime_type="audio/wav"),
        EmbeddedResource(
            resource=BlobResourceContents(uri="file:///a.bin", blob="AAEC", mime_type="application/octet-stream")
        ),
    ]


def test_structured_content_alone_is_given_as_json() -> None:
    result = convert(mcp.CallToolResult(content=[], structured_content={"answer": 42}))
    assert result.output == '{\n  "answer": 42\n}'
    assert result.raw_output == {"answer": 42}
    assert _shown(result.content) == [TextContent(text='{\n  "answer": 42\n}')]


def test_an_error_without_a_message_still_says_it_failed() -> None:
    result = convert(mcp.CallToolResult(content=[], is_error=True))
    assert result.failed
    assert result.output == "The tool failed without a message."
    assert convert(mcp.CallToolResult(content=[])).output == "The tool returned no output."


def test_long_text_is_capped_in_the_editor_too() -> None:
    result = convert(mcp.CallToolResult(content=[mcp.TextContent(text="y" * (MAX_EDITOR_TEXT + 10))]))
    shown = _shown(result.content)[0]
    assert isinstance(shown, TextContent)
    assert shown.text.startswith("y" * MAX_EDITOR_TEXT) and "[output truncated" in shown.text
