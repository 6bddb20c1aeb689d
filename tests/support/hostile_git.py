"""The repositories of `tests/fixtures/hostile_git/` (its README says what each must do), made real in a test's
temp folder: `lay_out(name, where)` gives the project, the folder where a program that ran leaves its mark, and
a fake home folder a redirected git would list."""

from __future__ import annotations

import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hostile_git"
TRACKED = "alpha\nbeta\n"
CHANGED = "ALPHA\nbeta\n"  # the same size: git must read the content to see the change, through the filter
COMMAND = "sed -i 's/alpha/ALPHA/' a.txt"  # a command that makes that change


@dataclass(frozen=True)
class Case:
    name: str
    config: str = ""
    attributes: str = ""
    files: dict[str, str] = field(default_factory=dict)
    edit: dict[str, str] = field(default_factory=dict)
    branch: str = "main"
    partial_clone: bool = False


def cases() -> dict[str, Case]:
    with (FIXTURES / "cases.toml").open("rb") as handle:
        return {entry["name"]: Case(**entry) for entry in tomllib.load(handle)["case"]}


def git(cwd: Path, *args: str) -> str:
    """Plain git, as the user would run it (with none of the agent's care)."""
    identity = ("-c", "user.email=t@t", "-c", "user.name=t", "-c", "protocol.file.allow=always")
    done = subprocess.run(["git", *identity, *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


@dataclass(frozen=True)
class Repo:
    case: Case
    project: Path
    marks: Path
    home: Path

    def fill(self, text: str) -> str:
        return text.replace("@MARKS@", str(self.marks)).replace("@HOME@", str(self.home))

    def left(self) -> list[str]:
        """The marks the case's programs left: each one ran."""
        return sorted(path.name for path in self.marks.iterdir())

    def edit(self) -> None:
        """The case's edit, as the model's allowed edit would write it."""
        (self.project / self.case.edit["path"]).write_text(self.fill(self.case.edit["text"]))

    def change_tracked(self) -> None:
        (self.project / "a.txt").write_text(CHANGED)


def _commit(project: Path, case: Case, fill: Repo) -> None:
    (project / "a.txt").write_text(TRACKED)
    for name, text in case.files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(fill.fill(text))
    if case.attributes:
        (project / ".gitattributes").write_text(case.attributes)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "the checkout")
    if case.branch != "main":
        git(project, "branch", "main")  # to switch to without touching a file: `git symbolic-ref HEAD ...`


def _partial_clone(where: Path, project: Path) -> None:
    """`project`: a clone of a two-commit repository without the blobs it does not check out."""
    source = where / "source"
    source.mkdir()
    git(source, "init", "-q", "-b", "main")
    git(source, "config", "uploadpack.allowFilter", "true")
    (source / "a.txt").write_text("old\n")
    git(source, "add", "a.txt")
    git(source, "commit", "-qm", "old")
    (source / "a.txt").write_text(TRACKED)
    git(source, "commit", "-qam", "new")
    git(where, "clone", "-q", "--no-local", "--filter=blob:none", f"file://{source}", str(project))
    git(project, "config", "--unset-all", "remote.origin.url")


def lay_out(name: str, where: Path) -> Repo:
    case = cases()[name]
    repo = Repo(case, where / "project", where / "marks", where / "home")
    repo.marks.mkdir()
    repo.home.mkdir()
    (repo.home / "secret.txt").write_text("the user's own file\n")
    if case.partial_clone:
        _partial_clone(where, repo.project)
    else:
        repo.project.mkdir()
        git(repo.project, "init", "-q", "-b", case.branch)
        _commit(repo.project, case, repo)
    with (repo.project / ".git" / "config").open("a") as config:
        config.write(repo.fill(case.config))
    return repo
