"""Asking the user through the client (`elicitation/create`), and an answer the caller can trust.

Shared by the `ask_user` tool and the questions MCP servers ask during their tools' calls (`mcp/elicitation.py`).
Whatever the client does, the caller gets one of three actions: `accept` with content that fits the form sent
(the form's fields only), `decline`, or `cancel`. An answer that does not fit the form, an action this agent does
not know, or a client that fails the request count as `decline`, and `problem` says why in words the model and
the user can read. Cancelling the caller (`session/cancel`) withdraws the question: the connection sends
`$/cancel_request` for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ...acp.schema import CreateElicitationRequest
from ..client import Client
from ..errors import ClientError

Action = Literal["accept", "decline", "cancel"]


@dataclass(frozen=True)
class Answer:
    action: Action
    content: dict[str, Any] = field(default_factory=dict)  # the form's fields the user filled in
    problem: str | None = None  # why it counts as declined: the answer did not fit, or the client failed


async def ask(client: Client, request: CreateElicitationRequest) -> Answer:
    """Ask in the request's mode, which the client must offer (`Client.elicitation_modes`)."""
    try:
        response = await client.create_elicitation(request)
    except ClientError as exc:  # an error of the client's, a malformed answer, no answer in time
        return Answer("decline", problem=f"the question could not be asked: {exc.message}")
    action = response.action
    if action == "decline":
        return Answer("decline")
    if action == "cancel":
        return Answer("cancel")
    if action != "accept":
        return Answer("decline", problem=f"the client answered with an action this agent does not know ({action!r})")
    if request.requested_schema is None:  # a URL: accepting is the user's consent to open it
        return Answer("accept")
    content, problems = request.requested_schema.check(response.content)
    if problems:
        return Answer("decline", problem="the answer did not fit the form: " + "; ".join(problems))
    return Answer("accept", content)
