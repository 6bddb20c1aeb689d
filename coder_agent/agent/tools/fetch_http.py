"""`fetch`'s GET: one URL, its redirects followed within a bound, every address checked, sizes and times capped.

The HTTP client is httpx, which the agent already depends on (its direct model path) and which litellm and the
mcp SDK bring: its public API has what this needs. Each hop's host is resolved here and every address checked
(`fetch_addresses`); the request then goes to a checked address (the URL's host replaced by it, the `Host`
header and TLS's server name kept as the host's, so the certificate is verified for the name), so that nothing
is resolved between the check and the connect. Each hop gets a client of its own: no connection, cookie or
anything else a server set is carried to the next hop.

Nothing of the user's or the agent's is sent: `trust_env=False` (no proxy or `.netrc` from the environment, no
`SSL_CERT_FILE`), no cookies, no `Authorization`, and a URL that holds a user name or password is refused. The
only headers are a User-Agent and what the agent accepts.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import anyio
import httpx

from .fetch_addresses import Address, FetchPolicy, bare_host
from .fetch_pages import kind_of, looks_binary, media_type

MAX_REDIRECTS = 5
# What is read of a body, decoded: converting HTML costs about 2 s per MB here (BeautifulSoup and markdownify),
# and the model reads a page 20,000 characters at a time: 2 MiB is a long documentation page.
MAX_BYTES = 2 * 1024 * 1024
CONNECT_TIMEOUT = 10.0
USER_AGENT = "coder-agent (+https://github.com/coder-agent/coder-agent)"
HEADERS = {
    "User-Agent": USER_AGENT,
    "Accept": "text/markdown, text/html;q=0.9, text/plain;q=0.8, application/json;q=0.8, */*;q=0.1",
    # not br or zstd: httpx decodes them only when their packages happen to be installed
    "Accept-Encoding": "gzip, deflate",
}


class FetchError(Exception):
    """The page cannot be fetched as asked; the message says why, for the model and the user."""


@dataclass
class Fetched:
    url: str  # after the redirects followed
    status: int
    reason: str
    media_type: str  # in lower case, no parameters; "" when the server named none
    charset: str | None
    kind: str  # `html`, `text` or `unsure` (`fetch_pages.kind_of`)
    body: bytes = b""
    cut: bool = False  # the body was longer than the cap: only its start was read
    redirects: list[str] = field(default_factory=list)  # the URLs redirected from, in order
    not_followed: str | None = None  # a redirect to another host, which the user has not allowed


def checked_url(text: str) -> httpx.URL:
    """The URL to fetch (no fragment), or `FetchError` saying why it is not one."""
    try:
        url = httpx.URL(text.strip())
    except (httpx.InvalidURL, TypeError) as exc:
        raise FetchError(f"not a URL ({exc}): {text}") from None
    if url.scheme not in ("http", "https"):
        hint = "" if url.scheme else " (this one has none: add https://)"
        raise FetchError(f"only http:// and https:// URLs are fetched{hint}: {text}")
    if not url.host:
        raise FetchError(f"the URL names no host: {text}")
    if url.userinfo:
        raise FetchError("the URL holds a user name or password, and fetch never sends credentials: ask without them")
    return url.copy_with(fragment=None)


def domain_of(url: httpx.URL) -> str:
    """The host as permissions name it: lower case, ASCII (an international name in its xn-- form)."""
    return bare_host(url.raw_host.decode("ascii"))


def same_site(one: httpx.URL, other: httpx.URL) -> bool:
    """Whether a redirect stays on the host the user allowed (its `www.` form counts as the same)."""
    return domain_of(one).removeprefix("www.") == domain_of(other).removeprefix("www.")


async def resolve(url: httpx.URL, policy: FetchPolicy) -> list[Address]:
    """Every address of the URL's host, each allowed by `policy`; `FetchError` when one is not."""
    host = domain_of(url)
    try:
        addresses: list[Address] = [ipaddress.ip_address(host)]
    except ValueError:
        try:
            with anyio.fail_after(CONNECT_TIMEOUT):
                found = await anyio.getaddrinfo(host, url.port or 0, type=socket.SOCK_STREAM)
        except TimeoutError:
            raise FetchError(f"could not resolve {host}: no answer within {CONNECT_TIMEOUT:g} s") from None
        except OSError as exc:
            raise FetchError(f"could not resolve {host}: {exc.strerror or exc}") from None
        addresses = []
        for *_, sockaddr in found:
            address = ipaddress.ip_address(str(sockaddr[0]).partition("%")[0])  # no IPv6 scope
            if address not in addresses:
                addresses.append(address)
    for address in addresses:
        refused = policy.refusal(host, address)
        if refused is not None:
            raise FetchError(f"refused: {refused}")
    if not addresses:
        raise FetchError(f"could not resolve {host}: it has no address")
    return addresses


@cache
def _tls() -> ssl.SSLContext:
    """certifi's CA bundle (what httpx uses), and nothing the environment names."""
    return httpx.create_ssl_context(trust_env=False)


def _client(timeout: float) -> httpx.AsyncClient:
    transport = httpx.AsyncHTTPTransport(verify=_tls(), trust_env=False, retries=0)
    return httpx.AsyncClient(
        transport=transport,
        trust_env=False,
        follow_redirects=False,
        headers=HEADERS,
        timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
    )


async def get(
    text: str,
    policy: FetchPolicy,
    *,
    follows: Callable[[httpx.URL], bool],
    timeout: float,
    max_bytes: int = MAX_BYTES,
    max_redirects: int = MAX_REDIRECTS,
) -> Fetched:
    """GET the URL `text`: redirects followed up to `max_redirects`, to another host only when `follows` says so;
    the body read up to `max_bytes`; all of it within `timeout` seconds. `FetchError` when it cannot be read."""
    url = checked_url(text)
    redirects: list[str] = []
    try:
        with anyio.fail_after(timeout):
            addresses = await resolve(url, policy)
            while True:
                async with _client(timeout) as client:
                    response = await _send(client, url, addresses)
                    try:
                        location = response.headers.get("location") if response.is_redirect else None
                        if location is None:
                            return await _read(response, url, redirects, max_bytes)
                    finally:
                        await response.aclose()
                target = _redirect_target(url, location)
                if len(redirects) >= max_redirects:
                    raise FetchError(
                        f"stopped after {max_redirects} redirects (the next one was to {target}): "
                        "the page redirects too often, perhaps in a loop"
                    )
                redirects.append(str(url))
                addresses = await resolve(target, policy)  # before anything else: where it leads must be allowed
                if not same_site(url, target) and not follows(target):
                    told = Fetched(str(url), response.status_code, response.reason_phrase, "", None, "text")
                    told.redirects, told.not_followed = redirects[:-1], str(target)
                    return told
                url = target
    except TimeoutError:
        raise FetchError(f"timed out after {timeout:g} s") from None


def _redirect_target(url: httpx.URL, location: str) -> httpx.URL:
    try:
        joined = url.join(location)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise FetchError(f"{url} redirects to something that is not a URL ({exc}): {location}") from None
    return checked_url(str(joined))


async def _send(client: httpx.AsyncClient, url: httpx.URL, addresses: list[Address]) -> httpx.Response:
    """The response's head, from the first checked address that answers."""
    failures = []
    for address in addresses:
        request = client.build_request(
            "GET",
            url.copy_with(host=str(address)),
            headers={"Host": url.netloc.decode("ascii")},
            # TLS verifies the certificate for the host's name, not the address connected to
            extensions={"sni_hostname": domain_of(url)} if url.scheme == "https" else {},
        )
        try:
            return await client.send(request, stream=True)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            failures.append(f"{address}: {exc or type(exc).__name__}")
        except httpx.HTTPError as exc:
            raise FetchError(f"{url}: {type(exc).__name__}: {exc}") from None
    raise FetchError(f"could not connect to {domain_of(url)} ({'; '.join(failures)})")


async def _read(response: httpx.Response, url: httpx.URL, redirects: list[str], max_bytes: int) -> Fetched:
    media, charset = media_type(response.headers.get("content-type", ""))
    fetched = Fetched(str(url), response.status_code, response.reason_phrase, media, charset, kind_of(media))
    fetched.redirects = redirects
    if fetched.kind == "binary":  # the body is never read
        raise FetchError(
            f"{url} is {media}, not text: fetch reads web pages, text, JSON and Markdown "
            "(an image, a PDF or an archive cannot be read this way)"
        )
    body = bytearray()
    try:
        # Decoded (gzip, deflate) as it comes: one network read is at most 64 KiB, so a compressed body takes at
        # most that times its ratio in memory before the cap applies.
        async for chunk in response.aiter_bytes():
            if len(body) + len(chunk) > max_bytes:
                body += chunk[: max_bytes - len(body)]
                fetched.cut = True
                break
            body += chunk
    except httpx.HTTPError as exc:
        raise FetchError(f"{url}: the body could not be read: {type(exc).__name__}: {exc}") from None
    if fetched.kind == "unsure" and looks_binary(bytes(body[:4096])):
        raise FetchError(f"{url} is not text ({media or 'no content type'}, binary bytes): fetch reads text only")
    fetched.body = bytes(body)
    return fetched
