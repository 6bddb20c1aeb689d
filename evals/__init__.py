"""Evals for coder-agent: tasks, suites and the harness that drives the agent over ACP (see README.md)."""
