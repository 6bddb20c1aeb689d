"""Exit codes of `coder-agent run`: 0 end_turn, 1 error, 3 max_turn_requests, 4 refusal, 5 max_tokens.

(That the process exits with them: tests/headless/test_run_process.py.)
"""

from __future__ import annotations

from pathlib import Path

from coder_agent.scripted.script import FinishStep, Reply, TextStep, UsageStep, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.run_helpers import RunInProcess


def finishing(reason: str) -> Reply:
    return Reply(steps=[TextStep(pieces=["Partial"]), FinishStep(finish_reason=reason), UsageStep()])  # type: ignore[arg-type]


def test_a_provider_error_exits_1_with_its_message(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    srv.enqueue(Reply.error(401, "Incorrect API key provided"))
    ran = run_cli_here(["--prompt", "hi"])
    assert ran.code == 1, ran
    assert "Incorrect API key provided" in ran.stderr
    assert "401" in ran.stderr


def test_a_provider_error_with_json_ends_with_an_error_line(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    srv.enqueue(Reply.error(401, "Incorrect API key provided"))
    ran = run_cli_here(["--json", "--prompt", "hi"])
    assert ran.code == 1, ran
    last = ran.lines()[-1]
    assert last["type"] == "error"
    assert "Incorrect API key provided" in last["message"]
    assert last["sessionId"].startswith("sess_")


def test_no_model_configured_exits_1_naming_the_setting(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path, home: Path
) -> None:
    ran = run_cli_here(["--prompt", "hi"], CODER_AGENT_MODEL=None)
    assert ran.code == 1, ran
    assert "CODER_AGENT_MODEL" in ran.stderr
    assert "coder-agent login" in ran.stderr  # the way a new user gets a model and its key
    assert srv.requests == []


def test_a_bad_setting_exits_1_naming_it(srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path) -> None:
    ran = run_cli_here(["--prompt", "hi"], CODER_AGENT_MAX_RETRIES="many")
    assert ran.code == 1, ran
    assert "CODER_AGENT_MAX_RETRIES" in ran.stderr


def test_the_model_option_overrides_the_setting(
    srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path
) -> None:
    srv.enqueue(Reply.text("ok"))
    ran = run_cli_here(["--model", "openai/other", "--prompt", "hi"], CODER_AGENT_MODEL=None)
    assert ran.code == 0, ran
    assert srv.requests[0].body["model"] == "other"


def test_max_turn_requests_exits_3(srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path) -> None:
    srv.enqueue(Reply.tool_calls([tool_call("list_dir", {})]), Reply.tool_calls([tool_call("list_dir", {})]))
    ran = run_cli_here(["--json", "--max-turn-requests", "1", "--prompt", "loop"])
    assert ran.code == 3, ran
    assert ran.result()["stopReason"] == "max_turn_requests"
    assert len(srv.requests) == 1


def test_a_refusal_exits_4(srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path) -> None:
    srv.enqueue(finishing("content_filter"))
    ran = run_cli_here(["--json", "--prompt", "something bad"])
    assert ran.code == 4, ran
    assert ran.result()["stopReason"] == "refusal"


def test_running_out_of_tokens_exits_5(srv: ScriptedModelServer, run_cli_here: RunInProcess, workspace: Path) -> None:
    srv.enqueue(finishing("length"))
    ran = run_cli_here(["--prompt", "write a novel"])
    assert ran.code == 5, ran
    assert "max_tokens" in ran.stdout
