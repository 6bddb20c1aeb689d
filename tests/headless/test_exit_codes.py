"""Exit codes of `coder-agent run`: 0 end_turn, 1 error, 3 max_turn_requests, 4 refusal, 5 max_tokens."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_agent.scripted.script import FinishStep, Reply, TextStep, UsageStep, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.headless.helpers import EnvFactory, run_cli

pytestmark = pytest.mark.anyio


def finishing(reason: str) -> Reply:
    return Reply(steps=[TextStep(pieces=["Partial"]), FinishStep(finish_reason=reason), UsageStep()])  # type: ignore[arg-type]


async def test_a_provider_error_exits_1_with_its_message(
    srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path
) -> None:
    srv.enqueue(Reply.error(401, "Incorrect API key provided"))
    ran = await run_cli(["--prompt", "hi"], cli_env(), workspace)
    assert ran.code == 1, ran
    assert "Incorrect API key provided" in ran.stderr
    assert "401" in ran.stderr


async def test_a_provider_error_with_json_ends_with_an_error_line(
    srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path
) -> None:
    srv.enqueue(Reply.error(401, "Incorrect API key provided"))
    ran = await run_cli(["--json", "--prompt", "hi"], cli_env(), workspace)
    assert ran.code == 1, ran
    last = ran.lines()[-1]
    assert last["type"] == "error"
    assert "Incorrect API key provided" in last["message"]
    assert last["sessionId"].startswith("sess_")


async def test_no_model_configured_exits_1_naming_the_setting(
    srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path, home: Path
) -> None:
    ran = await run_cli(["--prompt", "hi"], cli_env(CODER_AGENT_MODEL=None), workspace)
    assert ran.code == 1, ran
    assert "CODER_AGENT_MODEL" in ran.stderr
    assert srv.requests == []


async def test_a_bad_setting_exits_1_naming_it(srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path) -> None:
    ran = await run_cli(["--prompt", "hi"], cli_env(CODER_AGENT_MAX_RETRIES="many"), workspace)
    assert ran.code == 1, ran
    assert "CODER_AGENT_MAX_RETRIES" in ran.stderr


async def test_the_model_option_overrides_the_setting(
    srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path
) -> None:
    srv.enqueue(Reply.text("ok"))
    ran = await run_cli(["--model", "openai/other", "--prompt", "hi"], cli_env(CODER_AGENT_MODEL=None), workspace)
    assert ran.code == 0, ran
    assert srv.requests[0].body["model"] == "other"


async def test_max_turn_requests_exits_3(srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path) -> None:
    srv.enqueue(Reply.tool_calls([tool_call("list_dir", {})]), Reply.tool_calls([tool_call("list_dir", {})]))
    ran = await run_cli(["--json", "--max-turn-requests", "1", "--prompt", "loop"], cli_env(), workspace)
    assert ran.code == 3, ran
    assert ran.result()["stopReason"] == "max_turn_requests"
    assert len(srv.requests) == 1


async def test_a_refusal_exits_4(srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path) -> None:
    srv.enqueue(finishing("content_filter"))
    ran = await run_cli(["--json", "--prompt", "something bad"], cli_env(), workspace)
    assert ran.code == 4, ran
    assert ran.result()["stopReason"] == "refusal"


async def test_running_out_of_tokens_exits_5(srv: ScriptedModelServer, cli_env: EnvFactory, workspace: Path) -> None:
    srv.enqueue(finishing("length"))
    ran = await run_cli(["--prompt", "write a novel"], cli_env(), workspace)
    assert ran.code == 5, ran
    assert "max_tokens" in ran.stdout
