"""What the fetch tool costs beyond a plain GET, on a web server on 127.0.0.2 (no network in the figures).

Prints the median and p90 over R rounds of: a plain httpx GET of a documentation-like HTML page (the floor); the
tool's GET (`fetch_http.get`: the address checks, a client per hop, the caps); the same with the conversion to
Markdown (`fetch_pages`), which is most of the cost; and one redirect followed. Then the conversion of pages of
several sizes up to the 2 MiB read at most, once each: as far as one call reads (20,000 characters), and whole.

    python bench/fetch.py [--rounds 21] [--kb 60]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anyio
import httpx

from coder_agent.agent.tools.fetch import DEFAULT_LENGTH
from coder_agent.agent.tools.fetch_addresses import FetchPolicy
from coder_agent.agent.tools.fetch_http import MAX_BYTES, get
from coder_agent.agent.tools.fetch_pages import decode, html_to_markdown

HOST = "127.0.0.2"
SECTION = (
    "<section><h2 id='f{n}'>function_{n}(x, y)</h2><p>Returns the <a href='/api#f{n}'>widget</a> for "
    "<code>x</code> and <em>y</em>; raises <code>ValueError</code> when they differ.</p>"
    "<pre><code class='language-python'>widget = function_{n}(1, 2)\nprint(widget)\n</code></pre>"
    "<table><tr><th>name</th><th>type</th></tr><tr><td>x</td><td>int</td></tr></table>"
    "<ul><li>since 1.{n}</li><li>see also function_{m}</li></ul></section>\n"
)


def page(kb: int) -> bytes:
    head = "<!doctype html><html><head><title>API</title><script>var a = 1;</script></head><body><nav>x</nav><main>"
    body, n = [head], 0
    while sum(map(len, body)) < kb * 1024:
        body.append(SECTION.format(n=n, m=n + 1))
        n += 1
    return ("".join(body) + "</main></body></html>").encode()


def serve(pages: dict[str, bytes]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def do_GET(self) -> None:
            if self.path == "/moved":
                self.send_response(302)
                self.send_header("Location", "/page")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = pages[self.path]
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer((HOST, 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server


async def timed(rounds: int, step: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        await step()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9) - 1]


async def main(rounds: int, kb: int) -> None:
    server = serve({"/page": page(kb)})
    base = f"http://{HOST}:{server.server_address[1]}"
    policy = FetchPolicy.of([HOST], False)

    tls = httpx.create_ssl_context(trust_env=False)  # made once, as fetch makes it

    async def plain() -> object:
        async with httpx.AsyncClient(trust_env=False, verify=tls) as client:
            return (await client.get(base + "/page")).content

    async def tool_get(path: str = "/page") -> object:
        return await get(base + path, policy, follows=lambda url: False, timeout=30)

    async def with_markdown() -> object:
        fetched = await get(base + "/page", policy, follows=lambda url: False, timeout=30)
        html = decode(fetched.body, "utf-8", True)
        return await anyio.to_thread.run_sync(html_to_markdown, html, fetched.url, DEFAULT_LENGTH + 1)

    print(f"a {kb} KiB HTML page, {rounds} rounds, median / p90 ms")
    for name, step in (
        ("plain httpx GET (the floor)", plain),
        ("fetch's GET (checks, caps)", tool_get),
        ("fetch's GET + Markdown", with_markdown),
        ("fetch's GET, one redirect", lambda: tool_get("/moved")),
    ):
        await step()  # warm: imports, the TLS context
        median, p90 = await timed(rounds, step)
        print(f"  {name:32} {median:8.1f} {p90:8.1f}")
    print("conversion to Markdown alone, once each: as far as one call reads / the whole page")
    for size in (16, 64, 256, 1024, MAX_BYTES // 1024):
        html = page(size).decode()
        took = []
        for need in (DEFAULT_LENGTH + 1, None):
            started = time.perf_counter()
            markdown = html_to_markdown(html, base + "/page", need).markdown
            took.append((time.perf_counter() - started) * 1000)
        print(f"  {size:6} KiB -> {len(markdown) // 1024:5} KiB of Markdown: {took[0]:8.0f} ms / {took[1]:8.0f} ms")
    server.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--kb", type=int, default=60, help="the page's size (default: 60 KiB, a docs page)")
    arguments = parser.parse_args()
    anyio.run(main, arguments.rounds, arguments.kb)
