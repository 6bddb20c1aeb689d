"""`coder-agent config` (the effective settings and where each came from) and `coder-agent rules` (the lasting
permission rules: list, remove). Keys are never printed: only whether they are set, and where from."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .. import __version__
from ..agent.permissions.rules_file import RuleFile
from ..config.keystore import KeyStore
from ..config.settings import Settings, SettingsError
from ..config.userfiles import MCP_FILE
from ..kit.credentials import PREFIX
from ..llm.wire.providers import likely_provider
from ..llm.wire.usable import KEY_VARIABLES, missing_key
from ..mcp.config_files import McpConfigError, read

SECRET_SETTINGS = ("api_key", "serve_token")


def _load() -> tuple[Settings, dict[str, str]]:
    environ = dict(os.environ)
    return Settings.load(environ, lenient=True), environ


def _shown(name: str, value: object) -> str:
    if value is None or value == []:
        return "(not set)"
    if name in SECRET_SETTINGS:
        return "(set)"
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    if name == "lsp" and isinstance(value, dict):  # [lsp.<language>] tables: what each names
        tables = {language: table.model_dump(exclude_none=True) for language, table in value.items()}
        return "; ".join(f"{language}: {table}" for language, table in tables.items()) or "(none)"
    return str(value)


def key_line(settings: Settings, environ: dict[str, str]) -> str:
    """Which key the model's calls use, and where it comes from (never the key)."""
    model = settings.model
    if model is None:
        return "key: no model configured (run `coder-agent login`, or set CODER_AGENT_MODEL)"
    if settings.api_key:
        return f"key: CODER_AGENT_API_KEY (from {settings.sources['api_key']})"
    variables = KEY_VARIABLES.get(likely_provider(model) or "", ())
    for name in variables:
        if environ.get(name, "").strip():
            where = "saved login" if name in settings.saved_keys else "the environment or your .env files"
            return f"key: {name} (from {where})"
    missing = missing_key(model, settings.api_base, settings.api_key, environ)
    if missing is not None:
        return f"key: MISSING: set {missing} or CODER_AGENT_API_KEY, or run `coder-agent login`"
    if settings.api_base:
        return "key: none set; the server at CODER_AGENT_API_BASE gets the placeholder `no-key`"
    return "key: found by litellm from the provider's own variables or cloud credentials"


def _mcp_lines(settings: Settings) -> list[str]:
    paths = [settings.config_dir / MCP_FILE] if settings.config_dir else []
    paths += [Path(name).expanduser() for name in settings.mcp_config]
    lines = []
    for path in paths:
        try:
            found = read(path)
        except McpConfigError as exc:
            lines.append(f"  {path}: UNUSABLE: {exc}")
            continue
        if found is None:
            lines.append(f"  {path}: (none)")
            continue
        names = ", ".join(server.name for server in found.servers) or "no servers"
        lines.append(f"  {path}: {names}")
        lines += [f"    {problem}" for problem in found.problems]
    return lines


def config_text(settings: Settings, environ: dict[str, str]) -> str:
    width = max(len(PREFIX + name) for name in Settings.model_fields) + 2
    lines = [
        f"coder-agent {__version__}: the effective settings. First source wins: the environment, your .env files,",
        "the keys `coder-agent login` saved, config.toml in the config folder, config.toml in the data folder.",
        "",
    ]
    for name in Settings.model_fields:
        value = _shown(name, getattr(settings, name))
        lines.append(f"{PREFIX + name.upper():<{width}}{value}  [{settings.sources[name]}]")
    lines += ["", key_line(settings, environ)]
    if settings.config_dir is not None:
        saved = KeyStore(settings.config_dir).names()
        lines.append(f"keys saved by login: {', '.join(saved) or '(none)'}")
        lines.append(f"permission rules: {len(RuleFile(settings.config_dir).load().rules)} (`coder-agent rules`)")
    lines += ["MCP servers (besides the editor's and an approved project's .mcp.json):", *_mcp_lines(settings)]
    for notice in settings.notices:
        lines.append(f"note: {notice}")
    for setting, problem in settings.problems.items():
        lines.append(f"PROBLEM: {setting}: {problem}")
    return "\n".join(lines) + "\n"


def config_main(argv: list[str]) -> int:
    argparse.ArgumentParser(
        prog="coder-agent config", description="Print the effective settings and where each came from."
    ).parse_args(argv)
    try:
        settings, environ = _load()
    except SettingsError as exc:
        print(f"coder-agent config: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(config_text(settings, environ))
    return 1 if settings.problems else 0


def rules_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coder-agent rules",
        description="The lasting permission rules (rules.toml in your config folder): list them, or remove some.",
    )
    actions = parser.add_subparsers(dest="action")
    actions.add_parser("list", help="list the rules, numbered (the default)")
    remove = actions.add_parser("remove", help="remove rules by number")
    remove.add_argument("numbers", nargs="+", type=int, metavar="N")
    return parser


def rules_main(argv: list[str]) -> int:
    args = rules_parser().parse_args(argv)
    try:
        settings, _ = _load()
    except SettingsError as exc:
        print(f"coder-agent rules: {exc}", file=sys.stderr)
        return 1
    assert settings.config_dir is not None
    book = RuleFile(settings.config_dir)
    if args.action == "remove":
        try:
            removed = book.remove(set(args.numbers))
        except (ValueError, OSError) as exc:
            print(f"coder-agent rules: {exc}", file=sys.stderr)
            return 1
        for rule in removed:
            print(f"removed: {rule.describe()}")
        return 0
    loaded = book.load()
    if not loaded.rules:
        print(f"No rules in {book.path}.")
    else:
        print(f"Rules in {book.path}:")
        for number, rule in enumerate(loaded.rules, 1):
            print(f"  {number}. {rule.describe()}")
    for problem in loaded.problems:
        print(f"PROBLEM: {problem}")
    return 1 if loaded.problems else 0
