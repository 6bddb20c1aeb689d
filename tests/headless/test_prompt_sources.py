"""`coder-agent run`: where the prompt comes from, what the terminal output shows, and `--json`."""

from __future__ import annotations

from pathlib import Path

from coder_agent.scripted.script import FinishStep, ReasoningStep, Reply, TextStep, UsageStep
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.acp_schema import compile_schema
from tests.support.run_helpers import RunInProcess, chat


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
    assert {line["type"] for line in lines[:-1]} == {"update"}
    schema = compile_schema()
    for line in lines[:-1]:
        assert schema.errors("SessionUpdate", line["update"]) is None, line
    assert "".join(u["content"]["text"] for u in ran.updates("agent_message_chunk")) == "Done."
    assert "".join(u["content"]["text"] for u in ran.updates("agent_thought_chunk")) == "hm"
    result = ran.result()
    assert result["stopReason"] == "end_turn"
    assert result["sessionId"].startswith("sess_")
    assert result["usage"]["totalTokens"] == 15  # 10 prompt + 5 completion tokens
    assert result["usage"]["modelCalls"] == 1
    assert isinstance(result["durationMs"], int)


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
