"""The headless run (`coder-agent run`), imported from this one place (coder_agent/headless/cli.py).

`run_main(argv)` is what `coder-agent run ARGV` calls, and returns the exit code.
"""

from __future__ import annotations

from coder_agent.headless.cli import main as run_main

__all__ = ["run_main"]
