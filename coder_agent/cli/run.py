"""`coder-agent run`: the agent on one prompt, headless, in this process, with live output on the terminal.

Exit codes: 0 end_turn, 1 error, 2 usage error, 3 max_turn_requests, 4 refusal, 5 max_tokens, 130 cancelled.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..acp.schema import StopReason
from ..agent.permissions.gate import MODE_IDS
from ..kit.masking import masked_stdio

if TYPE_CHECKING:
    from ..config.settings import Settings

log = logging.getLogger(__name__)

EXIT_CODES: dict[StopReason, int] = {
    "end_turn": 0,
    "max_turn_requests": 3,
    "refusal": 4,
    "max_tokens": 5,
    "cancelled": 130,
}
EXIT_ERROR = 1
EXIT_USAGE = 2


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coder-agent run",
        description="Run the agent on one prompt, in this terminal, and show what it does. "
        "Exit codes: 0 end_turn, 1 error, 2 usage, 3 max_turn_requests, 4 refusal, 5 max_tokens, 130 cancelled.",
        epilog='Examples: coder-agent run "fix the failing test"; coder-agent run -p "..." --yes; '
        "coder-agent run task.md --json; coder-agent run - < task.md; coder-agent run -c 'and now?'",
    )
    parser.add_argument(
        "prompt_arg",
        nargs="?",
        metavar="PROMPT",
        help="the prompt itself, or a file holding it, or - for stdin (without it, a piped stdin is the prompt)",
    )
    parser.add_argument("-p", "--prompt", metavar="TEXT", help="the prompt itself (never read as a file name)")
    parser.add_argument(
        "--image", action="append", default=[], metavar="FILE", help="attach an image (PNG, JPEG, GIF or WebP)"
    )
    parser.add_argument("--cwd", metavar="DIR", help="the project folder the agent works in (default: this one)")
    parser.add_argument("--model", metavar="MODEL", help="litellm model string (overrides CODER_AGENT_MODEL)")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument(
        "--mode",
        choices=MODE_IDS,
        help="permission mode (default: CODER_AGENT_DEFAULT_MODE when set, else accept-edits)",
    )
    modes.add_argument("--yes", action="store_true", help="bypass mode: every edit and command runs unasked")
    modes.add_argument("--read-only", action="store_true", help="plan mode: no edits, no commands")
    parser.add_argument("--max-turn-requests", type=_positive, metavar="N", help="model calls before the turn stops")
    sessions = parser.add_mutually_exclusive_group()
    sessions.add_argument(
        "-c", "--continue", dest="continue_last", action="store_true", help="continue the last session of this folder"
    )
    sessions.add_argument(
        "--resume",
        "--session",
        dest="session",
        metavar="ID",
        help="continue a stored session: its id, the start of it, or `last` (this folder's last session)",
    )
    parser.add_argument(
        "--json", action="store_true", help="one JSON object per line on stdout: init, the updates, then a result"
    )
    parser.add_argument(
        "--mcp-config",
        action="append",
        default=[],
        metavar="FILE",
        help="MCP servers from FILE (.mcp.json format) besides your own mcp.json; naming a project's .mcp.json "
        "here approves it for this run",
    )
    return parser


def _mode(args: argparse.Namespace, settings: Settings) -> str:
    """The flags' mode; else the user's CODER_AGENT_DEFAULT_MODE when they set one; else accept-edits (a run the
    user started to change things should not stop at every edit)."""
    if args.yes:
        return "bypass"
    if args.read_only:
        return "plan"
    if args.mode:
        return str(args.mode)
    from ..config.settings import DEFAULT_SOURCE

    if settings.sources.get("default_mode", DEFAULT_SOURCE) != DEFAULT_SOURCE:
        return settings.default_mode
    return "accept-edits"


# What a word given as PROMPT must look like to be taken for a file name that is not there (a typo), rather
# than for a one-word prompt: a path, or a name with a suffix (`task.md`).
_FILE_LIKE = re.compile(r"\S*/\S*|[^\s/]+\.[A-Za-z0-9]{1,8}")


def _prompt(args: argparse.Namespace, usage: argparse.ArgumentParser) -> str:
    """The prompt: `-p TEXT`; PROMPT (`-` for stdin, a file, else the text itself); else a piped stdin."""
    given = args.prompt_arg
    if given is not None and args.prompt is not None:
        usage.error("give the prompt once: PROMPT or -p TEXT")
    if args.prompt is not None:
        text = str(args.prompt)
    elif given == "-" or (given is None and not sys.stdin.isatty()):
        text = sys.stdin.read()
    elif given is None:
        usage.error('give a prompt: coder-agent run "what to do" (or -p TEXT, a file, or - for stdin)')
    elif os.path.isfile(given):
        try:
            text = Path(given).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            usage.error(f"cannot read the prompt file {given}: {getattr(exc, 'strerror', None) or exc}")
    elif _FILE_LIKE.fullmatch(given):
        usage.error(f"no such prompt file: {given} (to give the prompt itself, use -p TEXT)")
    else:
        text = given
    if not text.strip():
        usage.error("the prompt is empty")
    return text


def _cwd(args: argparse.Namespace, usage: argparse.ArgumentParser) -> str:
    cwd = os.path.abspath(os.path.expanduser(args.cwd or os.getcwd()))
    if not os.path.isdir(cwd):
        usage.error(f"--cwd {args.cwd}: not a directory")
    return cwd


def main(argv: list[str]) -> int:
    """`coder-agent run ARGS`: `argv` is what follows `run`. Returns the exit code."""
    usage = parser()
    try:
        args = usage.parse_args(argv)
        prompt, cwd, images = _prompt(args, usage), _cwd(args, usage), _images(args, usage)
        with masked_stdio():  # the live view, the JSON lines, errors: no known secret in them
            return _run(args, prompt, cwd, images)
    except SystemExit as exc:  # argparse: --help, or a usage error (already explained on stderr)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    except KeyboardInterrupt:  # while reading the prompt, or before the run took Ctrl-C over
        return EXIT_CODES["cancelled"]


_IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
MAX_IMAGE_BYTES = 20 * 1024 * 1024  # read no more; the agent refuses what a provider would not take, and says why


def _images(args: argparse.Namespace, usage: argparse.ArgumentParser) -> list[tuple[str, bytes]]:
    """(MIME type, bytes) of each `--image` file."""
    images = []
    for name in args.image:
        kind = _IMAGE_TYPES.get(Path(name).suffix.lower())
        if kind is None:
            usage.error(f"--image {name}: not a PNG, JPEG, GIF or WebP file (by its name)")
        try:
            with open(name, "rb") as handle:
                data = handle.read(MAX_IMAGE_BYTES + 1)
        except OSError as exc:
            usage.error(f"--image {name}: {exc.strerror or exc}")
        if len(data) > MAX_IMAGE_BYTES:
            usage.error(f"--image {name}: larger than {MAX_IMAGE_BYTES // (1024 * 1024)} MB")
        images.append((kind, data))
    return images


def _run(args: argparse.Namespace, prompt: str, cwd: str, images: list[tuple[str, bytes]]) -> int:
    from ..llm.loader import OFFLINE_ENV

    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)

    import anyio
    from rich.console import Console

    from ..config.settings import SettingsError
    from ..config.workspace_dotenv import warn_about_workspace_dotenv
    from ..headless.output import JsonOutput, Output, RunResult
    from ..headless.permissions import RejectUnasked, TerminalAsk
    from ..headless.questions import TerminalQuestions
    from ..headless.render import RichOutput
    from ..headless.run import RunError, RunRequest, run_prompt
    from ..local.client import PermissionPolicy

    errors, terminal = Console(stderr=True, highlight=False), Console(highlight=False)
    for console in (errors, terminal):
        console.soft_wrap = not console.is_terminal  # a pipe or a file gets whole lines
    output: Output = JsonOutput() if args.json else RichOutput(terminal, errors, cwd)
    try:
        settings = _settings(args)
    except SettingsError as exc:
        output.error(str(exc))
        return EXIT_ERROR
    _quiet_logging(settings.log_level, settings.log_dir)
    warn_about_workspace_dotenv()
    for notice in settings.notices:  # an unknown setting, a config file in the old place: said, on stderr
        log.warning("%s", notice)

    interactive = not args.json and sys.stdin.isatty() and sys.stderr.isatty()
    permissions: PermissionPolicy = TerminalAsk(output, errors) if interactive else RejectUnasked(output)
    mode = _mode(args, settings)
    questions = None  # with --yes nobody is there to answer either: the agent is told it cannot ask
    if isinstance(permissions, TerminalAsk) and mode != "bypass":
        questions = TerminalQuestions(output, errors, permissions.reader, permissions.lock)
    resume = "last" if args.continue_last else args.session
    request = RunRequest(prompt=prompt, cwd=cwd, mode=mode, session_id=resume, model=args.model, images=images)
    started = time.monotonic()
    try:
        result = anyio.run(run_prompt, settings, request, output, permissions, questions)
    except RunError as exc:
        output.error(exc.message, exc.session_id)
        return EXIT_ERROR
    except KeyboardInterrupt:  # before the run took Ctrl-C over
        result = RunResult("cancelled", None, time.monotonic() - started)
    except Exception as exc:
        log.exception("coder-agent run failed")
        while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        output.error(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_ERROR
    output.result(result)
    return EXIT_CODES[result.stop_reason]


def _settings(args: argparse.Namespace) -> Settings:
    """The settings, with the command line's overrides; raises `SettingsError` when one is unusable."""
    from ..config.settings import Settings, SettingsError
    from ..llm.wire.usable import NO_MODEL_MESSAGE

    settings = Settings.load()
    overrides: dict[str, object] = {}
    if args.model:  # also offered as a choice, so that a continued session can switch to it
        overrides.update(model=args.model, models=[args.model, *settings.models])
    if args.max_turn_requests:
        overrides["max_turn_requests"] = args.max_turn_requests
    for name in args.mcp_config:
        if not os.path.isfile(name):
            raise SettingsError(f"--mcp-config {name}: no such file")
    if args.mcp_config:
        overrides["mcp_config"] = [*settings.mcp_config, *(os.path.abspath(name) for name in args.mcp_config)]
    settings = settings.model_copy(update=overrides)
    if settings.model is None and args.session is None and not args.continue_last:
        raise SettingsError(f"{NO_MODEL_MESSAGE} Or pass --model.")
    return settings


def _quiet_logging(level: str, log_dir: Path) -> None:
    """Everything to the log file; only warnings and errors to stderr, beside the run's own output."""
    from ..kit.logs import setup_logging

    setup_logging(level, log_dir)
    for handler in logging.getLogger().handlers:
        if type(handler) is logging.StreamHandler:
            handler.setLevel(logging.WARNING)
