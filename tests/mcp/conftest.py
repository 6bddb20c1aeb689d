"""Fixtures of the MCP tests: the test server over HTTP and SSE, shared by a module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..support.mcp_servers import http_server, new_tag


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with http_server("http", new_tag()) as url:
        yield url


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    with http_server("sse", new_tag()) as url:
        yield url


@pytest.fixture
def tag() -> str:
    return new_tag()
