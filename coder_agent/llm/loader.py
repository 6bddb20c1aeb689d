"""Loading litellm lazily: it takes ~1.7 s and ~175 MB, so it stays off the path to `initialize`.

`load_litellm()` runs in the background once a session exists. In worker threads, never on the event
loop, it first readies the direct path (httpx and litellm's price map, ~200 ms), then imports litellm and
runs its first call against a local canned responder (`warmup.py`), so nothing is left to load when the
agent's first call goes through it. Until `ready()`, calls the direct path can serve go there (see
`fast_start.py`).
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from types import ModuleType

import anyio

from . import http_client
from .warmup import warm_calls
from .wire import price_map

log = logging.getLogger(__name__)

_lock = threading.Lock()
_warm_lock = threading.Lock()
_litellm: ModuleType | None = None
_warm = False

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
                # litellm counts prompt tokens (loading a tokenizer, ~1.5 s the first time) to price a stream
                # before its usage arrives; we price from the usage the provider sends.
                setattr(module, "disable_token_counter", True)  # noqa: B010
                logging.getLogger("LiteLLM").setLevel(logging.WARNING)
                _litellm = module
                log.debug("litellm %s imported", getattr(module, "__version__", "?"))
    return _litellm


def warm_litellm() -> None:
    """Run litellm's first call off the event loop, so the agent's first call through it is warm (idempotent)."""
    global _warm
    if _warm:
        return
    module = import_litellm()
    with _warm_lock:
        if not _warm:
            warm_calls(module)
            _warm = True


def prepare_direct() -> None:
    """Ready the direct path: httpx and its client, litellm's price map (blocking: call it in a worker thread)."""
    price_map.load()
    http_client.prepare()


def ready() -> bool:
    """Whether litellm is imported and warm: from then on every call goes through it."""
    return _warm


async def load_litellm() -> ModuleType:
    """The litellm module, loaded and warmed in worker threads if needed (never blocks the event loop)."""
    if _litellm is not None and _warm:
        return _litellm
    await anyio.to_thread.run_sync(prepare_direct, abandon_on_cancel=True)
    module = await anyio.to_thread.run_sync(import_litellm, abandon_on_cancel=True)
    await anyio.to_thread.run_sync(warm_litellm, abandon_on_cancel=True)
    return module
