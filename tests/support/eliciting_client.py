"""An editor that offers elicitation (`elicitation: {form, url}`) and answers each `elicitation/create` by a policy.

The SDK (0.12.1) routes `elicitation/create` and `elicitation/complete` to a client only when its connection is
made with `use_unstable_protocol` (its schema predates their stabilisation): `use_unstable_protocol` says so to
`inproc_agent` and `spawn_agent`. The SDK validates each request against its own models before the policy sees it,
so a request the SDK cannot read fails there, as it would in an editor built on it.

A policy gets the request (`Elicitation`) and returns the answer as raw JSON: a well-formed one (`accept_first`,
`decline`, `cancel`, `accept_with`) or anything else, to play a client that answers nonsense.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from acp.schema import (
    ClientCapabilities,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    ElicitationUrlCapabilities,
)

from .recording_client import PermissionPolicy, RecordingClient


@dataclass(frozen=True)
class Elicitation:
    message: str
    mode: str  # "form" | "url"
    params: dict[str, Any]  # the SDK's parsed mode, as wire JSON: sessionId/toolCallId/requestId, requestedSchema, url


Policy = Callable[[Elicitation], Any | Awaitable[Any]]


def first_choices(schema: dict[str, Any]) -> dict[str, Any]:
    """What a user who takes the first choice of every required field (and writes nothing else) submits."""
    content: dict[str, Any] = {}
    for name in schema.get("required") or []:
        field = schema["properties"][name]
        if field.get("oneOf"):
            content[name] = field["oneOf"][0]["const"]
        elif field.get("enum"):
            content[name] = field["enum"][0]
        elif field.get("type") == "array":
            items = field["items"]
            content[name] = [(items.get("anyOf") or [{"const": value} for value in items["enum"]])[0]["const"]]
        elif field.get("type") == "boolean":
            content[name] = True
        elif field.get("type") in ("number", "integer"):
            content[name] = field.get("minimum", 1)
        else:
            content[name] = "an answer"
    return content


def accept_first(request: Elicitation) -> dict[str, Any]:
    if request.mode == "url":
        return {"action": "accept"}
    return {"action": "accept", "content": first_choices(request.params["requestedSchema"])}


def accept_with(content: dict[str, Any]) -> Policy:
    return lambda request: {"action": "accept", "content": content}


def decline(request: Elicitation) -> dict[str, Any]:
    return {"action": "decline"}


def cancel(request: Elicitation) -> dict[str, Any]:
    return {"action": "cancel"}


class ElicitingClient(RecordingClient):
    use_unstable_protocol = True

    def __init__(
        self,
        answer: Policy = accept_first,
        modes: Sequence[str] = ("form", "url"),
        permission: PermissionPolicy = "allow_once",
        auth_terminal: bool = False,
    ) -> None:
        super().__init__(permission)
        self.answer = answer
        self.elicitations: list[Elicitation] = []
        self.completed: list[str] = []
        self.capabilities = ClientCapabilities(
            elicitation=ElicitationCapabilities(
                form=ElicitationFormCapabilities() if "form" in modes else None,
                url=ElicitationUrlCapabilities() if "url" in modes else None,
            )
        )
        if auth_terminal:
            self.capabilities.auth.terminal = True

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        params = mode.model_dump(mode="json", by_alias=True, exclude_none=True)
        request = Elicitation(message, "url" if "url" in params else "form", params)
        self.elicitations.append(request)
        self._notify()
        answer = self.answer(request)
        if isinstance(answer, Awaitable):
            answer = await answer
        return answer

    async def complete_elicitation(self, elicitation_id: str, **kwargs: Any) -> None:
        self.completed.append(elicitation_id)
        self._notify()

    async def wait_for_elicitation(self, count: int = 1, timeout: float = 10.0) -> Elicitation:
        await self.wait_for(lambda: len(self.elicitations) >= count, timeout)
        return self.elicitations[count - 1]


async def never(request: Elicitation) -> Any:
    """A user who never answers: the request stays open until the agent withdraws it."""
    await anyio.sleep_forever()
