"""Logging in: the keys `coder-agent login` saves, the login itself, and when a model has a usable credential.

Importing this package imports nothing (the `initialize` path must stay light).
"""
