"""What a compaction summarises and what stays verbatim: whole exchanges, the turn's request, the last answers."""

from __future__ import annotations

from string import Template

import pytest

from coder_agent.agent.compaction.plan import is_summary, plan
from coder_agent.agent.sessions.history import missing_answers
from coder_agent.kit.prompts import prompts_dir, render
from coder_agent.llm.messages import AssistantMessage, ChatMessage, TextPart, ToolCallRequest, ToolMessage, UserMessage


def user(text: str) -> UserMessage:
    return UserMessage(parts=[TextPart(text=text)])


def call(n: int, size: int = 400) -> list[ChatMessage]:
    request = ToolCallRequest(id=f"c{n}", name="read_file", arguments='{"path": "/x"}')
    return [AssistantMessage(tool_calls=[request]), ToolMessage(tool_call_id=f"c{n}", content="x" * size)]


def conversation(turns: int, calls: int = 2) -> list[ChatMessage]:
    history: list[ChatMessage] = []
    for t in range(turns):
        history.append(user(f"request {t}"))
        for c in range(calls):
            history += call(t * 10 + c)
        history.append(AssistantMessage(text=f"answer {t}"))
    return history


@pytest.mark.parametrize("keep", [0, 150, 400, 1000, 5000])
def test_no_cut_separates_a_tool_call_from_its_answer(keep: int) -> None:
    history = conversation(6)
    chosen = plan(history, keep)
    if chosen is None:
        assert keep >= 5000
        return
    assert missing_answers(chosen.kept, "") == []
    assert not isinstance(chosen.kept[0], ToolMessage)
    rebuilt = chosen.rebuild("the summary")
    assert is_summary(rebuilt[0]) and "the summary" in rebuilt[0].parts[0].text  # type: ignore[union-attr]
    assert len(chosen.older) + len(chosen.kept) == len(history)


def test_the_turns_request_stays_verbatim_even_when_its_own_work_is_summarised() -> None:
    history = conversation(3)
    turn_start = len(history)
    history += [user("the request under way"), *call(98, 4000), *call(99, 4000)]
    chosen = plan(history, 200, turn_start)
    assert chosen is not None
    rebuilt = chosen.rebuild("s")
    assert chosen.turn_start == 1 and rebuilt[1] == history[turn_start]
    assert rebuilt[-2:] == history[-2:]  # the answers the model is about to read
    assert history[turn_start] not in chosen.older


def test_the_request_keeps_its_place_when_it_falls_among_the_kept_messages() -> None:
    history = conversation(3, calls=0)
    turn_start = len(history)
    history += [user("now"), *call(1, 10)]
    chosen = plan(history, 40, turn_start)
    assert chosen is not None
    assert chosen.rebuild("s")[chosen.turn_start or 0] == history[turn_start]


def test_nothing_older_than_what_must_stay_means_no_compaction() -> None:
    assert plan([user("only this")], 0, 0) is None
    assert plan([user("a"), *call(1)], 0, 0) is None  # the request and its last answers
    assert plan([], 0) is None


def test_every_template_renders_with_its_placeholders_filled() -> None:
    # prompts/tools/ holds descriptions read as they are; the rest are templates.
    files = sorted(path for path in prompts_dir().rglob("*.md") if path.parent.name != "tools")
    assert {"compact.md", "compact_request.md", "compacted.md", "init.md", "review.md"} <= {f.name for f in files}
    for path in files:
        name = str(path.relative_to(prompts_dir()))
        fields = Template(path.read_text(encoding="utf-8")).get_identifiers()
        rendered = render(name, **{field: f"<{field}>" for field in fields})
        assert rendered.strip() and "$" not in rendered.replace("$ARGUMENTS", "")
