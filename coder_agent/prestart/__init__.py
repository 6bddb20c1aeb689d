"""What runs before the runtime is imported: reserving stdout, the early `initialize` and `session/new` answers,
the first prompt's first model call, the settings they need and an exit on closed input. Standard library only
(and `kit`, and the stdlib-only pieces `tests/test_layers.py` allows): the full agent takes over what they began.
"""
