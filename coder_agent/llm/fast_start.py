"""The model the agent uses: direct while litellm loads, litellm once it is ready.

Each call picks its path when it starts and keeps it to the end (retries included): the direct path
(`DirectModel`) when litellm is not loaded yet (or the early first call waits to be taken over) and the
call is one we send exactly as litellm would, else litellm (waiting for it to load if needed). Both paths
give the same events, errors and usage.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import aclosing
from typing import Any

import anyio

from ..prestart import early_call
from . import loader
from .base import ModelEvent
from .direct_model import DirectModel, discard_early
from .litellm_model import LiteLLMModel
from .messages import ChatMessage
from .responses_model import responses_model_for
from .wire import price_map
from .wire.anthropic_request import NeedsLiteLLM
from .wire.config import ModelConfig
from .wire.routes import direct_route

log = logging.getLogger(__name__)


class FastStartModel:
    def __init__(self, config: ModelConfig, litellm_ready: Callable[[], bool] = loader.ready) -> None:
        self.config = config
        self.name = config.model
        self._litellm = LiteLLMModel(config)
        self._litellm_ready = litellm_ready

    async def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]] = ()
    ) -> AsyncGenerator[ModelEvent, None]:
        # GPT-5 and o-series models speak the Responses API for the whole session, never litellm (issue 23).
        responses = await responses_model_for(self.config)
        direct = None if responses is not None else await self.direct(messages, tools)
        if responses is None and direct is None and early_call.pending():
            discard_early(f"{self.config.model} goes through litellm")
        if responses is not None:
            events = responses.stream(messages, tools)
        elif direct is None:
            events = self._litellm.stream(messages, tools)
        else:
            model, request = direct
            log.debug("%s: direct to %s while litellm loads", self.config.model, model.route.url)
            events = model.stream_request(request)
        async with aclosing(events) as stream:
            async for event in stream:
                yield event

    async def direct(
        self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]]
    ) -> tuple[DirectModel, dict[str, Any]] | None:
        """The direct path and the body it would send, or None when this call goes through litellm.

        While the early first call (`early_call`) waits to be taken over, the direct path is asked even with
        litellm loaded: it is the one that can take it over."""
        if self._litellm_ready() and not early_call.pending():
            return None
        prices = price_map.loaded() or await anyio.to_thread.run_sync(price_map.load, abandon_on_cancel=True)
        route = direct_route(self.config, prices, os.environ) if prices is not None else None
        if route is None or prices is None:
            return None
        model = DirectModel(self.config, route, prices)
        try:
            return model, model.request(messages, tools)
        except NeedsLiteLLM as exc:
            log.debug("%s goes through litellm: %s", self.config.model, exc)
            return None
