"""The scripted model server, driven for real through litellm's OpenAI-compatible client."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import pytest

from coder_agent.scripted.records import EXHAUSTED_MESSAGE
from coder_agent.scripted.script import EmptyBodyStep, HttpErrorStep, Reply, Script, SleepStep, TextStep, tool_call
from coder_agent.scripted.server import ScriptedModelServer

pytestmark = pytest.mark.anyio

MESSAGES = [{"role": "user", "content": "hi"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


async def complete(litellm: ModuleType, url: str, *, stream: bool = True, timeout: float = 5.0, **kwargs: Any) -> Any:
    stream_kwargs: dict[str, Any] = {"stream_options": {"include_usage": True}} if stream else {}
    return await litellm.acompletion(
        model="openai/scripted",
        api_base=url,
        api_key="sk-test",
        messages=MESSAGES,
        stream=stream,
        num_retries=0,
        max_retries=0,
        timeout=timeout,
        **stream_kwargs,
        **kwargs,
    )


async def stream_chunks(litellm: ModuleType, url: str, **kwargs: Any) -> list[Any]:
    response = await complete(litellm, url, **kwargs)
    return [chunk async for chunk in response]


def contents(chunks: list[Any]) -> list[str]:
    return [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]


async def test_text_pieces_arrive_as_separate_deltas_in_order(litellm: ModuleType, srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.text("Hello ", "there, ", "world"), Reply.many_chunks(300))
    with anyio.fail_after(10):
        first = await stream_chunks(litellm, srv.url)
        many = await stream_chunks(litellm, srv.url)
    assert contents(first) == ["Hello ", "there, ", "world"]
    assert first[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in first if c.choices and c.choices[0].finish_reason] == ["stop"]
    assert contents(many) == [f"t{i} " for i in range(300)]


async def test_reasoning_pieces_arrive_as_reasoning_content_deltas(
    litellm: ModuleType, srv: ScriptedModelServer
) -> None:
    srv.enqueue(Reply.thinking_then_text(["Let me ", "think."], ["Done."]))
    with anyio.fail_after(10):
        chunks = await stream_chunks(litellm, srv.url)
    thoughts = [getattr(c.choices[0].delta, "reasoning_content", None) for c in chunks if c.choices]
    assert [t for t in thoughts if t] == ["Let me ", "think."]
    assert contents(chunks) == ["Done."]
    assert litellm.stream_chunk_builder(chunks).choices[0].message.reasoning_content == "Let me think."


async def test_parallel_tool_calls_reassemble_from_split_arguments(
    litellm: ModuleType, srv: ScriptedModelServer
) -> None:
    calls = [
        tool_call("read_file", {"path": "src/main.py"}, pieces=4),
        tool_call("grep", {"pattern": "TODO"}),
    ]
    srv.enqueue(Reply.tool_calls(calls, text=["I'll look."]))
    with anyio.fail_after(10):
        chunks = await stream_chunks(litellm, srv.url, tools=TOOLS)

    deltas = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
    assert [d.index for d in deltas] == [0, 0, 0, 0, 1, 1, 1]
    assert [(d.id, d.function.name) for d in deltas if d.id] == [("call_0", "read_file"), ("call_1", "grep")]
    arguments = {i: "".join(d.function.arguments for d in deltas if d.index == i) for i in (0, 1)}
    assert json.loads(arguments[0]) == {"path": "src/main.py"}
    assert json.loads(arguments[1]) == {"pattern": "TODO"}
    message = litellm.stream_chunk_builder(chunks, messages=MESSAGES).choices[0]
    assert message.finish_reason == "tool_calls"
    assert message.message.content == "I'll look."
    assert [tc.function.name for tc in message.message.tool_calls] == ["read_file", "grep"]


async def test_usage_arrives_when_the_client_asks_for_it(litellm: ModuleType, srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.text("a ", "b ", "c"))
    with anyio.fail_after(10):
        chunks = await stream_chunks(litellm, srv.url)
    usage = [c.usage for c in chunks if getattr(c, "usage", None)]
    assert [(u.prompt_tokens, u.completion_tokens, u.total_tokens) for u in usage] == [(10, 3, 13)]


async def test_non_streaming_request_gets_one_whole_completion(litellm: ModuleType, srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.tool_calls([tool_call("read_file", {"path": "a.py"})], text=["Reading."]))
    with anyio.fail_after(10):
        response = await complete(litellm, srv.url, stream=False)
    choice = response.choices[0]
    assert (choice.finish_reason, choice.message.content) == ("tool_calls", "Reading.")
    assert json.loads(choice.message.tool_calls[0].function.arguments) == {"path": "a.py"}
    assert response.usage.prompt_tokens == 10


@pytest.mark.parametrize(
    ("status", "exception", "retry_after"),
    [
        (401, "AuthenticationError", None),
        (429, "RateLimitError", 1),
        (500, "InternalServerError", None),
        (503, "ServiceUnavailableError", 2),
    ],
)
async def test_http_errors_raise_the_matching_litellm_exception(
    litellm: ModuleType, srv: ScriptedModelServer, status: int, exception: str, retry_after: int | None
) -> None:
    srv.enqueue(Reply.error(status, f"scripted {status}", retry_after=retry_after))
    with anyio.fail_after(10), pytest.raises(getattr(litellm, exception)) as caught:
        await complete(litellm, srv.url)
    assert type(caught.value).__name__ == exception
    assert caught.value.status_code == status
    assert f"scripted {status}" in str(caught.value)
    headers = caught.value.litellm_response_headers  # e.response is a stand-in without the headers
    assert headers.get("retry-after") == (None if retry_after is None else str(retry_after))


async def test_a_401_with_openais_error_type_becomes_a_bad_request_error(
    litellm: ModuleType, srv: ScriptedModelServer
) -> None:
    # litellm matches "invalid_request_error" in the message before it looks at the status code.
    step = HttpErrorStep(status=401, message="bad key", error_type="invalid_request_error")
    srv.enqueue(Reply(steps=[step]))
    with anyio.fail_after(10), pytest.raises(litellm.BadRequestError) as caught:
        await complete(litellm, srv.url)
    assert caught.value.status_code == 401


@pytest.mark.parametrize("endpoint", ["/v1/chat/completions", "/v1/messages"])
@pytest.mark.parametrize("header", ["authorization", "x-api-key"])
async def test_an_error_can_echo_the_key_the_request_carried(
    srv: ScriptedModelServer, endpoint: str, header: str
) -> None:
    srv.enqueue(Reply.error(401, "Incorrect API key provided: {key}", echo_key=True))
    value = "Bearer sk-echo-me-123456" if header == "authorization" else "sk-echo-me-123456"
    async with httpx.AsyncClient() as client:
        response = await client.post(srv.anthropic_url + endpoint, json={}, headers={header: value})
    assert response.status_code == 401
    assert response.json()["error"]["message"] == "Incorrect API key provided: sk-echo-me-123456"


async def test_a_stall_before_the_first_chunk_raises_a_timeout(litellm: ModuleType, srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.stall(60))
    with anyio.fail_after(10), pytest.raises(litellm.Timeout) as caught:
        await complete(litellm, srv.url, timeout=0.5)
    assert caught.value.status_code == 408
    with anyio.fail_after(10):
        assert await anyio.to_thread.run_sync(srv.wait_disconnect, 5)


async def test_a_stall_mid_stream_raises_after_the_first_pieces(litellm: ModuleType, srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.stall(60, after_text=["a ", "b "]))
    received: list[str] = []
    with anyio.fail_after(10), pytest.raises(litellm.exceptions.MidStreamFallbackError) as caught:
        async for chunk in await complete(litellm, srv.url, timeout=0.5):
            received.extend(contents([chunk]))
    assert received == ["a ", "b "]
    assert caught.value.generated_content == "a b "
    assert isinstance(caught.value.original_exception, litellm.APIConnectionError)


async def test_a_cut_mid_stream_raises_after_the_first_pieces(litellm: ModuleType, srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.cut_after("a ", "b "))
    received: list[str] = []
    with anyio.fail_after(10), pytest.raises(litellm.exceptions.MidStreamFallbackError) as caught:
        async for chunk in await complete(litellm, srv.url):
            received.extend(contents([chunk]))
    assert received == ["a ", "b "]
    assert isinstance(caught.value.original_exception, litellm.APIConnectionError)
    assert srv.disconnects == 0  # the srv hung up, not the client


async def test_a_clean_end_without_a_finish_reason_looks_complete_to_litellm(
    litellm: ModuleType, srv: ScriptedModelServer
) -> None:
    # What a proxy sends when its upstream dies: the body ends cleanly, with no finish chunk and no [DONE].
    srv.enqueue(Reply.ended_after("a ", "b "))
    with anyio.fail_after(10):
        response = await complete(litellm, srv.url)
        chunks = [chunk async for chunk in response]
    assert contents(chunks) == ["a ", "b "]
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["stop"]  # made up by litellm ...
    assert response.received_finish_reason is None  # ... which alone knows none came


@pytest.mark.parametrize("reply", [Reply.empty_stream(), Reply.empty_body()], ids=["no-events", "empty-200-body"])
async def test_an_empty_reply_ends_quietly_in_litellm(
    litellm: ModuleType, srv: ScriptedModelServer, reply: Reply
) -> None:
    srv.enqueue(reply)
    with anyio.fail_after(10):
        response = await complete(litellm, srv.url)
        chunks = [chunk async for chunk in response]
    assert contents(chunks) == []
    assert response.received_finish_reason is None


async def test_a_client_that_closes_the_stream_early_is_seen_as_a_disconnect(
    litellm: ModuleType, srv: ScriptedModelServer
) -> None:
    srv.enqueue(Reply.many_chunks(100_000), Reply.stall(60, after_text=["a "]))
    with anyio.fail_after(10):
        for expected in (1, 2):
            response = await complete(litellm, srv.url)
            async for _ in response:
                break
            await response.aclose()
            assert await anyio.to_thread.run_sync(srv.wait_disconnect, 5, expected)
    assert srv.disconnects == 2


async def test_the_request_is_recorded(litellm: ModuleType, srv: ScriptedModelServer) -> None:
    srv.enqueue(Reply.text("ok"))
    with anyio.fail_after(10):
        await stream_chunks(litellm, srv.url, tools=TOOLS, tool_choice="auto")
    [request] = srv.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body["model"] == "scripted"
    assert request.body["messages"] == MESSAGES
    assert request.body["tools"] == TOOLS
    assert request.body["stream_options"] == {"include_usage": True}


async def test_an_exhausted_script_answers_500_with_a_clear_message(
    litellm: ModuleType, srv: ScriptedModelServer, capfd: pytest.CaptureFixture[str]
) -> None:
    with anyio.fail_after(10), pytest.raises(litellm.InternalServerError) as caught:
        await complete(litellm, srv.url)
    assert EXHAUSTED_MESSAGE in str(caught.value)
    assert capfd.readouterr().out == ""  # the server never writes to stdout


async def test_the_default_reply_answers_once_the_script_runs_out(litellm: ModuleType) -> None:
    script = Script(replies=[Reply.text("first")], default=Reply.text("again"))
    with ScriptedModelServer(script) as srv, anyio.fail_after(10):
        answers = [contents(await stream_chunks(litellm, srv.url)) for _ in range(3)]
    assert answers == [["first"], ["again"], ["again"]]


async def test_connection_refused_raises_an_internal_server_error(litellm: ModuleType) -> None:
    with ScriptedModelServer() as srv:
        url = srv.url
    with anyio.fail_after(10), pytest.raises(litellm.InternalServerError) as caught:
        await complete(litellm, url)
    assert caught.value.status_code == 500
    assert caught.value.litellm_response_headers is None  # no HTTP response at all, unlike a real 500


async def test_stopping_the_server_ends_a_stall_at_once(litellm: ModuleType) -> None:
    srv = ScriptedModelServer([Reply.stall(60, after_text=["a "])]).start()
    response = await complete(litellm, srv.url)
    with anyio.fail_after(2):
        await anyio.to_thread.run_sync(srv.stop)
    with anyio.fail_after(5), pytest.raises(litellm.exceptions.MidStreamFallbackError):
        async for _ in response:
            pass


async def test_models_are_listed() -> None:
    with ScriptedModelServer(model="tiny") as srv, anyio.fail_after(5):
        async with httpx.AsyncClient() as client:
            answer = await client.get(f"{srv.url}/models")
    assert [m["id"] for m in answer.json()["data"]] == ["tiny"]


def test_a_script_round_trips_through_json(tmp_path: Path) -> None:
    script = Script(
        replies=[
            Reply.text("Hello ", "world"),
            Reply.thinking_then_text(["hm"], ["ok"]),
            Reply.tool_calls([tool_call("grep", {"pattern": "x"}, id="call_x")], text=["Looking."]),
            Reply.error(429, "rate limited", retry_after=1),
            Reply.stall(0.5, after_text=["a "]),
            Reply.cut_after("a "),
            Reply.ended_after("b "),
            Reply.empty_body(),
        ],
        default=Reply.many_chunks(3),
    )
    path = tmp_path / "golden.json"
    script.save(path)
    assert Script.load(path) == script
    assert json.loads(path.read_text())["replies"][3]["steps"][0] == {
        "type": "http_error",
        "status": 429,
        "message": "rate limited",
        "retry_after": 1.0,
        "error_type": None,
        "echo_key": False,
    }


def test_an_http_error_after_other_steps_is_rejected() -> None:
    with pytest.raises(ValueError, match="first step"):
        Reply(steps=[TextStep(pieces=["a"]), HttpErrorStep(status=500, message="late")])
    assert Reply(steps=[SleepStep(seconds=1)]).http_error is None
    with pytest.raises(ValueError, match="only step"):
        Reply(steps=[EmptyBodyStep(), TextStep(pieces=["a"])])


@pytest.mark.e2e
async def test_the_cli_prints_the_url_serves_and_exits_on_sigterm(litellm: ModuleType, tmp_path: Path) -> None:
    script_path = tmp_path / "script.json"
    Script(replies=[Reply.text("from ", "the CLI")]).save(script_path)
    command = [sys.executable, "-m", "coder_agent.scripted", "--script", str(script_path)]
    async with await anyio.open_process(command, stdout=subprocess.PIPE) as process:
        assert process.stdout is not None
        try:
            with anyio.fail_after(30):
                output = b""
                while not output.endswith(b"\n"):
                    output += await process.stdout.receive()
                url = output.decode().strip()
                assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
                assert contents(await stream_chunks(litellm, url)) == ["from ", "the CLI"]
                process.send_signal(signal.SIGTERM)
                assert await process.wait() == 0
                rest = [chunk async for chunk in process.stdout]
        finally:
            if process.returncode is None:  # a failure or the timeout above: the process's exit is not awaited forever
                process.kill()
    assert rest == []  # one line of output, nothing else


async def test_a_request_over_the_context_limit_gets_the_providers_context_error_and_takes_no_reply() -> None:
    with ScriptedModelServer([Reply.text("small enough")], context_limit=50, count_prompt_tokens=True) as server:
        async with httpx.AsyncClient() as http:
            big = {"model": "scripted", "messages": [{"role": "user", "content": "x" * 400}]}
            refused = await http.post(f"{server.url}/chat/completions", json=big)
            small = {"model": "scripted", "messages": MESSAGES}
            answered = await http.post(f"{server.url}/chat/completions", json=small)
    assert refused.status_code == 400
    assert "maximum context length is 50 tokens" in refused.json()["error"]["message"]
    assert answered.json()["choices"][0]["message"]["content"] == "small enough"
    assert answered.json()["usage"]["prompt_tokens"] == len(json.dumps(MESSAGES)) // 4
    assert len(server.requests) == 2


async def test_a_responder_answers_the_requests_it_recognises_and_the_script_the_rest() -> None:
    def respond(request: Any) -> Reply | None:
        return Reply.text("summary") if "summarise" in json.dumps(request.body["messages"]) else None

    with ScriptedModelServer([Reply.text("scripted")], respond=respond) as server:
        async with httpx.AsyncClient() as http:
            texts = []
            for content in ("please summarise", "hello"):
                body = {"model": "scripted", "messages": [{"role": "user", "content": content}]}
                reply = await http.post(f"{server.url}/chat/completions", json=body)
                texts.append(reply.json()["choices"][0]["message"]["content"])
    assert texts == ["summary", "scripted"]
