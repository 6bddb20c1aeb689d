"""What the settings peek finds before the settings are loaded (the model for `initialize`; the model, menu and
mode for the early `session/new`) is what `Settings.load` finds, whenever the peek says it read exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_agent.server.capabilities import initialize_result
from coder_agent.server.settings_problems import NEEDED_BY
from coder_agent.settings import Settings
from coder_agent.settings_peek import Peek, configured_model, peek


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


CASES = {
    "environment": ({"CODER_AGENT_MODEL": "openai/gpt-4o"}, {}),
    "config .env": ({}, {"config/coder-agent/.env": 'export CODER_AGENT_MODEL="anthropic/claude-sonnet-4-5"  # ok\n'}),
    "a blank variable hides the files": (
        {"CODER_AGENT_MODEL": "  "},
        {"config/coder-agent/.env": "CODER_AGENT_MODEL=openai/gpt-4o\n"},
    ),
    "config .env moves the data folder": (
        {},
        {
            "config/coder-agent/.env": "CODER_AGENT_HOME={root}/elsewhere\n",
            "elsewhere/.env": "CODER_AGENT_MODEL=openai/gpt-4o-mini # cheap\n",
        },
    ),
    "config.toml": ({}, {"data/coder-agent/config.toml": "model = 'openai/gpt-4o'\n[tables]\nmodel = 'no'\n"}),
    "a table's model is not the model": ({}, {"data/coder-agent/config.toml": "[profile]\nmodel = 'openai/gpt-4o'\n"}),
    "nothing": ({}, {}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_peek_finds_the_model_the_settings_find(case: str, tmp_path: Path) -> None:
    variables, files = CASES[case]
    for name, text in files.items():
        write(tmp_path / name, text.format(root=tmp_path))
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    env |= {"XDG_DATA_HOME": str(tmp_path / "data"), **variables}
    expected = Settings.load(dict(env)).model
    assert configured_model(dict(env)) == expected
    assert (expected is None) == (
        case in ("nothing", "a blank variable hides the files", "a table's model is not the model")
    )


def test_initialize_offers_images_when_the_configured_model_takes_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODER_AGENT_MODEL", "openai/gpt-4o")
    assert initialize_result()["agentCapabilities"]["promptCapabilities"]["image"] is True
    monkeypatch.setenv("CODER_AGENT_MODEL", "openai/my-local-model")
    assert initialize_result()["agentCapabilities"]["promptCapabilities"]["image"] is False


# (variables, files, whether the peek reads them exactly): the early `session/new` answers only when it does
SESSION_CASES: dict[str, tuple[dict[str, str], dict[str, str], bool]] = {
    "defaults": ({}, {}, True),
    "environment": (
        {
            "CODER_AGENT_MODEL": "openai/a",
            "CODER_AGENT_MODELS": "openai/b, ,openai/a",
            "CODER_AGENT_DEFAULT_MODE": "plan",
        },
        {},
        True,
    ),
    "config folder's config.toml": (
        {},
        {"config/coder-agent/config.toml": 'model = "openai/t"\nmodels = ["openai/u"]\ndefault_mode = "plan"\n'},
        True,
    ),
    "the old config.toml, under the new one key by key": (
        {},
        {
            "config/coder-agent/config.toml": 'model = "openai/new"\n',
            "data/coder-agent/config.toml": 'model = "openai/old"\nmodels = "openai/x,openai/y"\n',
        },
        True,
    ),
    "the environment over config.toml": (
        {"CODER_AGENT_DEFAULT_MODE": "bypass"},
        {"config/coder-agent/config.toml": 'default_mode = "plan"\nmodel = "openai/t"\n'},
        True,
    ),
    "an empty .env value hides config.toml's": (
        {},
        {"config/coder-agent/.env": "CODER_AGENT_MODEL=\n", "config/coder-agent/config.toml": 'model = "openai/t"\n'},
        True,
    ),
    "CODER_AGENT_CONFIG_DIR": (
        {"CODER_AGENT_CONFIG_DIR": "{root}/elsewhere"},
        {"elsewhere/config.toml": 'model = "openai/e"\n', "config/coder-agent/config.toml": 'model = "openai/no"\n'},
        True,
    ),
    "valid timeouts": (
        {"CODER_AGENT_MCP_TIMEOUT": "15"},
        {"config/coder-agent/config.toml": "mcp_call_timeout = 2.5\n"},
        True,
    ),
    "a bad default mode": ({"CODER_AGENT_DEFAULT_MODE": "yolo"}, {}, False),
    "a bad timeout": ({"CODER_AGENT_MCP_TIMEOUT": "soon"}, {}, False),
    "a zero timeout in config.toml": ({}, {"config/coder-agent/config.toml": "mcp_timeout = 0\n"}, False),
    "models of the wrong type": ({}, {"config/coder-agent/config.toml": "models = 5\n"}, False),
    "a model of the wrong type": ({}, {"config/coder-agent/config.toml": "model = 5\n"}, False),
    "a broken config.toml": ({}, {"config/coder-agent/config.toml": "model = \n"}, False),
    "a .env that is a folder": ({}, {"config/coder-agent/.env/x": ""}, False),
}


def settings_env(tmp_path: Path, variables: dict[str, str], files: dict[str, str]) -> dict[str, str]:
    for name, text in files.items():
        write(tmp_path / name, text.format(root=tmp_path))
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    return env | {"XDG_DATA_HOME": str(tmp_path / "data")} | {k: v.format(root=tmp_path) for k, v in variables.items()}


def assert_peek_agrees(env: dict[str, str]) -> Peek:
    """An exact peek finds what the settings find, and settings `session/new` would be refused for are never exact."""
    found = peek(dict(env))
    settings = Settings.load(dict(env), lenient=True)
    refused = [name for name in settings.problems if "session/new" in NEEDED_BY.get(name, ())]
    if found.exact:
        assert (found.model, list(found.models), found.default_mode) == (
            settings.model,
            settings.models,
            settings.default_mode,
        )
        assert refused == []
    return found


@pytest.mark.parametrize("case", list(SESSION_CASES))
def test_an_exact_peek_finds_the_session_settings_the_settings_find(case: str, tmp_path: Path) -> None:
    variables, files, exact = SESSION_CASES[case]
    assert assert_peek_agrees(settings_env(tmp_path, variables, files)).exact is exact


DOTENV_LINES = {
    "comment": ("CODER_AGENT_MODEL=openai/a # the model\n", True),
    "hash without a space": ("CODER_AGENT_MODEL=openai/a#b\n", True),
    "starts with a hash": ("CODER_AGENT_MODEL=#x\n", True),
    "single quotes": ("CODER_AGENT_MODEL='openai/a # b' # c\n", True),
    "double quotes": ('CODER_AGENT_MODEL = "openai/a b"\n', True),
    "export and spaces": ("export CODER_AGENT_MODEL = openai/a\n", True),
    "export and a tab": ("export\tCODER_AGENT_MODEL=openai/a\n", True),
    "not export": ("exportCODER_AGENT_MODEL=openai/a\n", True),
    "tabs around": ("CODER_AGENT_MODEL=\topenai/a\t\n", True),
    "spaces inside": ("CODER_AGENT_MODEL=a b c   # c\n", True),
    "the last one wins": ("CODER_AGENT_MODEL=openai/first\nCODER_AGENT_MODEL=openai/second\n", True),
    "no equals sign": ("CODER_AGENT_MODEL\nCODER_AGENT_DEFAULT_MODE=plan\n", True),
    "junk after quotes": ("CODER_AGENT_MODEL='openai/a' junk\n", True),
    "comments and blanks": ("  # a comment\n\n   \nCODER_AGENT_MODELS=openai/x,openai/y\n", True),
    "carriage returns": ("CODER_AGENT_MODEL=openai/a\rCODER_AGENT_DEFAULT_MODE=plan\r\n", True),
    "an escape": ('CODER_AGENT_MODEL="openai/\\"a\\""\n', False),
    "a value over two lines": ('CODER_AGENT_MODEL="openai/a\nb"\n', False),
    "a form feed": ("CODER_AGENT_MODEL=openai/a\x0cb\n", False),
    "a quoted key": ("'CODER_AGENT_MODEL'=openai/a\n", False),
}


@pytest.mark.parametrize("case", list(DOTENV_LINES))
def test_an_exact_peek_reads_dotenv_files_as_python_dotenv_does(case: str, tmp_path: Path) -> None:
    text, exact = DOTENV_LINES[case]
    env = settings_env(tmp_path, {}, {"config/coder-agent/config.toml": 'model = "openai/toml"\n'})
    (tmp_path / "config" / "coder-agent" / ".env").write_text(text, encoding="utf-8")
    assert assert_peek_agrees(env).exact is exact
