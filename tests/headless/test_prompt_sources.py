"""`coder-agent run`: where the prompt comes from, what the terminal output shows, and `--json`."""

from __future__ import annotations

import base64
from pathlib import Path

from coder_agent.scripted.script import FinishStep, ReasoningStep, Reply, TextStep, UsageStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_schema import compile_schema
from tests.support.run_helpers import RunInProcess, chat

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def test_a_prompt_file_is_sent_to_the_model_and_the_reply_printed_with_a_summary(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path, tmp_path: Path
) -> None:
    srv.enqueue(Reply.thinking_then_text(["Pondering ", "it"], ["The answer ", "is **42**."]))
    prompt = tmp_path / "task.md"
    prompt.write_text("What is the answer?\nThink first.\n", encoding="utf-8")
    ran = run_cli_here([str(prompt)])
    assert ran.code == 0, ran
    assert chat(srv.requests[0].body) == [("user", "What is the answer?\nThink first.\n")]
    assert "Pondering it" in ran.stdout
    assert "The answer is **42**." in ran.stdout  # not a terminal: the Markdown as the model wrote it
    assert "end_turn" in ran.stdout
    assert "tokens" in ran.stdout


def test_the_prompt_option_gives_the_prompt_inline(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    srv.enqueue(Reply.text("Hi ", "there"))
    ran = run_cli_here(["--prompt", "say hi"])
    assert ran.code == 0, ran
    assert chat(srv.requests[0].body) == [("user", "say hi")]
    assert "Hi there" in ran.stdout


def test_a_dash_reads_the_prompt_from_stdin(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    srv.enqueue(Reply.text("Read ", "it"))
    ran = run_cli_here(["-"], stdin="from stdin ✓\n")
    assert ran.code == 0, ran
    assert chat(srv.requests[0].body) == [("user", "from stdin ✓\n")]


def test_json_prints_each_update_as_sent_then_the_result(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    steps = [ReasoningStep(pieces=["hm"]), TextStep(pieces=["Done", "."]), FinishStep(), UsageStep(completion_tokens=5)]
    srv.enqueue(Reply(steps=steps))
    ran = run_cli_here(["--json", "--prompt", "go"])
    assert ran.code == 0, ran
    lines = ran.lines()
    init = lines[0]
    assert init["type"] == "init" and init["sessionId"].startswith("sess_") and init["resumed"] is False
    assert (init["cwd"], init["model"], init["mode"]) == (str(workspace), "openai/scripted", "accept-edits")
    assert {line["type"] for line in lines[1:-1]} == {"update"}
    schema = compile_schema()
    for line in lines[1:-1]:
        assert schema.errors("SessionUpdate", line["update"]) is None, line
    assert "".join(u["content"]["text"] for u in ran.updates("agent_message_chunk")) == "Done."
    assert "".join(u["content"]["text"] for u in ran.updates("agent_thought_chunk")) == "hm"
    result = ran.result()
    assert result["stopReason"] == "end_turn"
    assert result["sessionId"] == init["sessionId"]
    assert result["text"] == "Done." and result["filesChanged"] == []
    assert result["usage"]["totalTokens"] == 15  # 10 prompt + 5 completion tokens
    assert result["usage"]["modelCalls"] == 1
    assert isinstance(result["durationMs"], int)


def test_a_prompt_is_given_as_text_as_claude_p_codex_exec_and_gemini_p_take_it(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    """Before: `coder-agent run "fix the test"` took the text for a file name, and there was no `-p`."""
    srv.enqueue(Reply.text("one"), Reply.text("two"), Reply.text("three"), Reply.text("four"))
    (workspace / "task.md").write_text("from the file\n", encoding="utf-8")
    for args, stdin in ((["fix the failing test"], ""), (["-p", "task.md"], ""), ([], "piped in\n"), (["task.md"], "")):
        ran = run_cli_here(args, stdin=stdin)
        assert ran.code == 0, ran
    sent = [chat(request.body)[-1] for request in srv.requests]
    assert sent == [
        ("user", "fix the failing test"),
        ("user", "task.md"),  # -p is the text itself, never a file
        ("user", "piped in\n"),  # a piped stdin is the prompt (`git diff | coder-agent run`)
        ("user", "from the file\n"),
    ]


def test_usage_errors_exit_2_before_anything_runs(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    no_prompt = run_cli_here([])
    both = run_cli_here(["task.md", "--prompt", "x"])
    missing = run_cli_here(["missing.md"])
    empty = run_cli_here(["--prompt", "  "])
    two_modes = run_cli_here(["--yes", "--read-only", "--prompt", "x"])
    for ran in (no_prompt, both, missing, empty, two_modes):
        assert ran.code == 2, ran
        assert "usage: coder-agent run" in ran.stderr
    assert "missing.md" in missing.stderr
    assert srv.requests == []


def test_image_attaches_a_picture_to_the_prompt(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    pixel = base64.b64decode(PIXEL)
    (workspace / "screen.png").write_bytes(pixel)
    srv.enqueue(Reply.text("a pixel"))
    ran = run_cli_here(["--image", "screen.png", "what is this?"], CODER_AGENT_MODEL="openai/gpt-4o")
    assert ran.code == 0, ran
    [message] = srv.requests[0].body["messages"][1:]
    assert message["content"][0] == {"type": "text", "text": "what is this?"}
    assert message["content"][1]["image_url"]["url"] == f"data:image/png;base64,{PIXEL}"
    not_an_image = run_cli_here(["--image", "notes.txt", "hi"])
    assert not_an_image.code == 2 and "--image notes.txt" in not_an_image.stderr


def test_a_settings_notice_is_said_on_stderr(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    srv.enqueue(Reply.text("ok"))
    ran = run_cli_here(["hi"], CODER_AGENT_MAX_TURN_REQUEST="3")
    assert ran.code == 0, ran
    assert "unknown setting CODER_AGENT_MAX_TURN_REQUEST" in ran.stderr
    assert "did you mean CODER_AGENT_MAX_TURN_REQUESTS?" in ran.stderr
