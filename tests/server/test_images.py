"""Pasted images: offered when the model takes them, refused clearly when it does not, stored once, replayed."""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, image_block, text_block
from acp.schema import ImageContentBlock, UsageUpdate, UserMessageChunk

from coder_agent.scripted.script import FinishStep, Reply, TextStep, UsageStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.inproc import InprocAgent, inproc_agent

pytestmark = pytest.mark.anyio

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
SCREENSHOT = base64.b64encode(base64.b64decode(PIXEL) * 2000).decode()  # ~180 KB of base64, as a screenshot is


async def start(agent: InprocAgent, workspace: Path) -> tuple[bool, str]:
    init = await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
    assert init.agent_capabilities is not None and init.agent_capabilities.prompt_capabilities is not None
    session = await agent.conn.new_session(cwd=str(workspace), mcp_servers=[])
    return init.agent_capabilities.prompt_capabilities.image, session.session_id


def sent_images(request_body: dict[str, Any]) -> list[str]:
    return [
        part["image_url"]["url"]
        for message in request_body["messages"]
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]


async def test_a_model_that_cannot_see_is_not_offered_images_and_an_image_gets_a_clear_error(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path
) -> None:
    async with inproc_agent(make_settings(model="openai/scripted")) as agent:
        offered, session_id = await start(agent, workspace)
        with pytest.raises(RequestError) as refused:
            await agent.conn.prompt(
                session_id=session_id, prompt=[text_block("what is this?"), image_block(PIXEL, "image/png")]
            )
    assert offered is False
    assert refused.value.code == -32602
    assert "openai/scripted does not take images" in str(refused.value)
    assert "CODER_AGENT_MODEL" in str(refused.value)
    assert srv.requests == []


async def test_a_local_vision_model_litellm_does_not_know_takes_images_when_the_user_says_so_and_is_priced(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path
) -> None:
    """llava or Qwen-VL behind an OpenAI-compatible server: CODER_AGENT_IMAGES says it takes images, and the
    user's prices (per million tokens) give the cost litellm cannot."""
    settings = make_settings(model="openai/llava-local", images=True, input_price=2.0, output_price=10.0)
    srv.enqueue(
        Reply(steps=[TextStep(pieces=["a pixel"]), FinishStep(), UsageStep(prompt_tokens=1000, completion_tokens=100)])
    )
    async with inproc_agent(settings) as agent:
        offered, session_id = await start(agent, workspace)
        image = image_block(PIXEL, "image/png")
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("what is this?"), image])
        [usage] = [u for u in agent.client.updates(session_id) if isinstance(u, UsageUpdate)]
    assert offered is True
    assert sent_images(srv.requests[0].body) == [f"data:image/png;base64,{PIXEL}"]
    assert usage.cost is not None and usage.cost.currency == "USD"
    assert usage.cost.amount == pytest.approx((1000 * 2.0 + 100 * 10.0) / 1e6)


async def test_a_model_the_user_says_takes_no_images_is_not_offered_them(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path
) -> None:
    async with inproc_agent(make_settings(model="openai/gpt-4o", images=False)) as agent:
        offered, session_id = await start(agent, workspace)
        with pytest.raises(RequestError) as refused:
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("?"), image_block(PIXEL, "image/png")])
    assert offered is False
    assert "CODER_AGENT_IMAGES is false" in str(refused.value)


async def test_an_image_is_sent_to_a_model_that_sees_stored_once_and_replayed(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path
) -> None:
    settings = make_settings(model="openai/gpt-4o")  # litellm's map says it sees; the scripted server answers
    srv.enqueue(Reply.text("a red pixel"), Reply.text("still a pixel"))
    async with inproc_agent(settings) as agent:
        offered, session_id = await start(agent, workspace)
        image = image_block(SCREENSHOT, "image/png")
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("what is this?"), image])
    assert offered is True
    assert sent_images(srv.requests[0].body) == [f"data:image/png;base64,{SCREENSHOT}"]
    with sqlite3.connect(settings.home / "sessions.db") as db:
        updates = [bytes(row[0]) for row in db.execute("SELECT body FROM updates WHERE session_id = ?", (session_id,))]
        messages = [row[0] for row in db.execute("SELECT body FROM messages WHERE session_id = ?", (session_id,))]
        blobs = db.execute("SELECT data FROM blobs WHERE session_id = ?", (session_id,)).fetchall()
    assert blobs == [(SCREENSHOT,)]  # the data, once
    assert not any(SCREENSHOT[:200].encode() in body for body in updates)
    assert not any(SCREENSHOT[:200] in body for body in messages)
    assert sum(len(body) for body in updates) + sum(len(body) for body in messages) < 10_000
    async with inproc_agent(settings) as agent:
        await agent.conn.initialize(protocol_version=PROTOCOL_VERSION)
        await agent.conn.load_session(session_id=session_id, cwd=str(workspace), mcp_servers=[])
        replayed = [u.content for u in agent.client.updates(session_id) if isinstance(u, UserMessageChunk)]
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("and now?")])
    [asked, shown] = replayed
    assert getattr(asked, "text", None) == "what is this?"
    assert isinstance(shown, ImageContentBlock) and shown.data == SCREENSHOT and shown.mime_type == "image/png"
    assert sent_images(srv.requests[1].body) == [f"data:image/png;base64,{SCREENSHOT}"]  # the model still sees it
    assert json.loads(messages[0])["parts"][1]["data"].startswith("coder-agent-blob:")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 32
BAD_IMAGES = {
    "not base64": (("image/png", "iVBORw0KGgo=!*"), "its data is not valid base64"),
    "svg": (("image/svg+xml", b64(b"<svg xmlns='http://www.w3.org/2000/svg'/>")), "its mimeType 'image/svg+xml' is"),
    "text": (("image/png", b64(b"hello, not a picture")), "its data is not a PNG/JPEG/GIF/WebP image"),
    "mismatch": (("image/png", b64(JPEG)), "its data is a JPEG image, but its mimeType says image/png"),
    "data url": (("image/png", f"data:image/png;base64,{PIXEL}"), "its data is a data: URL"),
    "too large": (
        ("image/png", b64(b"\x89PNG\r\n\x1a\n" + bytes(4 * 1024 * 1024))),
        "it is 5,592,416 characters of base64, more than the 5,242,880 (5 MiB) the models take",
    ),
}


@pytest.mark.parametrize("case", list(BAD_IMAGES))
async def test_an_image_that_is_not_what_a_provider_takes_is_refused_naming_why_and_nothing_is_kept(
    make_settings: Any, srv: ScriptedModelServer, workspace: Path, case: str
) -> None:
    (mime, data), why = BAD_IMAGES[case]
    settings = make_settings(model="openai/gpt-4o")
    srv.enqueue(Reply.text("a red pixel"))
    async with inproc_agent(settings) as agent:
        _, session_id = await start(agent, workspace)
        with pytest.raises(RequestError) as refused:
            bad = image_block(data, mime)
            await agent.conn.prompt(session_id=session_id, prompt=[text_block("what is this?"), bad])
        with sqlite3.connect(settings.home / "sessions.db") as db:
            kept = [
                db.execute(f"SELECT count(*) FROM {table} WHERE session_id = ?", (session_id,)).fetchone()[0]
                for table in ("messages", "blobs")
            ]
        assert srv.requests == []  # nothing sent
        assert kept == [0, 0]  # nothing stored
        good = image_block(PIXEL, "image/png")
        await agent.conn.prompt(session_id=session_id, prompt=[text_block("and this?"), good])
    assert refused.value.code == -32602
    assert f"the image in the prompt cannot be sent: {why}" in str(refused.value)
    assert sent_images(srv.requests[0].body) == [f"data:image/png;base64,{PIXEL}"]  # the session goes on
    assert [m["content"][0]["text"] for m in srv.requests[0].body["messages"] if m["role"] == "user"] == ["and this?"]
