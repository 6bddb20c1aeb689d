"""Wire method -> params model -> handler. Validation errors become -32602 here, and only here."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import RequestError
from .schema import Wire

log = logging.getLogger(__name__)

P = TypeVar("P", bound=BaseModel)


@dataclass(frozen=True)
class _Route:
    model: type[BaseModel]
    handler: Callable[[Any], Awaitable[Any]]


def _validation_detail(exc: ValidationError) -> list[dict[str, Any]]:
    return [
        {"loc": list(err["loc"]), "msg": err["msg"], "type": err["type"]}
        for err in exc.errors(include_url=False, include_input=False, include_context=False)
    ]


def _validation_message(method: str, exc: ValidationError) -> str:
    first = exc.errors(include_url=False, include_input=False, include_context=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "params"
    return f"Invalid params for {method}: {where}: {first['msg']}"


class Router:
    """Routes incoming JSON-RPC messages to typed handlers; it is the connection's `Dispatcher`."""

    def __init__(self) -> None:
        self._requests: dict[str, _Route] = {}
        self._notifications: dict[str, _Route] = {}
        # Called with each request's method before it is handled; it may refuse it by raising `RequestError`.
        self.before_request: Callable[[str], None] | None = None

    def on_request(self, method: str, model: type[P], handler: Callable[[P], Awaitable[Any]]) -> None:
        self._requests[method] = _Route(model, handler)

    def on_notification(self, method: str, model: type[P], handler: Callable[[P], Awaitable[None]]) -> None:
        self._notifications[method] = _Route(model, handler)

    def _parse(self, method: str, route: _Route, params: Any) -> BaseModel:
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise RequestError.invalid_params(f"Invalid params for {method}: params must be an object")
        try:
            return route.model.model_validate(params)
        except ValidationError as exc:
            raise RequestError.invalid_params(_validation_message(method, exc), _validation_detail(exc)) from exc

    async def handle_request(self, method: str, params: Any) -> Any:
        route = self._requests.get(method)
        if route is None:
            raise RequestError.method_not_found(method)
        parsed = self._parse(method, route, params)
        if self.before_request is not None:
            self.before_request(method)
        result = await route.handler(parsed)
        if isinstance(result, Wire):
            return result.wire()
        return result

    async def handle_notification(self, method: str, params: Any) -> None:
        route = self._notifications.get(method)
        if route is None:
            log.debug("ignoring unknown notification %s", method)
            return
        try:
            parsed = self._parse(method, route, params)
        except RequestError as exc:
            log.warning("ignoring notification %s: %s", method, exc.message)
            return
        await route.handler(parsed)
