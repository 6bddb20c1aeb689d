"""`python -m evals COMMAND`: run, check-tasks, compare, show, export-preds, export-harbor (see evals/README.md)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

import anyio
from pydantic import ValidationError
from rich.console import Console

from .check import check_tasks, render_checks
from .client import PROFILES
from .compare import compare_runs
from .config import RunConfig
from .docker import BASE_IMAGE, DockerError
from .errors import one_line
from .export import export_preds
from .harbor_export import export_suite
from .needs import require
from .results import load_results
from .runner import new_run_dir, prepare_run, run_eval
from .show import show_run
from .suite import load_suite, select_tasks
from .summary import render_markdown, write_summary
from .task import TaskError

PROG = "python -m evals"


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line (argparse prints the whole usage first, which buries the message)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _count(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` (up to `high`)."""
    wanted = f"a whole number from {low} to {high}" if high is not None else f"a whole number, at least {low}"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {wanted}, not {text!r}")
        return value

    return parse


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="run a suite's tasks through the agent over ACP")
    run.set_defaults(command_parser=run)
    run.add_argument("--suite", metavar="NAME", help="suite name (evals/suites/NAME) or a folder of tasks")
    run.add_argument("--tasks", default="", help="comma-separated task ids (default: all)")
    run.add_argument("--model", help="litellm model string, e.g. anthropic/claude-sonnet-4-5 (a real run)")
    run.add_argument("--offline", choices=["golden", "null"], help="play each task's golden.json or null.json")
    run.add_argument("--profile", choices=PROFILES, default="editor", help="the client the harness plays")
    run.add_argument("--permission", choices=["allow", "reject"], default="allow", help="permission answers")
    run.add_argument("--trials", type=_count(1), default=1, help="trials per task (pass@k uses k = trials)")
    run.add_argument("--workers", type=_count(1), default=1, help="trials run at once")
    run.add_argument("--retries", type=_count(0, 3), default=0, help="second tries with the failing test output")
    run.add_argument(
        "--sandbox",
        choices=["local", "docker"],
        default="local",
        help="where each trial's agent, commands and verifier run: here, or a container of its own",
    )
    run.add_argument(
        "--image", help="--sandbox docker: the image of tasks without environment/ (default: evals/docker/setup.sh's)"
    )
    run.add_argument("--out", type=Path, help="the run folder (default: evals/runs/<stamp>-<suite>-<model>)")
    run.add_argument("--resume", type=Path, metavar="RUN_DIR", help="finish an interrupted run")

    check = commands.add_parser("check-tasks", help="oracle passes, untouched workspace fails; no model")
    check.set_defaults(command_parser=check)
    check.add_argument("--suite", metavar="NAME", help="suite name or a folder of tasks (default: smoke)")
    check.add_argument("suite_alias", nargs="?", metavar="SUITE", help="the same as --suite (the older form)")
    check.add_argument("--tasks", default="", help="comma-separated task ids (default: all)")
    check.add_argument("--workers", type=_count(1), default=min(4, os.cpu_count() or 1))

    show = commands.add_parser("show", help="a run (or a Harbor job): what ran, each trial, a trajectory")
    show.add_argument("run", type=Path)
    show.add_argument("--trial", metavar="TASK[/N]", help="also that trial's trajectory, step by step")

    compare = commands.add_parser("compare", help="tasks fixed and broken, cost and time deltas")
    compare.add_argument("run_a", type=Path)
    compare.add_argument("run_b", type=Path)

    export = commands.add_parser("export-preds", help="SWE-bench predictions (one patch per task)")
    export.add_argument("run", type=Path)
    export.add_argument("--out", type=Path, required=True)
    export.add_argument("--trial", type=_count(1), default=1, help="which trial of each task")

    harbor = commands.add_parser("export-harbor", help="a suite as Harbor tasks (task.toml, tests/test.sh, ...)")
    harbor.set_defaults(command_parser=harbor)
    harbor.add_argument("--suite", metavar="NAME", required=True, help="suite name or a folder of tasks")
    harbor.add_argument("--tasks", default="", help="comma-separated task ids (default: all)")
    harbor.add_argument("--out", type=Path, required=True, help="the folder to write the Harbor tasks in")
    harbor.add_argument(
        "--base-image", default=BASE_IMAGE, help=f"FROM of tasks without environment/ (default: {BASE_IMAGE})"
    )

    commands.add_parser(
        "import-swebench", help="SWE-bench JSONL instances + local checkouts -> a suite", add_help=False
    )
    summary = commands.add_parser("summary", help="rewrite and print a run's summary.md")
    summary.add_argument("run", type=Path)
    return parser


def _ids(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


async def _interruptible(config: RunConfig, run_dir: Path, console: Console) -> bool:
    """Run; SIGINT or SIGTERM stops the trials cleanly (agents and servers ended). True if it finished.

    An error of the run itself is raised as it is, not wrapped in the task group's ExceptionGroup.
    """
    finished = False
    error: Exception | None = None
    async with anyio.create_task_group() as tg:

        async def watch() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for signum in signals:
                    console.print(f"{signal.Signals(signum).name}: stopping; finish later with --resume {run_dir}")
                    tg.cancel_scope.cancel()

        tg.start_soon(watch)
        try:
            await run_eval(config, run_dir, console=console)
            finished = True
        except Exception as exc:
            error = exc
        tg.cancel_scope.cancel()
    if error is not None:
        raise error
    return finished


def _run(args: argparse.Namespace, console: Console) -> int:
    if args.resume is not None:
        run_dir: Path = args.resume
        config = RunConfig.load(run_dir)
    else:
        usage: argparse.ArgumentParser = args.command_parser
        if not args.suite:
            usage.error("give --suite NAME (or --resume RUN_DIR)")
        if args.model is None and args.offline is None:
            usage.error("give --model MODEL (a real run) or --offline golden|null (scripted, no key needed)")
        if args.model is not None and args.offline is not None:
            usage.error("give --model MODEL or --offline golden|null, not both")
        config = RunConfig(
            suite=args.suite,
            tasks=_ids(args.tasks),
            model=args.model,
            offline=args.offline,
            profile=args.profile,
            permission=args.permission,
            trials=args.trials,
            workers=args.workers,
            retries=args.retries,
            sandbox=args.sandbox,
            image=args.image,
        )
        run_dir = args.out or new_run_dir(config)
    prepare_run(config, run_dir)  # an unknown suite or task, or a clash with run_dir, stops here: no folder
    console.print(f"run folder: {run_dir}")
    if not anyio.run(_interruptible, config, run_dir, console):
        return 130
    print((run_dir / "summary.md").read_text(encoding="utf-8"))
    return 0


def _check_suite(args: argparse.Namespace) -> str:
    """check-tasks takes `--suite NAME`, as run does, or the suite as its one positional argument."""
    if args.suite and args.suite_alias and args.suite != args.suite_alias:
        args.command_parser.error(f"name the suite once: --suite {args.suite} or {args.suite_alias}")
    return str(args.suite or args.suite_alias or "smoke")


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["import-swebench"]:
        from evals.suites.swebench.importer import main as import_swebench

        return import_swebench(arguments[1:])
    console = Console(stderr=True)
    try:
        args = _parser().parse_args(arguments)
        if args.command == "run":
            return _run(args, console)
        if args.command == "check-tasks":
            suite = load_suite(_check_suite(args))
            tasks = select_tasks(suite, _ids(args.tasks))
            require(tasks)  # a verifier that cannot run would make every oracle look broken
            checks = anyio.run(check_tasks, suite, tasks, args.workers)
            print(render_checks(checks))
            return 0 if all(check.ok for check in checks) else 1
        if args.command == "show":
            print(show_run(args.run, args.trial), end="")
            return 0
        if args.command == "compare":
            print(compare_runs(args.run_a, args.run_b))
            return 0
        if args.command == "export-harbor":
            exported = export_suite(select_tasks(load_suite(args.suite), _ids(args.tasks)), args.out, args.base_image)
            console.print(f"wrote {len(exported)} Harbor task(s) to {args.out}")
            return 0
        if args.command == "export-preds":
            count = export_preds(args.run, args.out, args.trial)
            console.print(f"wrote {count} predictions to {args.out}")
            return 0
        if args.command == "summary":
            config = RunConfig.load(args.run)
            print(render_markdown(write_summary(args.run, config, load_results(args.run))))
            return 0
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2), already printed
        return exc.code if isinstance(exc.code, int) else 2
    except ValidationError as exc:
        return _error(one_line(exc))
    except (TaskError, ValueError, OSError, DockerError) as exc:
        return _error(str(exc))
    return 2


def _error(message: str) -> int:
    """One plain line on stderr (rich would wrap it at the console width), and the exit code 2."""
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2
