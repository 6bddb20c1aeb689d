"""The limits of `coder-agent serve` (README: "Limits")."""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1024 * 1024


@dataclass(frozen=True)
class ServeOptions:
    max_buffer_bytes: int = MiB  # a connection's unread outgoing messages (README: "Limits")
    stall_timeout: float = 30.0  # a connection whose client reads nothing for this long, while sent something, ends
    replay_bytes: int = 256 * 1024  # the last SSE events kept per connection, for a client resuming with Last-Event-ID
    max_message_bytes: int = 16 * MiB  # one incoming WebSocket message or POST body
    max_connections: int = 100
    detach_timeout: float = 30.0  # an HTTP connection without its connection stream for this long ends
    release_wait: float = 15.0  # how long a load waits for a departing connection to let its session go
    initialize_timeout: float = 30.0
    keepalive: float = 15.0  # an SSE comment on a quiet stream, so proxies keep it open
    shutdown_timeout: float = 15.0  # at exit, how long connections get to stop their turns and save
