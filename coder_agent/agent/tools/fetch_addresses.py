"""Which addresses `fetch` may connect to: public ones, and those the user's config allows besides.

A page the model asks for must not reach what only this machine can reach: the machine itself (127.0.0.0/8,
::1), its network (10/8, 192.168/16, fc00::/7, ...), the cloud's metadata service (169.254.169.254, link-local),
multicast and the other special ranges. The address is checked after the name is resolved, for every address the
name has (a name with one private address among public ones is refused, not tried in turn), and the connection
is made to an address that was checked, never to the name again: no DNS answer can change between the check and
the connect. An IPv6 address that carries an IPv4 one (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4
`2002::/16`) is judged by the IPv4 address it carries.

The user's config (`fetch_allow_hosts`, `fetch_allow_private`; `[fetch]` in config.toml) may allow more: a host
name (a glob: `*.corp.example`), an address, or a network (`10.1.0.0/16`).
"""

from __future__ import annotations

import fnmatch
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def carried_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for (mapped, NAT64, 6to4), if any."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def kind_of(address: Address) -> str | None:
    """None for a public address; else what it is, in words (`loopback`, `private`, ...)."""
    inner = carried_ipv4(address)
    if inner is not None:
        return kind_of(inner)
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address.is_unspecified:
        return "unspecified"
    if address.is_private:
        return "private"
    if address.is_reserved:
        return "reserved"
    if not address.is_global:
        return "non-public"
    return None


def bare_host(host: str) -> str:
    """A host as rules and the config name it: lower case, no trailing dot, no IPv6 brackets."""
    return host.strip().strip("[]").rstrip(".").lower()


@dataclass(frozen=True)
class FetchPolicy:
    """What the user's config allows `fetch` besides public addresses."""

    allow_hosts: tuple[str, ...] = ()  # host names (globs), addresses or networks
    allow_private: bool = False  # every address, whatever it is
    _networks: tuple[Network, ...] = field(default=(), init=False, repr=False, compare=False)
    _names: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        networks, names = [], []
        for entry in self.allow_hosts:
            try:
                networks.append(ipaddress.ip_network(bare_host(entry), strict=False))
            except ValueError:
                names.append(bare_host(entry))
        object.__setattr__(self, "_networks", tuple(networks))
        object.__setattr__(self, "_names", tuple(names))

    @classmethod
    def of(cls, allow_hosts: Iterable[str], allow_private: bool) -> FetchPolicy:
        return cls(tuple(allow_hosts), allow_private)

    def refusal(self, host: str, address: Address) -> str | None:
        """Why `host`, resolved to `address`, may not be fetched; None when it may."""
        kind = kind_of(address)
        if kind is None or self.allow_private:
            return None
        name = bare_host(host)
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in self._names):
            return None
        if any(address in network or (carried_ipv4(address) or address) in network for network in self._networks):
            return None
        where = str(address) if name == str(address) else f"{name} ({address})"
        return (
            f"{where} is a {kind} address, which fetch does not reach unless your config allows it "
            "(fetch_allow_hosts, or fetch_allow_private; [fetch] in config.toml)"
        )
