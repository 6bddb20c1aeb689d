"""How a server starts in a checkout, which is hostile: nothing it holds is run (no interpreter, no TypeScript, no
server program of its own), and what only the user names comes from the user's configuration."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from coder_agent.config.language_servers import LanguageServerConfig
from coder_agent.config.settings import Settings
from coder_agent.lsp.launch import CannotStart, launch
from coder_agent.lsp.specs import DEFAULTS, ServerSpec, configured, spec_for


def executable(path: Path, text: str = "#!/bin/sh\nexit 1\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_basedpyright_is_given_the_users_python_and_only_lists_the_checkouts_virtualenv(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "tools" / "bin"
    executable(tools / "basedpyright-langserver")
    users_python = executable(tools / "python3")
    executable(workspace / ".venv" / "bin" / "python")  # basedpyright would run this one on its own
    executable(workspace / "python3")  # a relative PATH entry (".") would find this one
    (workspace / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    packages = workspace / ".venv" / "lib" / "python3.12" / "site-packages"
    packages.mkdir(parents=True)
    monkeypatch.chdir(workspace)
    monkeypatch.setenv("PATH", os.pathsep.join([".", str(workspace), str(tools)]))
    how = launch(DEFAULTS["python"], str(workspace), [str(workspace)])
    assert how.program == str(tools / "basedpyright-langserver")
    assert how.settings["python"]["pythonPath"] == str(users_python)
    assert how.settings["basedpyright"]["analysis"]["extraPaths"] == [str(packages)]
    assert how.settings["basedpyright"]["analysis"]["typeCheckingMode"] == "standard"


def test_a_server_program_inside_the_project_is_never_started(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inside = executable(workspace / "bin" / "my-server")
    spec = ServerSpec("mine", str(inside), (), (".mine",))
    with pytest.raises(CannotStart, match="inside the project"):
        launch(spec, str(workspace), [str(workspace)])
    monkeypatch.setenv("PATH", str(workspace / "bin"))  # nor found on a PATH that leads into it
    with pytest.raises(CannotStart, match="not found"):
        launch(ServerSpec("mine", "my-server", (), (".mine",)), str(workspace), [str(workspace)])


def test_typescript_runs_the_typescript_installed_beside_its_server_never_the_checkouts(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modules = tmp_path / "global" / "lib" / "node_modules"
    cli = executable(modules / "typescript-language-server" / "lib" / "cli.mjs")
    bin_folder = tmp_path / "global" / "bin"
    bin_folder.mkdir(parents=True)
    (bin_folder / "typescript-language-server").symlink_to(cli)
    executable(workspace / "node_modules" / "typescript" / "lib" / "tsserver.js")  # the checkout's: never run
    monkeypatch.setenv("PATH", str(bin_folder))
    with pytest.raises(CannotStart, match="no TypeScript installed beside"):
        launch(DEFAULTS["typescript"], str(workspace), [str(workspace)])
    tsserver = executable(modules / "typescript" / "lib" / "tsserver.js")
    how = launch(DEFAULTS["typescript"], str(workspace), [str(workspace)])
    assert how.initialization_options == {"tsserver": {"path": str(tsserver)}}
    assert DEFAULTS["typescript"].language_id("a.tsx") == "typescriptreact"


def test_typescript_7s_own_server_is_used_where_typescript_language_server_cannot_start(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "global" / "lib" / "node_modules" / "typescript"
    tsc = executable(package / "bin" / "tsc")
    bin_folder = tmp_path / "global" / "bin"
    bin_folder.mkdir(parents=True)
    (bin_folder / "tsc").symlink_to(tsc)
    monkeypatch.setenv("PATH", str(bin_folder))
    (package / "package.json").write_text('{"name": "typescript", "version": "6.0.3"}')
    with pytest.raises(CannotStart, match="typescript-language-server was not found"):
        launch(DEFAULTS["typescript"], str(workspace), [str(workspace)])
    (package / "package.json").write_text('{"name": "typescript", "version": "7.0.2"}')
    how = launch(DEFAULTS["typescript"], str(workspace), [str(workspace)])
    assert (how.program, how.spec.args, how.spec.name) == (str(bin_folder / "tsc"), ("--lsp", "--stdio"), "tsc")


def test_the_users_tables_change_what_they_name_turn_languages_off_and_add_new_ones() -> None:
    tables = {
        "python": LanguageServerConfig(command="/opt/pyright/bin/basedpyright-langserver"),
        "typescript": LanguageServerConfig(enabled=False),
        "rust": LanguageServerConfig(command="rust-analyzer", extensions=["rs"]),
        "odd": LanguageServerConfig(args=["--stdio"]),
    }
    specs, problems = configured(tables)
    by_language = {spec.language: spec for spec in specs}
    assert set(by_language) == {"python", "rust"}
    assert by_language["python"].args == ("--stdio",) and by_language["python"].extensions == (".py", ".pyi")
    assert not by_language["python"].default  # the user's own now: missing, it is something to fix
    assert spec_for(specs, "/x/main.rs") is by_language["rust"] and spec_for(specs, "/x/a.ts") is None
    assert problems == ["[lsp.odd] needs a command and extensions; it is not used"]
    # a user's table that claims a default's extension wins it
    mine, _ = configured({"deno": LanguageServerConfig(command="deno", args=["lsp"], extensions=[".ts"])})
    assert spec_for(mine, "/x/a.ts").language == "deno" and spec_for(mine, "/x/a.js").language == "typescript"  # type: ignore[union-attr]


def test_lsp_tables_are_read_from_the_users_config_and_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "config" / "coder-agent"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(
        'lsp_wait = 5\n[lsp.rust]\ncommand = "rust-analyzer"\nextensions = [".rs"]\n'
        '[fetch]\nallow_hosts = ["intranet"]\n'
    )  # `[fetch]` is flattened into fetch_* settings; `[lsp]` is the `lsp` setting itself, beside `lsp_wait`
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "CODER_AGENT_HOME": str(tmp_path / "data")}
    settings = Settings.load(dict(environ))
    assert settings.lsp["rust"].command == "rust-analyzer" and settings.lsp_wait == 5
    assert settings.fetch_allow_hosts == ["intranet"]
    assert settings.language_servers and not settings.notices
    from_env = Settings.load({**environ, "CODER_AGENT_LSP": '{"go": {"command": "gopls", "extensions": ["go"]}}'})
    assert set(from_env.lsp) == {"go"} and from_env.lsp["go"].extensions == [".go"]
    broken = Settings.load({**environ, "CODER_AGENT_LSP": "{not json"}, lenient=True)
    assert "CODER_AGENT_LSP" in broken.problems and broken.lsp == {}
