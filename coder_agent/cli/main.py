"""`coder-agent`: which command runs. `acp` (the editor's path) goes first, with nothing heavy before it; every
other command is a module of this folder: `run`, `serve`, `sessions`, `login`, `logout`, `config`, `doctor`, `rules`."""

from __future__ import annotations

import os
import sys

from .. import __version__


def _parser() -> object:
    import argparse

    parser = argparse.ArgumentParser(
        prog="coder-agent",
        description="A coding agent for ACP editors.",
        epilog="`coder-agent acp --help` lists every setting and where the config and log files are.",
    )
    parser.add_argument("--version", action="version", version=f"coder-agent {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    acp_help = "speak the Agent Client Protocol on stdio: editors launch this (its settings: acp --help)"
    commands.add_parser("acp", help=acp_help, add_help=False)
    commands.add_parser("run", help="run the agent on one prompt, headless (coder-agent run --help)", add_help=False)
    serve_help = "serve remote ACP clients over WebSocket and HTTP (coder-agent serve --help)"
    commands.add_parser("serve", help=serve_help, add_help=False)
    commands.add_parser("sessions", help="list, show, export or delete saved sessions (see `sessions --help`)")
    commands.add_parser("login", help="choose a model provider and save its key, or point at a local server")
    commands.add_parser("logout", help="forget the keys `login` saved")
    commands.add_parser("config", help="print the effective settings and where each came from")
    commands.add_parser("doctor", help="check the model, its key and your MCP servers, and say what to fix")
    commands.add_parser("rules", help="list or remove the lasting permission rules")
    return parser


# Subcommands that own their arguments: name -> (module, function). `acp login` is the login an editor runs
# when it appends the terminal auth method's args to `coder-agent acp`.
SUBCOMMANDS = {
    "login": ("login", "login_main"),
    "logout": ("login", "logout_main"),
    "config": ("config", "config_main"),
    "rules": ("config", "rules_main"),
    "doctor": ("doctor", "main"),
    "sessions": ("sessions", "main"),
}


SUPPORTED = "Linux and macOS"


def platform_problem(name: str = os.name, platform: str = sys.platform) -> str | None:
    """Why the agent cannot run here, or None: it runs commands through `/bin/sh` in process groups (`os.killpg`,
    `start_new_session`), which only POSIX systems have. Said at once rather than failing at the first command."""
    if name == "posix":
        return None
    return (
        f"coder-agent runs on {SUPPORTED} (it runs commands through /bin/sh in process groups); this is {platform}. "
        "On Windows, run it inside WSL."
    )


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    problem = platform_problem()
    if problem is not None:
        sys.stderr.write(f"coder-agent: {problem}\n")
        sys.exit(1)
    if args == ["acp"]:
        # The editor's path: no argparse, nothing heavy before `initialize` is answered.
        from .acp import run_acp

        code = run_acp()
        sys.stderr.flush()
        # Skip interpreter teardown (~0.5 s once litellm is loaded) and any worker thread still importing.
        os._exit(code)
    if args[:2] == ["acp", "login"]:
        args = args[1:]
    if args and args[0] in SUBCOMMANDS:
        import importlib

        from ..kit.logs import mask_records
        from ..kit.masking import masked_stdio

        module, function = SUBCOMMANDS[args[0]]
        mask_records()
        with masked_stdio():  # the command's output, and anything a library prints: no known secret in it
            code = getattr(importlib.import_module(f"{__package__}.{module}"), function)(args[1:])
        sys.exit(code)
    if args[:1] == ["acp"]:  # `acp --help`; any other argument is a usage error (exit 2)
        from .acp_help import acp_parser

        acp_parser().parse_args(args[1:])
        main(["acp"])  # `acp --`: serve, and exit
    if args[:1] == ["run"]:
        from .run import main as run_main

        code = run_main(args[1:])
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError:
                pass
        # Skip interpreter teardown (seconds on a busy machine once litellm is loaded).
        os._exit(code)
    if args[:1] == ["serve"]:
        from ..kit.masking import masked_stdio
        from .serve import main as serve_main  # Starlette and uvicorn are imported by this path only

        with masked_stdio():
            code = serve_main(args[1:])
        sys.stderr.flush()
        os._exit(code)  # skip interpreter teardown, as `run` does
    import argparse

    parser = _parser()
    assert isinstance(parser, argparse.ArgumentParser)
    parser.parse_args(args)
