"""The session a model call is made for, as the prompt cache key providers take (OpenAI's `prompt_cache_key`).

OpenAI routes requests with the same key and prefix to the same cache, so a session's calls should share one
key and different sessions should not crowd one. Models are made per turn from the model string alone
(`agent.prompting.ModelFactory`), so the turn names its session here for the calls made within it, compaction's
included (a context variable: it follows the turn's task and the tasks it starts, and nothing else).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_session: ContextVar[str | None] = ContextVar("coder_agent_cache_key", default=None)


@contextmanager
def for_session(session_id: str) -> Iterator[None]:
    """The model calls made inside are made for this session."""
    token = _session.set(session_id)
    try:
        yield
    finally:
        _session.reset(token)


def current() -> str | None:
    """The key for a call made now: the id of the session it is made for, or None."""
    return _session.get()
