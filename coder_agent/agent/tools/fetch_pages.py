"""A fetched page as text for the model: HTML as Markdown, text, JSON and Markdown as they are, binary refused.

HTML goes through `markdownify` (MIT; on BeautifulSoup with the standard library's parser, so nothing compiled).
Of the three libraries one could use: `html2text` is GPL-3.0, which this Apache-2.0 package cannot ship; and
`trafilatura` extracts an article's main text, which drops what documentation pages are read for (code blocks,
tables, API lists) and brings lxml and five more packages. markdownify converts the whole page; what a reader
never wants (scripts, styles, navigation, forms) is taken out first, and the page's `<main>` (or its one
`<article>`) is kept alone when it has one. Links are made absolute, so that the model can fetch them in turn.

Parsing with the standard library's parser and converting cost about as much per element (0.1 ms or more: a
1 MiB page of documentation takes seconds). So a page is read only as far as the model reads: what it asks for
(`start_index` + `max_length`) and one character more, to know whether the page goes on. The first 128 KiB of
the page are parsed (twice as much, and again, while that is not enough) and converted block by block, in order.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
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
# Taken out before parsing: scripts and styles are most of a modern page's bytes, and they end at their first
# closing tag, as an HTML parser ends them.
_UNREAD = re.compile(r"<(script|style|svg|template)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
# Elements whose Markdown is only their children's, each a block of its own: a page is converted through them
_WRAPPERS = frozenset({"[document]", "html", "body", "main", "article", "section", "div", "header", "aside"})
_BLOCKS = frozenset(
    {
        *_WRAPPERS,
        *("p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "ul", "ol", "dl", "table", "blockquote", "hr"),
        *("figure", "details", "address", "fieldset"),
    }
)
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
    complete: bool = True  # False: converted only as far as asked, and the page goes on


FIRST_PARSE = 128 * 1024  # characters of HTML parsed first


def html_to_markdown(html: str, base_url: str, need: int | None = None) -> Converted:
    """A page as Markdown (see the module's docstring): at least its first `need` characters (None: all of it);
    `base_url` makes its links absolute."""
    html = _UNREAD.sub("", html)
    length = len(html) if need is None else FIRST_PARSE
    while True:
        whole = length >= len(html)
        converted = _converted(html if whole else html[:length], base_url, need)
        # Not whole: the last block may be cut where the parse stopped; a page read to its end is read again,
        # longer. `need` was met before the last block: every block converted ended before the cut.
        if whole or not converted.complete:
            return converted
        length *= 2


def _converted(html: str, base_url: str, need: int | None) -> Converted:
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
    parts: list[str] = []
    size = 0
    for block in _blocks(main):
        if need is not None and size >= need:
            return Converted(title or None, _joined(parts), complete=False)
        part = converter.convert_soup(block).strip()
        if part:
            parts.append(part)
            size += len(part) + 2
    return Converted(title or None, _joined(parts))


def _joined(parts: list[str]) -> str:
    return _BLANK_LINES.sub("\n\n", "\n\n".join(parts)).strip()


def _blocks(node: Any) -> Iterator[Any]:
    """The blocks of `node` in order: through the wrappers whose children are all blocks, down to the first
    element that is not one (a paragraph, a list, a table, a wrapper with text of its own), each converted whole."""
    children = [child for child in node.children if child.name is not None or str(child).strip()]
    if node.name in _WRAPPERS and all(child.name in _BLOCKS for child in children):
        for child in children:
            yield from _blocks(child)
    else:
        yield node


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


def window(text: str, start: int, length: int, complete: bool = True) -> tuple[str, str | None]:
    """`length` characters of `text` from `start`, and a note of what was left out (None: nothing). `complete`:
    `text` is the whole page (else the page goes on past it)."""
    total = len(text)
    if start >= total and total and complete:
        return "", f"[start_index {start:,} is past the end: the text has {total:,} characters]"
    end = min(total, start + length)
    part = text[start:end]
    if start == 0 and end == total and complete:
        return part, None
    shown = f"characters {start:,} to {end:,}" + (f" of {total:,}" if complete else "")
    more = f"; call fetch again with start_index={end} for the rest" if end < total or not complete else ""
    return part, f"[{shown}{more}]"
