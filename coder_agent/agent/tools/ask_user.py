"""`ask_user`: the model asks the user one to a few questions, each with a few labelled choices, instead of guessing.

How it asks depends on who is there to answer:

- a form (`elicitation/create` in form mode, tied to this tool call) when the client offers one: an editor that
  advertised `elicitation.form`, or `coder-agent run` on a terminal. Each question is one field of choices, with
  "Other" for the user's own answer, written in a text field beside it;
- otherwise, in an editor, one permission request per question whose options are the choices (every client
  answers those); a question of several choices cannot be put so, and the model is told it was not asked;
- otherwise (a headless run without a terminal, or with `--yes`) nobody: the model is told so, and goes on.

The answers go back to the model and are shown in the tool call, so `session/load` replays each question with its
answer. It changes nothing, so every mode allows it (effect `none`), plan mode included.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from ...acp.schema import (
    CreateElicitationRequest,
    ElicitationSchema,
    EnumOption,
    MultiSelectItems,
    MultiSelectProperty,
    PermissionOption,
    StringProperty,
    ToolCallFields,
)
from ..errors import ClientError
from .asking import ask
from .base import Intent, Tool, ToolArgs, ToolContext, ToolResult, text_content
from .user_answers import Outcome, Reply, other_of

OTHER = "Other"


class Choice(ToolArgs):
    label: str = Field(min_length=1, max_length=80, description="The choice as the user reads it: a few words.")
    description: str | None = Field(
        default=None, max_length=300, description="What choosing it means, when the label alone does not say."
    )


class Question(ToolArgs):
    question: str = Field(min_length=1, max_length=500, description="The complete question, ending with '?'.")
    header: str | None = Field(
        default=None, max_length=30, description="A very short label for it, e.g. 'Database' or 'Auth method'."
    )
    options: list[Choice] = Field(
        min_length=2, max_length=5, description="2 to 5 choices. The user can also write an answer of their own."
    )
    multi_select: bool = Field(default=False, description="True when the user may pick several choices.")

    @model_validator(mode="after")
    def _distinct(self) -> Question:
        labels = [choice.label.strip().casefold() for choice in self.options]
        if len(set(labels)) != len(labels):
            raise ValueError("the choices' labels must differ")
        return self

    @property
    def label(self) -> str:
        return self.header or self.question


class AskUserArgs(ToolArgs):
    questions: list[Question] = Field(min_length=1, max_length=4, description="1 to 4 questions, asked together.")


def choice_key(number: int) -> str:
    return f"q{number}"


def other_key(number: int) -> str:
    return f"q{number}_other"


def question_form(args: AskUserArgs) -> ElicitationSchema:
    """The form: per question, its choices (plus "Other" unless it has one) and a text field for an own answer."""
    properties: dict[str, Any] = {}
    for number, question in enumerate(args.questions, 1):
        options = [EnumOption(const=c.label, title=c.label, description=c.description) for c in question.options]
        if other_of(question.options, OTHER) is None:
            options.append(EnumOption(const=OTHER, title=OTHER, description="None of these: write your answer below"))
        if question.multi_select:
            items = MultiSelectItems(any_of=options)
            properties[choice_key(number)] = MultiSelectProperty(title=question.question, items=items, min_items=1)
        else:
            properties[choice_key(number)] = StringProperty(title=question.question, one_of=options)
        several = len(args.questions) > 1
        own = f"{question.label}: your own answer, or a note" if several else "Your own answer, or a note"
        properties[other_key(number)] = StringProperty(title=own)  # optional: not in `required`
    required = [choice_key(number) for number in range(1, len(args.questions) + 1)]
    return ElicitationSchema(properties=properties, required=required)


def form_message(args: AskUserArgs) -> str:
    if len(args.questions) == 1:
        return args.questions[0].question
    return f"{len(args.questions)} questions before going on: " + "; ".join(q.label for q in args.questions) + "."


def form_replies(args: AskUserArgs, content: dict[str, Any]) -> list[Reply]:
    replies = []
    for number, question in enumerate(args.questions, 1):
        chosen = content.get(choice_key(number))
        picked = chosen if isinstance(chosen, list) else [chosen] if isinstance(chosen, str) else []
        note = content.get(other_key(number))
        own = other_of(question.options, OTHER) is None and OTHER in picked
        replies.append(
            Reply(question.question, [p for p in picked if not (own and p == OTHER)], note.strip() if note else "", own)
        )
    return replies


class AskUser(Tool[AskUserArgs]):
    name = "ask_user"
    title = "Ask the user"
    kind = "other"
    args_model = AskUserArgs

    async def prepare(self, args: AskUserArgs, ctx: ToolContext) -> Intent:
        labels = ", ".join(question.label for question in args.questions)
        listed = "\n".join(f"- {question.question}" for question in args.questions)
        return Intent(title=f"Ask the user: {labels}", kind="other", effect="none", content=[text_content(listed)])

    async def run(self, args: AskUserArgs, intent: Intent, ctx: ToolContext) -> ToolResult:
        return (await self._ask(args, ctx)).result()

    async def _ask(self, args: AskUserArgs, ctx: ToolContext) -> Outcome:
        client = ctx.client
        if "form" in client.elicitation_modes():
            request = CreateElicitationRequest(
                mode="form",
                message=form_message(args),
                requested_schema=question_form(args),
                session_id=ctx.session_id,
                tool_call_id=ctx.tool_call_id or None,
            )
            answer = await ask(client, request)
            replies = form_replies(args, answer.content) if answer.action == "accept" else []
            return Outcome(answer.action, replies, problem=answer.problem)
        if client.can_ask_user():
            return await by_permission(args.questions, ctx)
        return Outcome("unasked", reason="nobody can answer here (a run without a terminal, or with --yes)")


DECLINE = "decline"


async def by_permission(questions: list[Question], ctx: ToolContext) -> Outcome:
    """Each question as a permission request whose options are its choices, until one is not answered (the answers
    before it still count)."""
    single = [question for question in questions if not question.multi_select]
    if not single:
        return Outcome("unasked", reason="the editor offers no form, and its prompts cannot take several choices")
    replies = []
    for question in questions:
        if question.multi_select:
            replies.append(Reply(question.question, [], asked=False))
            continue
        options = [
            PermissionOption(option_id=f"choice_{number}", name=choice.label, kind="allow_once")
            for number, choice in enumerate(question.options, 1)
        ]
        options.append(PermissionOption(option_id=DECLINE, name="Don't answer", kind="reject_once"))
        listed = "\n".join(
            f"- {choice.label}" + (f": {choice.description}" if choice.description else "")
            for choice in question.options
        )
        shown = ToolCallFields(
            tool_call_id=ctx.tool_call_id,
            title=question.question,
            content=[text_content(f"{question.question}\n{listed}")],
        )
        try:
            outcome = await ctx.client.request_permission(ctx.session_id, shown, options)
        except ClientError as exc:
            return Outcome("decline", replies, problem=f"the question could not be asked: {exc.message}")
        if outcome.outcome == "cancelled":
            return Outcome("cancel", replies)
        chosen = next(
            (number for number, option in enumerate(options[:-1]) if option.option_id == outcome.option_id), None
        )
        if chosen is None:
            problem = (
                None
                if outcome.option_id == DECLINE
                else f"the editor chose an option never offered ({outcome.option_id!r})"
            )
            return Outcome("decline", replies, problem=problem)
        replies.append(Reply(question.question, [question.options[chosen].label]))
    return Outcome("accept", replies)
