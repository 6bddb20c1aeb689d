"""Importing litellm lazily: it takes ~1.7 s and ~175 MB, so it stays off the path to `initialize`."""

from __future__ import annotations

import importlib
import logging
import os
import threading
from types import ModuleType

import anyio

log = logging.getLogger(__name__)

_lock = threading.Lock()
_litellm: ModuleType | None = None

# Without these, importing litellm fetches its price map (and later beta headers, tokenizers) from the internet.
OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "HF_HUB_OFFLINE": "1",
}


def import_litellm() -> ModuleType:
    """Import and configure litellm once (thread-safe)."""
    global _litellm
    if _litellm is None:
        with _lock:
            if _litellm is None:
                for key, value in OFFLINE_ENV.items():
                    os.environ.setdefault(key, value)
                module = importlib.import_module("litellm")
                setattr(module, "suppress_debug_info", True)  # noqa: B010 (else it prints to stdout)
                setattr(module, "drop_params", True)  # noqa: B010
                logging.getLogger("LiteLLM").setLevel(logging.WARNING)
                _litellm = module
                log.debug("litellm %s imported", getattr(module, "__version__", "?"))
    return _litellm


async def load_litellm() -> ModuleType:
    """The litellm module, importing it in a worker thread if needed (never blocks the event loop)."""
    if _litellm is not None:
        return _litellm
    return await anyio.to_thread.run_sync(import_litellm, abandon_on_cancel=True)
