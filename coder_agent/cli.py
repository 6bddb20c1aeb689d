"""Command-line entry points: `coder-agent acp` (and, later, `run` and `sessions`)."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from . import __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="coder-agent", description="A coding agent for ACP editors.")
    parser.add_argument("--version", action="version", version=f"coder-agent {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("acp", help="speak the Agent Client Protocol on stdio (editors launch this)")
    return parser


def _run_acp() -> int:
    # First thing: the protocol gets a private copy of stdout, and fd 1 goes to stderr for everyone else.
    from .acp.stdio import reserve_stdout

    protocol_fd = reserve_stdout()
    from .llm.loader import OFFLINE_ENV

    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)

    import anyio

    from .logs import setup_logging
    from .server import serve_stdio
    from .settings import Settings, SettingsError

    try:
        settings = Settings.load()
    except SettingsError as exc:
        sys.stderr.write(f"coder-agent: {exc}\n")
        return 2
    log_file = setup_logging(settings.log_level, settings.log_dir)
    log = logging.getLogger("coder_agent")
    log.info("coder-agent %s speaking ACP on stdio (model %s, log %s)", __version__, settings.model, log_file)
    try:
        anyio.run(serve_stdio, settings, 0, protocol_fd)
    except KeyboardInterrupt:
        pass
    log.info("input closed; exiting")
    return 0


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    if args.command == "acp":
        code = _run_acp()
        logging.shutdown()
        sys.stderr.flush()
        # Skip interpreter teardown (~0.5 s once litellm is loaded) and any worker thread still importing.
        os._exit(code)
