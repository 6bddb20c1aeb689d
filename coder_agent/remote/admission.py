"""The TCP connections that have not shown the token yet: a bounded number, so that they cannot crowd out the rest.

A connection is unauthenticated from its accept until a request on it passes the gate (`authenticated`). There
are at most `per_peer` of them from one address and `total` in all; a new one past either bound makes room by
closing the oldest (of that address, or of all): a slow or silent client gives way to a new one, instead of the
new one being refused, so a client that sends its request at once gets through past a crowd of slow ones. Token
holders' connections are out of it once their first request is let in.

Behind a reverse proxy every connection comes from the proxy's address: `per_peer` then bounds the proxy's, which
reads whole requests before it passes them on.
"""

from __future__ import annotations

import asyncio
import logging

log = logging.getLogger(__name__)

Peer = tuple[str, int]


class Admission:
    def __init__(self, total: int, per_peer: int) -> None:
        self.total = total
        self.per_peer = per_peer
        self._all: dict[object, str] = {}  # connection -> its address, oldest first
        self._by_host: dict[str, dict[object, asyncio.BaseTransport]] = {}
        self._by_peer: dict[Peer, object] = {}
        self.dropped = 0  # tests and benchmarks look

    def __len__(self) -> int:
        return len(self._all)

    def arrived(self, connection: object, peer: Peer | None, transport: asyncio.BaseTransport) -> None:
        host = peer[0] if peer is not None else ""
        same = self._by_host.get(host)
        if same is not None and len(same) >= self.per_peer:
            self._drop(next(iter(same)), f"more than {self.per_peer} from {host}")
        if len(self._all) >= self.total:
            self._drop(next(iter(self._all)), f"more than {self.total} in all")
        self._all[connection] = host
        self._by_host.setdefault(host, {})[connection] = transport
        if peer is not None:
            self._by_peer[peer] = connection

    def authenticated(self, peer: Peer | None) -> None:
        """A request from `peer` passed the gate: its connection is no longer counted."""
        if peer is not None and (connection := self._by_peer.get(peer)) is not None:
            self.left(connection, peer)

    def left(self, connection: object, peer: Peer | None) -> None:
        host = self._all.pop(connection, None)
        if host is None:
            return
        same = self._by_host[host]
        del same[connection]
        if not same:
            del self._by_host[host]
        if peer is not None and self._by_peer.get(peer) is connection:
            del self._by_peer[peer]

    def _drop(self, connection: object, why: str) -> None:
        host = self._all[connection]
        transport = self._by_host[host][connection]
        peer = transport.get_extra_info("peername")
        self.left(connection, tuple(peer[:2]) if isinstance(peer, tuple) else None)
        self.dropped += 1
        if self.dropped == 1 or not self.dropped % 1000:  # once, then now and then: an attack would flood the log
            log.warning("closing connections that have not shown the token: %s (%d so far)", why, self.dropped)
        transport.close()
