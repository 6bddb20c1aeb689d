"""`coder-agent run`: the agent on one prompt in this process, its live terminal view and its permission policy."""
