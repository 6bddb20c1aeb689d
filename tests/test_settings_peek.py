"""The model, found before the settings are loaded (for `initialize`), is the one the settings find."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_agent.server.capabilities import initialize_result
from coder_agent.settings import Settings
from coder_agent.settings_peek import configured_model


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
