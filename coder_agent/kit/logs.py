"""Logging to stderr and to a log file under the agent's home. Never to stdout.

The log file holds prompts and code: it and its rotations are 600, the folders 700 (see `private`). No record
holds a secret the agent knows (`mask_records`).
"""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
import sys
from pathlib import Path
from typing import Any

from .masking import mask
from .private import open_private, private_folder, tighten

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LOG_FILE = "coder-agent.log"
MAX_BYTES = 5_000_000
BACKUPS = 3


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log file created 600: rotation renames files (keeping the mode) and opens a new one here."""

    def _open(self) -> io.TextIOWrapper:
        fd = open_private(Path(self.baseFilename), os.O_WRONLY | os.O_APPEND)
        return open(fd, "a", encoding=self.encoding, errors=self.errors)  # the handler closes it


def mask_records() -> None:
    """Mask the known secrets (`masking`) in every log record made from now on: its message with its arguments,
    its traceback and its stack. At the making of the record, not in a handler's filter or formatter, so that it
    holds whichever logger makes it (ours, litellm's, httpx's, uvicorn's) and whichever handler writes it (ours,
    the handler litellm puts on its own loggers, logging's last resort). Idempotent."""
    make = logging.getLogRecordFactory()
    if getattr(make, "masks", False):
        return

    def masked_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a bad format: logging reports it when a handler formats the record
            return record
        shown = mask(message)
        if shown != message:  # else the record stays as made (a formatter may read its arguments)
            record.msg, record.args = shown, None
        if record.exc_info and not record.exc_text:  # formatters use `exc_text` when it is there
            record.exc_text = mask(logging.Formatter().formatException(record.exc_info))
        if record.stack_info:
            record.stack_info = mask(record.stack_info)
        return record

    masked_record.masks = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(masked_record)


def setup_logging(level: str, log_dir: Path | None) -> Path | None:
    """Configure the root logger; returns the log file's path, or None when it could not be opened.

    `log_dir` is the `logs` folder inside the agent's data folder: both folders are made private.
    """
    mask_records()
    root = logging.getLogger()
    root.setLevel(level)
    stderr = logging.StreamHandler(sys.__stderr__)
    stderr.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(stderr)
    if log_dir is None:
        return None
    try:
        private_folder(log_dir.parent)
        private_folder(log_dir)
        path = log_dir / LOG_FILE
        for rotated in (path, *(path.with_name(f"{LOG_FILE}.{n}") for n in range(1, BACKUPS + 1))):
            tighten(rotated)  # files an older version left readable by all
        handler = PrivateRotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, delay=True)
    except OSError as exc:
        logging.getLogger(__name__).warning("no log file (%s); logging to stderr only", exc)
        return None
    handler.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(handler)
    return path
