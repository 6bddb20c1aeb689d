"""The retry rule every model call follows: retry transient failures while nothing has been shown."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing

import anyio

from .base import ModelError, ModelEvent, ReasoningDelta, TextDelta
from .errors import after_shown, retry_after_seconds
from .wire.config import RetryPolicy

log = logging.getLogger(__name__)


async def with_retries(
    attempt: Callable[[], AsyncGenerator[ModelEvent, None]],
    classify: Callable[[BaseException], ModelError],
    policy: RetryPolicy,
) -> AsyncGenerator[ModelEvent, None]:
    """The events of the first attempt that succeeds.

    Only text or reasoning the user was shown stops a retry (a retry would show it twice); a tool call
    that has begun is not shown, so a stream that breaks after one is retried like any other.
    """
    retries = 0
    while True:
        shown = False
        try:
            async with aclosing(attempt()) as events:
                async for event in events:
                    if not shown and isinstance(event, TextDelta | ReasoningDelta):
                        shown = True
                    yield event
            return
        except ModelError:
            raise
        except Exception as exc:
            error = classify(exc)
            if shown:
                raise after_shown(error) from exc
            if not error.retryable or retries >= policy.max_retries:
                if retries:
                    message = f"{error.message} (gave up after {retries + 1} attempts)"
                    error = ModelError(message, retryable=error.retryable, status=error.status)
                raise error from exc
            delay = min(policy.base_delay * 2**retries, policy.max_delay)
            delay = max(delay, min(retry_after_seconds(exc) or 0.0, policy.max_delay))
            retries += 1
            log.warning("model call failed (%s: %s); retry %d in %.2f s", error.message, exc, retries, delay)
            await anyio.sleep(delay)
