"""`coder-agent login`: pick a provider and paste its key, or point at a local server; a plain line-based dialogue.

It runs in whatever terminal the user (or an editor's terminal login) gives it: no screen control, only lines
in and out, the key read with echo off. Exit status 0 when the login is saved, 1 when it was abandoned (end of
input, Ctrl-C, nothing usable given): nothing is saved then.

What is saved, in the user's config folder only: the key (`credentials.toml`, 600, or the OS keyring) under the
provider's key variable (`CODER_AGENT_API_KEY` for a local server), and the model (and a local server's
address) in `config.toml`. Logging in to a hosted provider takes out a local server's address and key saved
before, so the new provider's traffic and key never go to the old server.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ..config.keystore import NO_KEYRING, KeyringFailed, KeyStore, Where, system_keyring
from ..config.userfiles import CONFIG_FILE, set_top_level, write_private

LOCAL_KEY = "CODER_AGENT_API_KEY"
EXIT_OK, EXIT_ABANDONED = 0, 1


@dataclass(frozen=True)
class Provider:
    id: str
    name: str
    key_variable: str | None  # None: a local server (its key, if any, is CODER_AGENT_API_KEY)
    default_model: str
    prefix: str  # the litellm provider prefix of its models
    default_base: str | None = None  # local servers: where they usually listen

    @property
    def local(self) -> bool:
        return self.key_variable is None


PROVIDERS = [
    Provider("anthropic", "Anthropic", "ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5", "anthropic"),
    Provider("openai", "OpenAI", "OPENAI_API_KEY", "openai/gpt-4.1", "openai"),
    Provider("openrouter", "OpenRouter", "OPENROUTER_API_KEY", "openrouter/anthropic/claude-sonnet-4.5", "openrouter"),
    Provider("gemini", "Google Gemini", "GEMINI_API_KEY", "gemini/gemini-2.5-pro", "gemini"),
    Provider("mistral", "Mistral", "MISTRAL_API_KEY", "mistral/devstral-medium-latest", "mistral"),
    Provider("deepseek", "DeepSeek", "DEEPSEEK_API_KEY", "deepseek/deepseek-chat", "deepseek"),
    Provider("groq", "Groq", "GROQ_API_KEY", "groq/moonshotai/kimi-k2-instruct", "groq"),
    Provider("xai", "xAI", "XAI_API_KEY", "xai/grok-4", "xai"),
    Provider(
        "local",
        "A local OpenAI-compatible server (llama.cpp, vLLM, LM Studio, ...)",
        None,
        "",
        "openai",
        "http://localhost:8080/v1",
    ),
    Provider("ollama", "Ollama", None, "", "ollama_chat", "http://localhost:11434"),
]


class Abandoned(Exception):
    """The user ended the dialogue (end of input, Ctrl-C) or gave nothing usable."""


class Lines:
    """The dialogue's terminal: prompts out, lines in; a secret is read with echo off when input is a terminal."""

    def __init__(self, stdin: TextIO, stdout: TextIO) -> None:
        self._in = stdin
        self._out = stdout

    def say(self, text: str = "") -> None:
        self._out.write(text + "\n")
        self._out.flush()

    def ask(self, prompt: str) -> str:
        self._out.write(prompt)
        self._out.flush()
        line = self._in.readline()
        if not line:
            self.say()
            raise Abandoned("the input ended")
        return line.strip()

    def ask_secret(self, prompt: str) -> str:
        try:
            fd = self._in.fileno()
            is_terminal = os.isatty(fd)
        except (AttributeError, OSError, ValueError):
            is_terminal = False
        if not is_terminal:
            return self.ask(prompt)
        import termios

        before = termios.tcgetattr(fd)
        quiet = list(before)
        quiet[3] &= ~termios.ECHO
        termios.tcsetattr(fd, termios.TCSADRAIN, quiet)
        try:
            return self.ask(prompt)
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, before)
            self.say()  # the Enter the user typed was not echoed

    def choose(self, prompt: str, count: int, default: int | None = None) -> int:
        """A number from 1 to `count` (0-based index returned); asked again, up to three times."""
        for _ in range(3):
            answer = self.ask(prompt)
            if not answer and default is not None:
                return default
            if answer.isdigit() and 1 <= int(answer) <= count:
                return int(answer) - 1
            self.say(f"Type a number from 1 to {count}.")
        raise Abandoned("no choice was made")


ModelLister = Callable[[str, str], list[str]]
"""(litellm model prefix, server address) -> the server's models (raises on failure)."""


def list_server_models(prefix: str, base: str) -> list[str]:
    import anyio

    from ..llm.model_list import list_models

    async def ask() -> list[str]:
        return await list_models(f"{prefix}/any", base, None, {})

    return [name.split("/", 1)[1] for name in anyio.run(ask)]


@dataclass
class Choice:
    model: str
    key_variable: str | None = None
    key: str | None = None
    api_base: str | None = None


class TerminalLogin:
    def __init__(self, lines: Lines, config_dir: Path, lister: ModelLister = list_server_models) -> None:
        self._lines = lines
        self._config_dir = config_dir
        self._lister = lister

    def pick_provider(self) -> Provider:
        say = self._lines.say
        say("Which model provider should coder-agent use?")
        for number, provider in enumerate(PROVIDERS, 1):
            say(f"  {number:>2}) {provider.name}")
        return PROVIDERS[self._lines.choose(f"Provider [1-{len(PROVIDERS)}]: ", len(PROVIDERS))]

    def hosted(self, provider: Provider, model: str | None = None) -> Choice:
        assert provider.key_variable is not None
        key = ""
        for _ in range(3):
            key = self._lines.ask_secret(f"Paste your {provider.name} API key ({provider.key_variable}; not shown): ")
            if key:
                break
            self._lines.say("No key was given.")
        if not key:
            raise Abandoned("no key was given")
        if model is None:
            model = self._lines.ask(f"Model [{provider.default_model}]: ") or provider.default_model
        if "/" not in model:
            model = f"{provider.prefix}/{model}"
        return Choice(model=model, key_variable=provider.key_variable, key=key)

    def local(self, provider: Provider, base: str | None = None, model: str | None = None) -> Choice:
        if base is None:
            base = self._lines.ask(f"Server address [{provider.default_base}]: ") or provider.default_base or ""
        if model is None:
            model = self._pick_model(provider, base)
        if not model.startswith(f"{provider.prefix}/"):
            model = f"{provider.prefix}/{model}"
        key = None
        if provider.id == "local":
            key = self._lines.ask_secret("API key (Enter if the server checks none; not shown): ") or None
        return Choice(model=model, key_variable=LOCAL_KEY if key else None, key=key, api_base=base)

    def _pick_model(self, provider: Provider, base: str) -> str:
        try:
            offered = self._lister(provider.prefix, base)
        except Exception as exc:
            self._lines.say(f"Could not list the server's models ({exc}).")
            offered = []
        if offered:
            self._lines.say("Its models:")
            for number, name in enumerate(offered, 1):
                self._lines.say(f"  {number:>2}) {name}")
            return offered[self._lines.choose(f"Model [1-{len(offered)}, Enter for 1]: ", len(offered), default=0)]
        for _ in range(3):
            name = self._lines.ask("Model name: ")
            if name:
                return name
        raise Abandoned("no model was given")

    def save(self, choice: Choice, where: Where = "auto") -> str:
        """Keep the choice in the user's config folder; where the key went (or a note that there is none)."""
        store = KeyStore(self._config_dir)
        place = "no key (the server checks none)"
        if choice.key_variable is not None and choice.key is not None:
            place = store.save(choice.key_variable, choice.key, where)
        if choice.key_variable != LOCAL_KEY:
            store.remove([LOCAL_KEY])  # a local server's key must not go to another provider
        path = self._config_dir / CONFIG_FILE
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = "# coder-agent settings (see `coder-agent config`). `coder-agent login` sets model and api_base.\n"
        values: dict[str, object] = {"model": choice.model}
        if choice.api_base:
            values["api_base"] = choice.api_base
        write_private(path, set_top_level(text, values, remove=() if choice.api_base else ("api_base",)))
        return place


def run_dialogue(
    config_dir: Path,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    *,
    provider_id: str | None = None,
    model: str | None = None,
    api_base: str | None = None,
    where: Where = "auto",
    lister: ModelLister = list_server_models,
) -> int:
    """The whole login; returns the exit status (0 saved, 1 abandoned)."""
    lines = Lines(stdin or sys.stdin, stdout or sys.stdout)
    login = TerminalLogin(lines, config_dir, lister)
    try:
        if where == "keyring" and system_keyring() is None:  # said before the key is typed, not after
            raise Abandoned(f"{NO_KEYRING}; or keep the key in a file of yours: --store file")
        lines.say(f"coder-agent login: saved in {config_dir} (only you can read the key), never in a project.")
        provider = next((p for p in PROVIDERS if p.id == provider_id), None) or login.pick_provider()
        choice = login.local(provider, api_base, model) if provider.local else login.hosted(provider, model)
        place = login.save(choice, where)
    except KeyringFailed as exc:  # the keyring refused (locked, no backend after all): nothing is half-saved
        lines.say(f"Login abandoned ({exc}): nothing was saved. Try --store file.")
        return EXIT_ABANDONED
    except KeyboardInterrupt:
        lines.say()  # Ctrl-C leaves the cursor after the question
        lines.say("Login abandoned (interrupted): nothing was saved.")
        return EXIT_ABANDONED
    except Abandoned as exc:
        lines.say(f"Login abandoned ({exc}): nothing was saved.")
        return EXIT_ABANDONED
    lines.say(f"Logged in: model {choice.model}" + (f" at {choice.api_base}" if choice.api_base else ""))
    lines.say(f"Key: {place}.")
    lines.say("Editors use it when they start the agent again; `coder-agent doctor` checks it now.")
    return EXIT_OK
