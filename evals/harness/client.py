"""The harness as an ACP client: answers the agent's requests and watches its session updates.

Profiles:

- `editor` advertises `fs.readTextFile`, `fs.writeTextFile` and `terminal`, and serves them (confined to
  the trial's workspace, see `fs` and `terminals`);
- `bare` advertises nothing: a call to fs/* or terminal/* is a protocol violation (and gets -32601).

Permission requests are answered by policy: `allow` picks an allow_once option, `reject` a reject_once one;
once the harness has cancelled the turn, every request is answered `cancelled`, as ACP asks of clients.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from coder_agent.acp.errors import RequestError

from .fs import FileService
from .terminals import TerminalService

Profile = Literal["editor", "bare"]
PermissionPolicy = Literal["allow", "reject"]
PROFILES: tuple[Profile, ...] = ("editor", "bare")

_WANTED_KINDS = {"allow": ("allow_once", "allow_always"), "reject": ("reject_once", "reject_always")}


def client_capabilities(profile: Profile) -> dict[str, Any]:
    if profile == "editor":
        return {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
    return {}


@dataclass
class Observations:
    """What the client saw of one trial's session."""

    tool_calls: int = 0
    model_requests: int = 0  # one usage_update per model call
    tokens: int = 0  # the sum of usage_update.used over model calls
    # The split coder-agent reports per call in usage_update._meta["coder-agent"].usage, summed (None: not reported)
    input_tokens: int | None = None  # prompt tokens, cached or not
    cached_tokens: int | None = None  # of those, read from the provider's cache
    output_tokens: int | None = None
    cost_usd: float | None = None
    permission_requests: int = 0
    answer_parts: list[str] = field(default_factory=list)  # the latest agent message, since the last tool call
    plan: list[dict[str, Any]] | None = None
    protocol_violations: list[str] = field(default_factory=list)

    @property
    def answer(self) -> str:
        return "".join(self.answer_parts)


def _agents_own_note(update: dict[str, Any]) -> bool:
    """A message coder-agent writes itself (the files a turn changed), marked in `_meta`: not the model's answer."""
    meta = update.get("_meta")
    ours = meta.get("coder-agent") if isinstance(meta, dict) else None
    return isinstance(ours, dict) and "note" in ours


class EvalClient:
    """The `Dispatcher` for the harness's `Connection`."""

    def __init__(
        self,
        profile: Profile,
        permission: PermissionPolicy,
        files: FileService,
        terminals: TerminalService,
        on_cost: Callable[[float], None],
    ) -> None:
        self.profile = profile
        self.permission = permission
        self.files = files
        self.terminals = terminals
        self.seen = Observations()
        self.cancelling = False
        self._on_cost = on_cost
        self._message_id: str | None = None
        self._served = {
            "fs/read_text_file": files.read_text_file,
            "fs/write_text_file": files.write_text_file,
            "terminal/create": terminals.create,
            "terminal/output": terminals.output,
            "terminal/wait_for_exit": terminals.wait_for_exit,
            "terminal/kill": terminals.kill,
            "terminal/release": terminals.release,
        }

    def _add_split(self, update: dict[str, Any]) -> None:
        meta = update.get("_meta")
        ours = meta.get("coder-agent") if isinstance(meta, dict) else None
        usage = ours.get("usage") if isinstance(ours, dict) else None
        if not isinstance(usage, dict):
            return
        seen = self.seen
        seen.input_tokens = (seen.input_tokens or 0) + int(usage.get("inputTokens") or 0)
        seen.cached_tokens = (seen.cached_tokens or 0) + int(usage.get("cachedReadTokens") or 0)
        seen.output_tokens = (seen.output_tokens or 0) + int(usage.get("outputTokens") or 0)

    def new_turn(self) -> None:
        self.cancelling = False
        self.seen.answer_parts = []
        self._message_id = None

    async def handle_request(self, method: str, params: Any) -> Any:
        if method == "session/request_permission":
            return self._permission(params)
        handler = self._served.get(method)
        if handler is None:
            raise RequestError.method_not_found(method)
        if self.profile == "bare":
            self.seen.protocol_violations.append(f"agent called {method}, which the bare client did not advertise")
            raise RequestError.method_not_found(method)
        try:
            return await handler(params)
        except ValidationError as exc:
            raise RequestError.invalid_params(f"Invalid params: {exc.errors(include_url=False)}") from exc

    def _permission(self, params: Any) -> dict[str, Any]:
        self.seen.permission_requests += 1
        options = params.get("options", []) if isinstance(params, dict) else []
        if not self.cancelling:
            for kind in _WANTED_KINDS[self.permission]:
                chosen = next((o["optionId"] for o in options if isinstance(o, dict) and o.get("kind") == kind), None)
                if chosen is not None:
                    return {"outcome": {"outcome": "selected", "optionId": chosen}}
        return {"outcome": {"outcome": "cancelled"}}

    async def handle_notification(self, method: str, params: Any) -> None:
        if method != "session/update" or not isinstance(params, dict):
            return
        update = params.get("update")
        if not isinstance(update, dict):
            return
        kind = update.get("sessionUpdate")
        if kind == "tool_call":
            self.seen.tool_calls += 1
            self.seen.answer_parts = []
        elif kind == "agent_message_chunk":
            if _agents_own_note(update):
                return
            content = update.get("content") or {}
            message_id = update.get("messageId")
            if message_id is not None and message_id != self._message_id:
                self._message_id = message_id
                self.seen.answer_parts = []
            if content.get("type") == "text":
                self.seen.answer_parts.append(str(content.get("text", "")))
        elif kind == "plan":
            self.seen.plan = list(update.get("entries") or [])
        elif kind == "usage_update":
            self.seen.model_requests += 1
            self.seen.tokens += int(update.get("used") or 0)
            self._add_split(update)
            cost = update.get("cost")
            if isinstance(cost, dict) and isinstance(cost.get("amount"), int | float):
                self.seen.cost_usd = float(cost["amount"])
                self._on_cost(self.seen.cost_usd)
