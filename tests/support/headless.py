"""The headless run (`coder-agent run`), imported from this one place (coder_agent/cli/run.py).

`run_main(argv)` is what `coder-agent run ARGV` calls, and returns the exit code.
"""

from __future__ import annotations

from coder_agent.cli.run import main as run_main

__all__ = ["run_main"]
