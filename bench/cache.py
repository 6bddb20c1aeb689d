"""Prompt caching over a 50-turn coding session: what share of the input is read from the provider's cache, and
what the session costs against the same session without caching.

`coder-agent acp` (a real process) talks to the scripted model server, which caches prompts as each provider does
(`ScriptedModelServer(cache=True)`: Anthropic's breakpoints, OpenAI's automatic prefix matching) and reports the
cached tokens in its usage as each does. Each turn: the model reads a file of the project (a tool call), then
answers. Run on the Anthropic wire (`anthropic/claude-sonnet-4-5`) and on the OpenAI wire (`openai/gpt-4o` at the
server: a server of the user's, so the prefix alone matches). The costs are litellm's prices for the model, the
cache reads and writes at their own (the agent's cost, as `usage_update` told the editor), against every prompt
token at the input price.

    python bench/cache.py [--turns 50]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

import anyio
from client import Editor, agent  # bench/client.py: the one client (the eval harness's launcher)

from coder_agent.llm.wire import model_info
from coder_agent.scripted.script import Reply, Script, tool_call
from coder_agent.scripted.server import ScriptedModelServer

MODELS = {"anthropic": "anthropic/claude-sonnet-4-5", "openai": "openai/gpt-4o"}


def script(turns: int, files: list[Path]) -> Script:
    replies: list[Reply] = []
    for turn in range(turns):
        path = files[turn % len(files)]
        replies.append(Reply.tool_calls([tool_call("read_file", {"path": str(path)})], text=["Let me look."]))
        replies.append(Reply.text(f"{path.name} defines what turn {turn} asked about; nothing to change."))
    return Script(replies=replies)


def project(root: Path) -> list[Path]:
    """A small project: ten source files of ~3 KB each."""
    files = []
    for index in range(10):
        path = root / f"module_{index}.py"
        body = "".join(f"def function_{index}_{n}(value):\n    return value * {n} + {index}\n\n" for n in range(60))
        path.write_text(body, encoding="utf-8")
        files.append(path)
    return files


async def session(wire: str, turns: int, tmp: Path) -> tuple[list[Any], float | None]:
    """The scripted server's cache log (one entry per model call) and the session's cost as the agent told it."""
    workspace = tmp / f"work-{wire}"
    workspace.mkdir()
    files = project(workspace)
    model = MODELS[wire]
    costs: list[float] = []

    def noted(method: str, params: Any) -> None:
        update = (params or {}).get("update") or {}
        if update.get("sessionUpdate") == "usage_update" and update.get("cost"):
            costs.append(float(update["cost"]["amount"]))

    editor = Editor()
    editor.on_notification = noted
    with ScriptedModelServer(script(turns, files), cache=True) as server:
        base = server.anthropic_url if wire == "anthropic" else server.url
        env = dict(os.environ, CODER_AGENT_MODEL=model, CODER_AGENT_API_BASE=base, CODER_AGENT_API_KEY="sk-bench")
        env["CODER_AGENT_HOME"] = str(tmp / f"home-{wire}")
        async with agent(env, workspace, editor) as running:
            await running.connection.request("initialize", {"protocolVersion": 1})
            new = await running.connection.request("session/new", {"cwd": str(workspace), "mcpServers": []})
            for turn in range(turns):
                prompt = [{"type": "text", "text": f"Turn {turn}: what does the next module do?"}]
                with anyio.fail_after(120):
                    await running.connection.request(
                        "session/prompt", {"sessionId": new["sessionId"], "prompt": prompt}
                    )
        return server.cache_log, (costs[-1] if costs else None)


async def main(turns: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for wire in ("anthropic", "openai"):
            log, told = await session(wire, turns, tmp)
            info = model_info.info(MODELS[wire])
            prompt = sum(call.prompt_tokens for call in log)
            read = sum(call.cache_read_tokens for call in log)
            written = sum(call.cache_creation_tokens for call in log)
            matched = sum(1 for call in log if call.cache_read_tokens > 0)
            uncached = sum(info.cost(call.prompt_tokens, 0) or 0.0 for call in log)
            cached = sum(
                info.cost(call.prompt_tokens, 0, call.cache_read_tokens, call.cache_creation_tokens) or 0.0
                for call in log
            )
            print(f"{MODELS[wire]}: {turns} turns, {len(log)} model calls, {prompt:,} input tokens")
            print(f"  read from the cache      {read / prompt:6.1%} of input tokens ({read:,}); written {written:,}")
            print(f"  requests whose prefix matched  {matched}/{len(log)} ({matched / len(log):.0%})")
            print(f"  input cost with caching  ${cached:8.4f}   without  ${uncached:8.4f}   ({cached / uncached:.0%})")
            if told is not None:
                print(f"  the session's cost as the agent told the editor (output included): ${told:.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=50)
    anyio.run(main, parser.parse_args().turns)
