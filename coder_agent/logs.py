"""Logging to stderr and to a log file under the agent's home. Never to stdout."""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def setup_logging(level: str, log_dir: Path | None) -> Path | None:
    """Configure the root logger; returns the log file's path, or None when it could not be opened."""
    root = logging.getLogger()
    root.setLevel(level)
    stderr = logging.StreamHandler(sys.__stderr__)
    stderr.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(stderr)
    if log_dir is None:
        return None
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        path = log_dir / "coder-agent.log"
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=5_000_000, backupCount=3, delay=True)
    except OSError as exc:
        logging.getLogger(__name__).warning("no log file (%s); logging to stderr only", exc)
        return None
    handler.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(handler)
    return path
