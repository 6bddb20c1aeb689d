"""`coder-agent login`: pick a provider and paste its key, or point at a local server; a plain line-based dialogue.

It runs in whatever terminal the user (or an editor's terminal login) gives it: no screen control, only lines
in and out, the key read with echo off. Exit status 0 when the login is saved, 1 when it was abandoned (end of
input, Ctrl-C, nothing usable given): nothing is saved then.

What is saved, and where: `config.logins` (the same as an editor's login through a form, `server/login_form.py`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from ..config.keystore import NO_KEYRING, KeyringFailed, Where, system_keyring
from ..config.logins import LOCAL_KEY, PROVIDERS, Choice, Provider, full_model, save_login

EXIT_OK, EXIT_ABANDONED = 0, 1


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
            model = self._lines.ask(f"Model [{provider.default_model}]: ")
        return Choice(model=full_model(provider, model), key_variable=provider.key_variable, key=key)

    def local(self, provider: Provider, base: str | None = None, model: str | None = None) -> Choice:
        if base is None:
            base = self._lines.ask(f"Server address [{provider.default_base}]: ") or provider.default_base or ""
        model = full_model(provider, model if model is not None else self._pick_model(provider, base))
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
        return save_login(self._config_dir, choice, where)


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
