"""A fetched page as text for the model: HTML as Markdown, text, JSON and Markdown as they are, binary refused.

HTML goes through `markdownify` (MIT; on BeautifulSoup with the standard library's parser, so nothing compiled).
Of the three libraries one could use: `html2text` is GPL-3.0, which this Apache-2.0 package cannot ship; and
`trafilatura` extracts an article's main text, which drops what documentation pages are read for (code blocks,
tables, API lists) and brings lxml and five more packages. markdownify converts the whole page; what a reader
never wants (scripts, styles, navigation, forms) is taken out first, and the page's `<main>` (or its one
`<article>`) is kept alone when it has one. Links are made absolute, so that the model can fetch them in turn.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# Types that are text though not `text/*` (besides `+json` and `+xml`)
TEXT_TYPES = frozenset(
    {
        *("application/json", "application/xml", "application/javascript", "application/x-javascript"),
        *("application/ecmascript", "application/yaml", "application/x-yaml", "application/toml"),
        *("application/x-ndjson", "application/csv", "application/sql", "application/graphql", "application/x-sh"),
        *("application/x-python", "application/x-tex"),
    }
)
# Types that may be text or not: the first bytes decide
UNSURE_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream", "application/unknown"})
_DROPPED = (
    *("script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "img", "picture"),
    *("video", "audio", "map", "form", "button", "input", "select", "textarea", "nav", "footer"),
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_LANGUAGE = re.compile(r"(?:language|lang|highlight(?:-source)?)-([A-Za-z0-9_+#-]+)")


def kind_of(media_type: str) -> str:
    """`html`, `text`, `unsure` (look at the bytes) or `binary`, for a media type in lower case without parameters."""
    if media_type in HTML_TYPES:
        return "html"
    if media_type.startswith("text/") or media_type in TEXT_TYPES or media_type.endswith(("+json", "+xml")):
        return "text"
    if media_type in UNSURE_TYPES:
        return "unsure"
    return "binary"


def media_type(content_type: str) -> tuple[str, str | None]:
    """(the media type in lower case, the charset named) of a Content-Type header."""
    main, _, rest = content_type.partition(";")
    charset = None
    for parameter in rest.split(";"):
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip().strip("\"'"):
            charset = value.strip().strip("\"'")
    return main.strip().lower(), charset


def looks_binary(start: bytes) -> bool:
    """Whether a body's first bytes are not text: a NUL, or not UTF-8 (a cut last character aside)."""
    if b"\x00" in start:
        return True
    try:
        start.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(start) - 3
    return False


def sniffed(start: bytes) -> str:
    """`html` or `text`, for a body of an unsure type that is text."""
    head = start[:1024].lstrip().lower()
    return "html" if head.startswith((b"<!doctype html", b"<html")) else "text"


def decode(body: bytes, charset: str | None, html: bool) -> str:
    """The body as text: the charset the header named, else the one an HTML page declares, else UTF-8."""
    if charset is None and html:
        found = _META_CHARSET.search(body[:4096])
        charset = found.group(1).decode("ascii") if found else None
    try:
        codec = codecs.lookup(charset or "utf-8").name
    except LookupError:
        codec = "utf-8"
    return body.decode(codec, errors="replace").lstrip("\ufeff")


@dataclass(frozen=True)
class Converted:
    title: str | None
    markdown: str


def html_to_markdown(html: str, base_url: str) -> Converted:
    """A page as Markdown (see the module's docstring); `base_url` makes its links absolute."""
    from bs4 import BeautifulSoup  # here: only a session that fetches a page pays the import
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title is not None else None
    for tag in soup.find_all(["head", *_DROPPED]):
        tag.decompose()
    for link in soup.find_all("a", href=True):
        href = str(link["href"]).strip()
        if href.startswith("#") or href.lower().startswith(("javascript:", "data:")):  # a heading's own anchor
            link.unwrap()
        else:
            link["href"] = urljoin(base_url, href)
    articles = soup.find_all("article")
    main = soup.find("main") or (articles[0] if len(articles) == 1 else None) or soup.body or soup
    converter = MarkdownConverter(heading_style="ATX", bullets="-", code_language_callback=_code_language)
    markdown = converter.convert_soup(main)
    return Converted(title or None, _BLANK_LINES.sub("\n\n", markdown).strip())


def _code_language(tag: Any) -> str | None:
    """The language of a `<pre>` block, from its classes or its `<code>`'s (`language-python`, `highlight-sh`)."""
    for element in (tag, tag.find("code")):
        if element is None:
            continue
        for name in element.get("class") or []:
            found = _LANGUAGE.fullmatch(name)
            if found:
                return found.group(1)
    return None


def window(text: str, start: int, length: int) -> tuple[str, str | None]:
    """`length` characters of `text` from `start`, and a note of what was left out (None: nothing)."""
    total = len(text)
    if start >= total and total:
        return "", f"[start_index {start:,} is past the end: the text has {total:,} characters]"
    end = min(total, start + length)
    part = text[start:end]
    if start == 0 and end == total:
        return part, None
    shown = f"characters {start:,} to {end:,} of {total:,}"
    more = f"; call fetch again with start_index={end} for the rest" if end < total else ""
    return part, f"[{shown}{more}]"
