"""Where the Responses API adapter (`ResponsesModel`) differs from litellm's Responses bridge on purpose: each
difference shown against both, on the scripted server, with the reason (the rest of the contract, where the two
agree, is test_responses_contract.py)."""

from __future__ import annotations

import pytest

from coder_agent.llm.base import ReasoningDelta
from coder_agent.llm.messages import TextPart, UserMessage
from coder_agent.scripted.script import (
    FinishStep,
    HttpErrorStep,
    ReasoningStep,
    Reply,
    Step,
    StreamErrorStep,
    TextStep,
    UsageStep,
)
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.responses_contract import run

pytestmark = [
    pytest.mark.anyio,
    # litellm's bridge puts its cost into the usage it streams, which its own pydantic model then warns about.
    pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning"),
]


async def test_differs_a_context_window_error_is_recognised_by_openais_code() -> None:
    """The Responses API words its context-window error differently from Chat Completions ("Your input exceeds the
    context window ..."), with the code `context_length_exceeded`; litellm knows neither, so through it the turn
    fails. The adapter says so as the other wires do, so the turn compacts the conversation and goes on."""
    with ScriptedModelServer([Reply.text("unused")], context_limit=5) as srv:
        adapter = await run("adapter", [], [UserMessage(parts=[TextPart(text="x" * 200)])], srv=srv)
        oracle = await run("litellm", [], [UserMessage(parts=[TextPart(text="x" * 200)])], srv=srv)
    assert adapter.error is not None and "no longer fits" in adapter.error[0]
    assert adapter.context_window is True and adapter.error[1] is False
    assert oracle.context_window is False


async def test_differs_a_failed_response_is_reported_in_the_providers_words() -> None:
    """`response.failed` carries OpenAI's words for what went wrong; litellm's bridge skips the event and reports a
    stream that ended early. Both retry it (before anything was shown) and fail it as cut off after text."""
    failed = Reply(steps=[TextStep(pieces=["Hel"]), StreamErrorStep(message="The server had an error")])
    adapter = await run("adapter", [failed, Reply.text("unused")])
    oracle = await run("litellm", [failed, Reply.text("unused")])
    assert adapter.error == (
        "The model's reply was cut off: the model provider reported an error mid-reply: The server had an error",
        False,
        None,
    )
    assert oracle.error is not None and oracle.error[0].startswith("The model's reply was cut off")
    for path in ("adapter", "litellm"):
        retried = await run(path, [Reply(steps=[StreamErrorStep(message="overloaded")]), Reply.text("ok")])
        assert retried.texts() == ["ok"] and retried.requests == 2


async def test_differs_a_clean_end_without_the_terminal_event_is_named_so() -> None:
    """A body that ends cleanly before `response.completed` (what a proxy sends when its upstream dies) is a reply
    cut off; the adapter says what happened, in the words the other wires' direct paths use, where litellm says
    the connection dropped (it did not). Neither retries it: text was shown."""
    adapter = await run("adapter", [Reply.ended_after("Hel", "lo"), Reply.text("unused")])
    oracle = await run("litellm", [Reply.ended_after("Hel", "lo"), Reply.text("unused")])
    assert adapter.texts() == oracle.texts() == ["Hel", "lo"]
    assert adapter.error == (
        "The model's reply was cut off: the provider's stream ended before the reply was complete (no finish reason)",
        False,
        None,
    )
    dropped = "The model's reply was cut off: the connection to the provider dropped mid-reply"
    assert oracle.error == (dropped, False, None)
    assert adapter.requests == oracle.requests == 1


async def test_differs_summary_paragraphs_are_kept_apart() -> None:
    """Two reasoning items (or summary parts) are two paragraphs: the adapter puts a blank line between them, where
    litellm runs them together ("...first.Second...")."""
    steps: list[Step] = [ReasoningStep(pieces=["First."]), ReasoningStep(pieces=["Second."]), TextStep(pieces=["ok"])]
    adapter = await run("adapter", [Reply(steps=[*steps, FinishStep(), UsageStep()])])
    oracle = await run("litellm", [Reply(steps=[*steps, FinishStep(), UsageStep()])])
    assert adapter.texts(ReasoningDelta) == ["First.", "\n\n", "Second."]
    assert oracle.texts(ReasoningDelta) == ["First.", "Second."]
    assert adapter.completion[1]["reasoning_items"] is not None and len(adapter.completion[1]["reasoning_items"]) == 2


async def test_differs_an_unverified_organisation_gets_no_summary_and_the_turn_goes_on() -> None:
    """OpenAI refuses a reasoning summary to an organisation it has not verified (400, `param:
    reasoning.summary`). The adapter asks again at once without it, and no more in this process; litellm does not
    ask for one by default (see `_as_compared`)."""
    refusal = HttpErrorStep(
        status=400, message="Your organization must be verified to generate reasoning summaries. Please go to ..."
    )
    with ScriptedModelServer([Reply(steps=[refusal]), Reply.text("ok"), Reply.text("again")]) as srv:
        first = await run("adapter", [], srv=srv, model="openai/gpt-5-nano")
        second = await run("adapter", [], srv=srv, model="openai/gpt-5-nano")
    assert first.texts() == ["ok"] and second.texts() == ["again"]
    assert [body.get("reasoning") for body in first.bodies + second.bodies] == [{"summary": "auto"}, None, None]
