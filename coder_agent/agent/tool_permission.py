"""Whether a tool call may run: what the permission gate says of it (the mode, the session's answers, the user's
lasting rules), and asking the user when it says to ask; the answers kept as the user chose them."""

from __future__ import annotations

import logging

from ..acp.schema import ToolCallFields
from .client import Client
from .errors import ClientError
from .permissions.gate import LASTING_SCOPE, SESSION_SCOPE, Decision, decide, permission_options
from .permissions.lasting_rules import Rule, RuleBook, decision_of, rule_for
from .sessions.session import Session
from .tools.base import Intent

log = logging.getLogger(__name__)


def decide_call(session: Session, tool: str, intent: Intent) -> Decision:
    """What the gate says of the call: the mode, the session's answers, the user's lasting rules."""
    book = session.rule_book
    lasting = None
    if book is not None:

        def lasting(name: str, what: Intent) -> bool | None:
            return decision_of(book.rules(), name, what, session.cwd)

    return decide(session.mode, tool, intent, session.rules, session.roots, lasting)


async def authorize(
    client: Client, session: Session, tool: str, intent: Intent, shown: ToolCallFields
) -> tuple[str, str] | None:
    """None when the call may run; else the refusal: (what the model reads, what the user sees)."""
    book = session.rule_book
    decision = decide_call(session, tool, intent)
    if decision.action == "allow":
        return None
    if decision.action == "deny":
        return f"Refused: {decision.reason} {decision.hint}".rstrip(), decision.reason
    # Writes outside the project or in a git folder ask every time, so answers kept for later would never be
    # used; the title says why it asks.
    options = permission_options(tool, intent, lasting=book is not None and not decision.reason)
    if decision.reason:
        shown = shown.model_copy(update={"title": f"{shown.title} ({decision.reason})"})
    try:
        # The editor shows the call as announced: the diff of an edit, the exact command.
        outcome = await client.request_permission(session.id, shown, options)
    except ClientError as exc:  # an error or a malformed answer: not allowed
        return (
            f"Refused: permission could not be asked ({exc.message}). Do not retry this call.",
            f"Permission could not be asked: {exc.message}",
        )
    chosen = outcome.option_id if outcome.outcome == "selected" else None
    if chosen is not None and chosen not in {option.option_id for option in options}:
        chosen = "reject_once"  # an option we never offered allows nothing
    if chosen in SESSION_SCOPE:
        session.rules.remember(tool, intent, allowed=SESSION_SCOPE[chosen])
    elif chosen in LASTING_SCOPE and book is not None:
        action, scope = LASTING_SCOPE[chosen]
        _keep(book, rule_for(action, tool, intent, session.cwd if scope == "project" else None))
    if chosen in ("allow_once", "allow_always") or (chosen in LASTING_SCOPE and chosen.startswith("allow")):
        return None
    if chosen is None:
        return (
            "Refused: the user dismissed the permission prompt. Do not retry this call; ask the user.",
            "Not run: the permission prompt was dismissed",
        )
    return (
        "Refused: the user rejected this call. Do not retry it as is; ask the user how to proceed.",
        "Rejected",
    )


def _keep(book: RuleBook, rule: Rule) -> None:
    try:
        book.add(rule)
    except OSError as exc:  # the answer still holds for this call
        log.error("could not keep the rule (%s): %s", rule.describe(), exc)
