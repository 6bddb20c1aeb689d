"""`fetch`: read a web page (ACP tool kind `fetch`): HTML as Markdown; text, JSON and Markdown as they are.

It asks the user first as a command does (`Effect` `fetch`; plan mode too, where it may run: it changes nothing
here), and "always allow" keeps the page's host (`Intent.domain`, a lasting rule `domain = ...`). A redirect
to another host is followed only when the user allowed that host already; otherwise the model is told where it
leads and may fetch that URL (and the user is asked). Addresses, sizes, times and what is sent: `fetch_http`.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import httpx
from pydantic import Field

from .base import Intent, Tool, ToolArgs, ToolContext, ToolError, ToolResult, text_content
from .fetch_addresses import FetchPolicy
from .fetch_http import MAX_BYTES, Fetched, FetchError, checked_url, domain_of, get
from .fetch_pages import decode, html_to_markdown, sniffed, window

DEFAULT_LENGTH = 20_000
MAX_LENGTH = 60_000  # the longest result the model is ever given (`tool_calls.MAX_OUTPUT_CHARS`)
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 120.0
TITLE_URL_LENGTH = 100


class FetchArgs(ToolArgs):
    url: str = Field(min_length=1, max_length=8192, description="The http:// or https:// URL to read")
    max_length: int = Field(
        default=DEFAULT_LENGTH, ge=100, le=MAX_LENGTH, description="The most characters of the page returned"
    )
    start_index: int = Field(
        default=0, ge=0, description="The character to start at: where a cut result said to go on from"
    )
    raw: bool = Field(default=False, description="Return an HTML page's source instead of Markdown")
    timeout: float = Field(
        default=DEFAULT_TIMEOUT, gt=0, le=MAX_TIMEOUT, description="Seconds the whole fetch may take"
    )


def _short(url: str) -> str:
    return url if len(url) <= TITLE_URL_LENGTH else url[: TITLE_URL_LENGTH - 1] + "…"


class Fetch(Tool[FetchArgs]):
    name = "fetch"
    title = "Fetch a web page"
    kind = "fetch"
    args_model = FetchArgs
    read_only = False  # it may ask the user: one at a time

    def __init__(self, policy: Callable[[], FetchPolicy] = FetchPolicy) -> None:
        self._policy = policy  # the user's config of the moment

    async def prepare(self, args: FetchArgs, ctx: ToolContext) -> Intent:
        try:
            url = checked_url(args.url)
        except FetchError as exc:
            raise ToolError(str(exc)) from None
        shown = str(url)
        return Intent(
            title=f"Fetch {_short(shown)}",
            kind="fetch",
            effect="fetch",
            domain=domain_of(url),
            content=[text_content(shown)] if _short(shown) != shown else [],
        )

    async def run(self, args: FetchArgs, intent: Intent, ctx: ToolContext) -> ToolResult:
        def follows(target: httpx.URL) -> bool:
            domain = domain_of(target)
            hop = Intent(title=f"Fetch {target}", kind="fetch", effect="fetch", domain=domain)
            return ctx.runs_unasked(self.name, hop)

        try:
            page = await get(args.url, self._policy(), follows=follows, timeout=args.timeout)
        except FetchError as exc:
            raise ToolError(str(exc)) from None
        if page.not_followed is not None:
            told = (
                f"{page.url} redirects to {page.not_followed}, on another host, which you have not been allowed to "
                "fetch from: it was not followed. To read it, call fetch with that URL (the user is asked)."
            )
            return ToolResult(output=told, raw_output={"url": page.url, "redirect": page.not_followed})
        need = args.start_index + args.max_length + 1  # one more: whether the page goes on
        text, title, converted, complete = await anyio.to_thread.run_sync(
            _text_of, page, args.raw, need, abandon_on_cancel=True
        )
        part, cut_note = window(text, args.start_index, args.max_length, complete)
        head = [f"URL: {page.url}"]
        if page.redirects:
            head.append(f"(redirected from {page.redirects[0]})")
        failed = not 200 <= page.status < 300
        if failed:
            head.append(f"HTTP {page.status} {page.reason}".rstrip())
        what = page.media_type or "no content type"
        head.append(f"Content-Type: {what}" + ("; converted to Markdown" if converted else ""))
        if title:
            head.append(f"Title: {title}")
        if page.cut:
            head.append(f"[the page is longer than {MAX_BYTES // (1024 * 1024)} MB: only its first part was read]")
        if cut_note:
            head.append(cut_note)
        output = "\n".join(head) + "\n\n" + (part if part.strip() else "(the page has no text)")
        raw = {
            "url": page.url,
            "status": page.status,
            "content_type": page.media_type,
            "characters": len(text) if complete else None,
            "bytes_read": len(page.body),
            "cut": page.cut,
            "redirects": page.redirects,
        }
        return ToolResult(output=output, content=[text_content(output)], raw_output=raw, failed=failed)


def _text_of(page: Fetched, raw: bool, need: int) -> tuple[str, str | None, bool, bool]:
    """(the text, the page's title, whether it was converted from HTML, whether it is the whole page's)."""
    kind = sniffed(page.body) if page.kind == "unsure" else page.kind
    text = decode(page.body, page.charset, html=kind == "html")
    if kind != "html" or raw:
        return text, None, False, True
    converted = html_to_markdown(text, page.url, need)
    return converted.markdown, converted.title, True, converted.complete
