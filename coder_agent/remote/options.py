"""The limits of `coder-agent serve` (README: "Limits")."""

from __future__ import annotations

from dataclasses import dataclass

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True)
class ServeOptions:
    max_buffer_bytes: int = MiB  # a connection's unread outgoing messages (README: "Limits")
    stall_timeout: float = 30.0  # a connection whose client reads nothing for this long, while sent something, ends
    replay_bytes: int = 256 * KiB  # the last SSE events kept per connection, for a client resuming with Last-Event-ID
    max_message_bytes: int = 16 * MiB  # one incoming WebSocket message or POST body
    max_inbound_bytes: int = 32 * MiB  # all clients' messages the server holds and the agents have not yet taken
    inbound_wait: float = 30.0  # how long a message waits for room in `max_inbound_bytes` before it is refused
    max_connections: int = 100
    header_timeout: float = 10.0  # a TCP connection must send a whole request head within this long
    max_unauthenticated: int = 256  # TCP connections that have not shown the token yet, all peers together
    max_unauthenticated_per_peer: int = 32  # the same, from one address
    detach_timeout: float = 30.0  # an HTTP connection without its connection stream for this long ends
    release_wait: float = 15.0  # how long a load waits for a departing connection to let its session go
    initialize_timeout: float = 30.0
    keepalive: float = 15.0  # an SSE comment on a quiet stream, so proxies keep it open
    shutdown_timeout: float = 15.0  # at exit, how long connections get to stop their turns and save

    def __post_init__(self) -> None:
        if self.max_inbound_bytes < self.max_message_bytes:
            raise ValueError("max_inbound_bytes must hold at least one message of max_message_bytes")
