"""Where the settings come from, read for `Settings.load` (the precedence is there): the user's `config.toml` files
(their `[section]` tables as the settings they hold), the user's `.env` files, the keys `coder-agent login` saved;
and the notice for a name no setting reads. The start folder's `.env` is never read (`workspace_dotenv.py`)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterable, Mapping, MutableMapping
from pathlib import Path

from dotenv import dotenv_values

from ..kit import masking
from ..kit.credentials import PREFIX
from .userfiles import CONFIG_FILE, config_dir, xdg_folder

log = logging.getLogger(__name__)

DOTENV = ".env"


class SettingsError(Exception):
    """A setting has a value we cannot use; the message names it."""


def default_home(environ: Mapping[str, str]) -> Path:
    return xdg_folder(environ, "XDG_DATA_HOME", ".local/share") / "coder-agent"


def home_of(environ: Mapping[str, str]) -> Path:
    """The data folder: `CODER_AGENT_HOME`, else `$XDG_DATA_HOME/coder-agent`."""
    value = environ.get(PREFIX + "HOME", "").strip()
    return Path(value).expanduser() if value else default_home(environ)


def flat_tables(config: dict[str, object], fields: Iterable[str]) -> dict[str, object]:
    """A config file's `[section]` tables as the settings they hold: `[fetch] allow_hosts` is `fetch_allow_hosts`.
    Only tables some setting's name starts with are flattened, and none that is a setting itself (`[lsp.<language>]`
    is `lsp`, beside `lsp_wait`); the others stay as they are."""
    names = tuple(fields)
    flat: dict[str, object] = {}
    for option, setting in config.items():
        if isinstance(setting, dict) and option not in names and any(name.startswith(option + "_") for name in names):
            flat.update({f"{option}_{key}": value for key, value in setting.items()})
        else:
            flat[option] = setting
    return flat


def unknown_setting(name: str, where: str, known: Iterable[str], prefix: str = "") -> str:
    """The notice for a setting no field reads (a typo, a setting of another tool): ignored, said, with the
    nearest known name when there is one close enough."""
    import difflib

    names = [prefix + field.upper() if prefix else field for field in known]
    nearest = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    hint = f"; did you mean {nearest[0]}?" if nearest else " (`coder-agent acp --help` lists the settings)"
    return f"unknown setting {name} in {where}: it is ignored{hint}"


def unknown_variables(environ: Mapping[str, str], origins: Mapping[str, str], known: Iterable[str]) -> list[str]:
    """A notice for each `CODER_AGENT_*` variable no setting reads (`CODER_AGENT_MDOEL`), naming where it is."""
    fields = set(known)
    return [
        unknown_setting(variable, origins.get(variable, "the environment"), fields, PREFIX)
        for variable in sorted(environ)
        if variable.startswith(PREFIX) and variable[len(PREFIX) :].lower() not in fields
    ]


def config_files(environ: Mapping[str, str], notices: list[str] | None = None) -> list[Path]:
    """The `config.toml` files, first one winning: the config folder's, then the old place in the data folder.

    A file found at the old place adds a notice to `notices` saying to move it.
    """
    new, old = config_dir(environ) / CONFIG_FILE, home_of(environ) / CONFIG_FILE
    if new == old:
        return [new]
    if notices is not None and old.is_file():
        notices.append(
            f"settings are read from {old}, the old place of the config file; move them to {new} "
            "(the settings there win)"
        )
    return [new, old]


def merge_saved_keys(environ: MutableMapping[str, str], origins: dict[str, str], notices: list[str]) -> frozenset[str]:
    """Add the keys `coder-agent login` saved to `environ` (what is set wins); the variables added."""
    from .keystore import KeyStore

    store = KeyStore(config_dir(environ))
    saved = store.load()
    masking.learn_environ(saved.keys)  # those the environment overrides too: the file still holds them
    notices.extend(saved.problems)
    added = set()
    for name, value in saved.keys.items():
        if name not in environ:
            environ[name] = value
            origins[name] = str(store.path)
            added.add(name)
    return frozenset(added)


def user_dotenv_files(environ: Mapping[str, str]) -> list[Path]:
    """The trusted `.env` files, first one winning: the config folder's, then the data folder's."""
    files = [config_dir(environ) / DOTENV, home_of(environ) / DOTENV]
    return files if files[0] != files[1] else files[:1]


def merge_user_dotenv(environ: MutableMapping[str, str], origins: dict[str, str] | None = None) -> list[Path]:
    """Add the variables of the user's `.env` files to `environ` (what is set wins); the files that were read.

    The config folder's file may name the data folder (`CODER_AGENT_HOME`), so it is read first. `origins`, when
    given, is told which file each added variable came from.
    """
    read: list[Path] = []
    for which in range(2):  # the list is looked at again after the first file: it may move the data folder
        files = user_dotenv_files(environ)
        if which >= len(files):
            break
        values = read_dotenv(files[which])
        if values is not None:
            masking.learn_environ(values)  # those the environment overrides too: the file still holds them
            read.append(files[which])
            for key, value in values.items():
                if key not in environ:
                    environ[key] = value
                    if origins is not None:
                        origins[key] = str(files[which])
    return read


def read_dotenv(path: Path) -> dict[str, str] | None:
    """A `.env` file's variables, as python-dotenv reads them (quotes, escapes, comments, multi-line values;
    `export` allowed; no `${VAR}` expansion: values are literal). None when there is no such file."""
    try:
        with path.open(encoding="utf-8") as handle:
            text = handle.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"cannot read {path}: {exc}") from None
    return parse_dotenv(text)


def parse_dotenv(text: str) -> dict[str, str]:
    values = dotenv_values(stream=io.StringIO(text), interpolate=False)
    return {key: value for key, value in values.items() if value is not None}


def read_config_file(path: Path) -> dict[str, object]:
    """A `config.toml` of the user's: the settings' names in lower case, without the prefix."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"invalid config file {path}: {exc}") from None
