"""The `.env` in the folder the agent starts in: never read for settings or keys (it may be someone else's
repository), only looked at to warn the user that the variables it names are ignored."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

from ..kit.credentials import is_agent_variable
from ..kit.untrusted import Refused, read_capped
from .sources import DOTENV, parse_dotenv, user_dotenv_files
from .userfiles import config_dir

log = logging.getLogger(__name__)

MAX_WORKSPACE_DOTENV_BYTES = 1024 * 1024  # a workspace .env is only looked at to warn: read no more


def workspace_dotenv_warning(start: Path, environ: Mapping[str, str]) -> str | None:
    """What to tell the user when the folder the agent starts in has a `.env` naming our settings or keys.

    That file is never read for settings or credentials (see the module's docstring). Only variable names are
    quoted, never values; a file that is one of the user's own trusted files gets no warning. It is looked at
    only if it is a regular file inside `start` once links are followed (`.env -> ~/elsewhere` is someone
    else's choice of file), and only its first `MAX_WORKSPACE_DOTENV_BYTES`; one that is not is said to be so.
    """
    path = start / DOTENV
    try:
        if path.is_dir() or any(path.samefile(own) for own in user_dotenv_files(environ) if own.exists()):
            return None  # a folder (a virtualenv called .env), or the user's own file
        text = read_capped(str(path), MAX_WORKSPACE_DOTENV_BYTES, [str(start)]).data.decode("utf-8", "replace")
    except Refused as exc:
        return (
            f"not looking at {path}: {exc.reason}. Settings and keys are never read from the folder the agent "
            f"starts in (it may be someone else's repository): put them in {config_dir(environ) / DOTENV} or in "
            "the editor's agent configuration (env)."
        )
    except OSError:
        return None
    names = sorted(name for name in parse_dotenv(text) if is_agent_variable(name))
    if not names:
        return None
    return (
        f"ignoring {', '.join(names)} in {path}: settings and keys are never read from the folder the agent "
        f"starts in (it may be someone else's repository). Put them in {config_dir(environ) / DOTENV} or in the "
        "editor's agent configuration (env)."
    )


def warn_about_workspace_dotenv(start: Path | None = None, environ: Mapping[str, str] | None = None) -> None:
    """Log `workspace_dotenv_warning` for the current folder (once logging is set up), if there is one."""
    message = workspace_dotenv_warning(
        Path.cwd() if start is None else start, os.environ if environ is None else environ
    )
    if message is not None:
        log.warning("%s", message)
