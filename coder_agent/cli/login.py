"""`coder-agent login` and `coder-agent logout`, from a shell or from an editor's terminal login.

An editor that supports terminal login runs the agent's command with the method's args: `coder-agent acp login`
when it appends them to the configured `coder-agent acp`, `coder-agent login` when it replaces them; both land
here. `login` asks on the terminal; with `--provider` (and the key on stdin when stdin is not a terminal) it
can run unattended.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..config.keystore import KeyStore
from ..config.logins import LOCAL_KEY, PROVIDERS
from ..config.settings import Settings, SettingsError
from .login_dialogue import EXIT_ABANDONED, run_dialogue


def login_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coder-agent login",
        description="Choose a model provider and save its API key (or point at a local server) for coder-agent. "
        "The key goes to credentials.toml in your config folder (mode 600) or the OS keyring; the model to "
        "config.toml there. Exit status 0 when saved, 1 when abandoned.",
    )
    parser.add_argument("--provider", choices=[p.id for p in PROVIDERS], help="skip the provider question")
    parser.add_argument("--model", help="the model (a litellm model string, or a name of the provider's)")
    parser.add_argument("--api-base", metavar="URL", help="a local server's address (local, ollama)")
    parser.add_argument(
        "--store", choices=["auto", "file", "keyring"], default="auto", help="where the key goes (default: auto)"
    )
    return parser


def _settings() -> Settings:
    return Settings.load(dict(os.environ), lenient=True)


def _overridden(settings: Settings) -> list[str]:
    """Where a setting wins over what `login` writes (the environment, a .env): said after the login."""
    notes = []
    for name in ("model", "api_base", "api_key"):
        source = settings.sources[name]
        if source != "default" and not source.endswith("config.toml") and not source.endswith("credentials.toml"):
            notes.append(f"CODER_AGENT_{name.upper()} is set in {source} and wins over this login.")
    return notes


def login_main(argv: list[str]) -> int:
    args = login_parser().parse_args(argv)
    try:
        settings = _settings()
    except SettingsError as exc:
        print(f"coder-agent login: {exc}", file=sys.stderr)
        return EXIT_ABANDONED
    assert settings.config_dir is not None
    # Unattended (`--provider`, stdin not a terminal): the answers are stdin's lines, the key first. A key is
    # never an argument: it would show in `ps`.
    code = run_dialogue(
        settings.config_dir, provider_id=args.provider, model=args.model, api_base=args.api_base, where=args.store
    )
    if code == 0:
        for note in _overridden(_settings()):
            print(f"Note: {note}")
    return code


def logout_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coder-agent logout",
        description="Forget the API keys `coder-agent login` saved (all of them, or the variables named).",
    )
    parser.add_argument("names", nargs="*", metavar="VARIABLE", help="e.g. ANTHROPIC_API_KEY (default: all)")
    return parser


def logout_main(argv: list[str]) -> int:
    args = logout_parser().parse_args(argv)
    try:
        settings = _settings()
    except SettingsError as exc:
        print(f"coder-agent logout: {exc}", file=sys.stderr)
        return 1
    assert settings.config_dir is not None
    removed = KeyStore(settings.config_dir).remove(args.names or None)
    print(f"Removed the saved {', '.join(removed)}." if removed else "No saved key to remove.")
    environ = dict(os.environ)
    Settings.load(environ, lenient=True)  # what is left: the environment, the .env files
    for name in sorted({p.key_variable or LOCAL_KEY for p in PROVIDERS}):
        if environ.get(name, "").strip():
            print(f"Note: {name} is still set in the environment or your .env files; logout does not change it.")
    return 0
