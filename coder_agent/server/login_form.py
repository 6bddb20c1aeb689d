"""Logging in without a terminal: `authenticate` asks for the provider and its key in a form the editor renders.

For editors that render forms (`elicitation.form`) but cannot run the terminal login: the form is tied to the
`authenticate` request (`elicitation/create`, request scope), asks for the provider (a choice), its API key, and
optionally the model and a local server's address (Ollama, an OpenAI-compatible URL: no key needed), and is asked
again, saying what was missing, until it gives a usable login or the user declines. The login is saved exactly as
`coder-agent login` saves it (`config.logins`).

ACP v1 says a form must not ask for credentials (URL mode is meant for them), and a v1 client has no way to mark
a field secret. This form is the login the user chose in their editor, and the key goes nowhere but the user's
config folder: it is masked in everything the agent writes from the moment it arrives (`masking.learn`), never
logged, never put in a session, never a form's default. The field carries `_meta.coder-agent.secret` so that a
client that reads it can hide what is typed.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ..acp.schema import CreateElicitationRequest, ElicitationSchema, EnumOption, StringProperty
from ..agent.client import META_KEY, Client
from ..agent.errors import AuthRequired
from ..agent.tools.asking import ask
from ..config.logins import LOCAL_KEY, PROVIDERS, Choice, full_model, provider
from ..kit import masking
from ..prestart.capabilities import FORM_LOGIN_ID

TRIES = 3
MESSAGE = (
    "Log in to coder-agent: choose the model provider and enter its API key, or choose a local server. "
    "The key is saved only in your config folder (readable by you alone), as `coder-agent login` saves it."
)


def login_form() -> ElicitationSchema:
    providers = [EnumOption(const=p.id, title=p.name) for p in PROVIDERS]
    return ElicitationSchema(
        properties={
            "provider": StringProperty(title="Provider", one_of=providers),
            "api_key": StringProperty(
                title="API key",
                description="The provider's key. A local server needs none (an OpenAI-compatible one may check one).",
                _meta={META_KEY: {"secret": True}},
            ),
            "model": StringProperty(
                title="Model",
                description="Optional for a hosted provider (its default otherwise); a local server's model name.",
            ),
            "api_base": StringProperty(
                title="Server address",
                description="Local servers only: e.g. http://localhost:11434 (Ollama), http://localhost:8080/v1.",
            ),
        },
        required=["provider"],
    )


def choice_of(content: dict[str, Any]) -> tuple[Choice | None, str | None]:
    """The login the form's answer gives, or what is missing from it."""
    chosen = provider(str(content.get("provider")))
    if chosen is None:
        return None, "choose a provider"
    key = str(content.get("api_key") or "").strip() or None
    model = str(content.get("model") or "").strip()
    if not chosen.local:
        if key is None:
            return None, f"{chosen.name} needs its API key ({chosen.key_variable})"
        assert chosen.key_variable is not None
        return Choice(full_model(chosen, model), chosen.key_variable, key), None
    base = str(content.get("api_base") or "").strip() or chosen.default_base or ""
    if urlsplit(base).scheme not in ("http", "https") or not urlsplit(base).netloc:
        return None, f"the server address must be an http(s) URL, not {base!r}"
    if not model:
        return None, f"name the model the server at {base} runs"
    local_key = key if chosen.id == "local" else None
    return Choice(full_model(chosen, model), LOCAL_KEY if local_key else None, local_key, base), None


async def ask_login(client: Client, request_id: int | str) -> Choice:
    """Ask until the answer is a usable login; raises `AuthRequired` when the user declines or gives up."""
    missing = None
    for _ in range(TRIES):
        message = MESSAGE if missing is None else f"{MESSAGE}\n\nNot saved: {missing}."
        request = CreateElicitationRequest(
            mode="form", message=message, requested_schema=login_form(), request_id=request_id
        )
        answer = await ask(client, request)
        key = answer.content.get("api_key")
        if isinstance(key, str) and key.strip():
            variable = getattr(provider(str(answer.content.get("provider"))), "key_variable", None) or LOCAL_KEY
            masking.learn(variable, key.strip())  # from now on, no sink writes it, whatever becomes of the login
        if answer.action != "accept" and answer.problem is None:
            what = "declined" if answer.action == "decline" else "dismissed"
            raise AuthRequired(f"The login was {what}: nothing was saved.", {"method": FORM_LOGIN_ID})
        if answer.problem is not None:
            missing = answer.problem
            continue
        choice, missing = choice_of(answer.content)
        if choice is not None:
            return choice
    raise AuthRequired(f"No login was saved: {missing}.", {"method": FORM_LOGIN_ID})
