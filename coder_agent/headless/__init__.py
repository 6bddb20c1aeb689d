"""`coder-agent run` in this process: the run itself, its live terminal view, its JSON output and its permission
policy (the command line is `cli/run.py`)."""
