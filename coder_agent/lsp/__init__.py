"""The session's language servers: real servers started over stdio, their diagnostics after each edit.

Why a client of our own (`connection.py`, `framing.py`, `types.py`: about 300 lines) and not a library:
`multilspy` downloads its servers at run time (no offline install, versions it pins, processes we did not name);
`pygls`'s client is asyncio's, starts the process itself (no process group of its own, no watchdog, its own
shutdown) and brings `lsprotocol` (a 480 KB module of generated types, attrs and cattrs) for the five shapes the
agent reads. The agent needs a few requests, bounded waits under anyio's cancel scopes, and a process it kills
whole: that is this package.
"""
