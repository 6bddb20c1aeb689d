"""A GPT-5 session on OpenAI's Responses API: how soon its first answer streams, and how much of it the cache holds.

The agent (`coder-agent acp`, model `openai/gpt-5-mini`) talks to the scripted model server (its own process,
speaking the Responses API at /v1/responses); each run spawns a fresh agent with a fresh data folder and sends the
first prompt right after the session/new reply. Figures, medians over the runs:

- spawn -> first agent_message_chunk, next to bench/floor_agent.py (a stdlib-only agent doing the least there is)
  on the same server in the same run, and the ratio;
- spawn -> first agent_thought_chunk when the reply thinks first, as a reasoning model's replies do (its summary
  is the first thing the user sees);
- the second prompt -> first chunk.

Then one session of `--turns` prompts, each answered with a tool call and then text, against a server that counts
a request's tokens and caches prompts as OpenAI does (automatic prefix matching, from 1024 tokens, in steps of
128): the share of requests whose prefix matched an earlier one, and the share of input tokens read from the cache.

    python bench/responses_first_token.py [--runs 7] [--turns 10]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from first_token import FLOOR, Agent, median, one_run  # bench/first_token.py

from coder_agent.scripted.records import estimated_tokens
from coder_agent.scripted.script import FinishStep, ReasoningStep, Reply, Script, TextStep, UsageStep, tool_call
from coder_agent.scripted.server import ScriptedModelServer

MODEL = "openai/gpt-5-mini"


def _thinks_first() -> Reply:
    steps = [ReasoningStep(pieces=["Thinking", " briefly."]), TextStep(pieces=["Hello", " there", "."])]
    return Reply(steps=[*steps, FinishStep(), UsageStep(prompt_tokens=10, completion_tokens=5, reasoning_tokens=2)])


def _is_thought(message: dict[str, Any]) -> bool:
    update = (message.get("params") or {}).get("update") or {}
    return message.get("method") == "session/update" and update.get("sessionUpdate") == "agent_thought_chunk"


def thought_run(env: dict[str, str], cwd: str) -> float:
    """spawn -> the first agent_thought_chunk of a prompt sent right after the session/new reply."""
    agent = Agent([sys.executable, "-m", "coder_agent", "acp"], env)
    try:
        agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        _, reply = agent.call("session/new", {"cwd": cwd, "mcpServers": []})
        session_id = reply["result"]["sessionId"]
        request_id = agent.send("session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]})
        first = agent.until(_is_thought)
        agent.until(lambda m: m.get("id") == request_id)
        return first
    finally:
        agent.close()


class _Server:
    """The scripted server in its own process, answering every request with `reply`."""

    def __init__(self, tmp: str, name: str, reply: Reply) -> None:
        script = Path(tmp) / f"{name}.json"
        Script(default=reply).save(script)
        command = [sys.executable, "-m", "coder_agent.scripted", "--script", str(script)]
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait()


def cache_session(tmp: str, turns: int) -> tuple[int, int, int, int]:
    """(requests, requests whose prefix matched, input tokens, of them cached) over one session of `turns`
    prompts, each answered with a tool call (reading a file) and then text."""
    workspace = Path(tmp) / "workspace"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("remember the milk\n" * 20)
    replies: list[Reply] = []
    for turn in range(turns):
        call = tool_call("read_file", {"path": "notes.txt"}, id=f"call_{turn}x")
        thought = ReasoningStep(pieces=[f"Turn {turn}: read the notes."])
        replies.append(Reply(steps=[thought, call, FinishStep(finish_reason="tool_calls"), UsageStep()]))
        replies.append(Reply(steps=[TextStep(pieces=[f"Done with turn {turn}."]), FinishStep(), UsageStep()]))
    with ScriptedModelServer(replies, count_prompt_tokens=True) as srv:
        env = dict(
            os.environ,
            CODER_AGENT_MODEL=MODEL,
            CODER_AGENT_API_BASE=srv.url,
            CODER_AGENT_API_KEY="sk-bench",
            CODER_AGENT_HOME=str(Path(tmp) / "cache-home"),
        )
        agent = Agent([sys.executable, "-m", "coder_agent", "acp"], env)
        try:
            agent.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            _, reply = agent.call("session/new", {"cwd": str(workspace), "mcpServers": []})
            session_id = reply["result"]["sessionId"]
            for turn in range(turns):
                agent.prompt(session_id, f"Turn {turn}: what do my notes say?")
        finally:
            agent.close()
        cached = srv.responses.cached
        inputs = [estimated_tokens(request.body) for request in srv.requests]  # what each usage reported
    return len(cached), sum(1 for tokens in cached if tokens), sum(inputs), sum(cached)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args()
    results: dict[str, list[dict[str, float]]] = {"agent": [], "floor": []}
    thoughts: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        text = _Server(tmp, "text", Reply.text("Hello", " there", "."))
        thinking = _Server(tmp, "thinking", _thinks_first())
        try:
            base = dict(os.environ, CODER_AGENT_API_KEY="sk-bench", CODER_AGENT_MODEL=MODEL)
            agent_cmd = [sys.executable, "-m", "coder_agent", "acp"]
            floor_env = dict(base, CODER_AGENT_API_BASE=text.url)
            for i in range(args.runs + 1):  # the first round warms the bytecode caches and is dropped
                env = dict(base, CODER_AGENT_API_BASE=text.url, CODER_AGENT_HOME=str(Path(tmp) / f"home{i}"))
                agent = one_run(agent_cmd, env, tmp, 0.0)
                floor = one_run([sys.executable, str(FLOOR)], floor_env, tmp, 0.0)
                thought_env = dict(base, CODER_AGENT_API_BASE=thinking.url, CODER_AGENT_HOME=f"{tmp}/thought{i}")
                thought = thought_run(thought_env, tmp)
                if i:
                    results["agent"].append(agent)
                    results["floor"].append(floor)
                    thoughts.append(thought)
        finally:
            text.stop()
            thinking.stop()
        started = time.perf_counter()
        requests, matched, inputs, cached = cache_session(tmp, args.turns)
        session_seconds = time.perf_counter() - started
    agent, floor = results["agent"], results["floor"]
    ms = 1000.0
    first, floor_first = median(agent, "first chunk"), median(floor, "first chunk")
    print(f"model {MODEL} on the Responses API, runs: {args.runs} (medians, ms)")
    print(f"spawn -> first chunk, prompt at once       {first * ms:7.0f}")
    print(f"floor (stdlib agent): spawn -> first chunk {floor_first * ms:7.0f}")
    print(f"agent / floor                              {first / floor_first:7.2f} x  (issue 23: <= 2)")
    print(f"spawn -> first thought, reply thinks first {sorted(thoughts)[len(thoughts) // 2] * ms:7.0f}")
    print(f"second prompt -> first chunk               {median(agent, 'second prompt -> first chunk') * ms:7.0f}")
    print(f"a session of {args.turns} turns with a tool call each ({session_seconds:.1f} s):")
    print(f"  requests whose prefix matched an earlier one {matched}/{requests} ({matched / requests:.0%})")
    print(f"  input tokens read from the cache             {cached}/{inputs} ({cached / inputs:.0%})")


if __name__ == "__main__":
    main()
