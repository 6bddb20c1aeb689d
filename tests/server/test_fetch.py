"""The `fetch` tool through the protocol (every message checked against the ACP schema), against real web servers
on loopback addresses: 127.0.0.2 stands for a public site the config allows, 127.0.0.1 for this machine."""

from __future__ import annotations

import json
import re
import ssl
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

from coder_agent.config.settings import Settings
from coder_agent.scripted.script import Reply, tool_call
from coder_agent.scripted.server import ScriptedModelServer
from tests.support.driving import model_saw
from tests.support.recording_client import PermissionPolicy, PermissionRequest
from tests.support.server_helpers import Run, session
from tests.support.web_server import WebServer, web_server

pytestmark = pytest.mark.anyio

SITE = "127.0.0.2"
OTHER = "127.0.0.3"


@pytest.fixture
def site() -> Iterator[WebServer]:
    with web_server(SITE) as server:
        yield server


@pytest.fixture
def local() -> Iterator[WebServer]:
    with web_server("127.0.0.1") as server:
        yield server


@pytest.fixture
def other() -> Iterator[WebServer]:
    with web_server(OTHER) as server:
        yield server


@pytest.fixture
def allowed(make_settings: Callable[..., Settings]) -> Settings:
    """The config lets fetch reach the test's "public" site (and the other one), not the rest of loopback."""
    return make_settings(fetch_allow_hosts=[SITE, OTHER])


async def fetch_all(
    srv: ScriptedModelServer,
    settings: Settings,
    workspace: Path,
    *calls: dict[str, Any],
    mode: str = "bypass",
    permission: PermissionPolicy = "allow_once",
) -> tuple[list[dict[str, Any]], str, Run]:
    """One prompt whose model fetches each of `calls` in turn: (each call as the editor saw it, what the model
    was told of them all, the run)."""
    srv.enqueue(
        *(Reply.tool_calls([tool_call("fetch", args, id=f"f{i}")]) for i, args in enumerate(calls)),
        Reply.text("Done."),
    )
    async with session("bare", settings, workspace, mode=mode, permission=permission) as run:
        assert await run.prompt("read the docs") == "end_turn"
        shown = list(run.tool_calls().values())
    return shown, model_saw(srv.requests[-1].body), run


def text_of(call: dict[str, Any]) -> str:
    return "\n".join(item["content"]["text"] for item in call.get("content") or [] if item["type"] == "content")


async def test_an_html_page_comes_back_as_markdown_and_the_call_shows_its_url(
    srv: ScriptedModelServer, allowed: Settings, workspace: Path, site: WebServer
) -> None:
    url = site.url("/page")
    [call], told, _ = await fetch_all(srv, allowed, workspace, {"url": url})
    assert call["kind"] == "fetch" and call["title"] == f"Fetch {url}" and call["rawInput"] == {"url": url}
    assert call["statuses"] == ["pending", "in_progress", "completed"]
    shown = text_of(call)
    for markdown in ("# Widgets", "A **widget** turns.", f"[the notes]({site.url('/text')})", "```\nwidget.turn(3)"):
        assert markdown in shown and markdown in told
    assert "Title: Widget docs" in told and "- first\n- second" in told
    for dropped in ("SCRIPT TEXT", "color: red", "Home | Docs", "<p>"):
        assert dropped not in told
    assert call["rawOutput"]["content_type"] == "text/html"


async def test_text_json_and_markdown_pass_through_and_binary_is_refused_unread(
    srv: ScriptedModelServer, allowed: Settings, workspace: Path, site: WebServer
) -> None:
    paths = ("/text", "/json", "/md", "/image")
    calls, told, _ = await fetch_all(srv, allowed, workspace, *({"url": site.url(path)} for path in paths))
    text, data, markdown, image = calls
    assert "plain notes\nline two" in text_of(text)
    assert '{"name": "widget", "sizes": [1, 2]}' in text_of(data)
    assert "# Title\n\n*as is*" in text_of(markdown)
    assert all(call["statuses"][-1] == "completed" for call in (text, data, markdown))
    assert image["statuses"][-1] == "failed"
    assert "image/png, not text" in text_of(image) and "image/png, not text" in told
    assert "PNG" not in told


async def test_a_long_page_is_cut_and_the_result_says_so_and_where_to_go_on(
    srv: ScriptedModelServer, allowed: Settings, workspace: Path, site: WebServer
) -> None:
    big = site.url("/big?kb=3072")  # 3 MiB: over the 2 MiB read from the network
    calls, told, _ = await fetch_all(
        srv, allowed, workspace, {"url": big}, {"url": big, "start_index": 20_000, "max_length": 100}
    )
    first, second = calls
    assert first["rawOutput"]["cut"] is True and first["rawOutput"]["bytes_read"] == 2 * 1024 * 1024
    assert "[the page is longer than 2 MB: only its first part was read]" in text_of(first)
    assert "[characters 0 to 20,000 of 2,097,152; call fetch again with start_index=20000 for the rest]" in told
    assert "[characters 20,000 to 20,100 of 2,097,152; call fetch again with start_index=20100" in text_of(second)


async def test_a_long_html_page_is_read_in_parts_that_follow_each_other(
    srv: ScriptedModelServer, allowed: Settings, workspace: Path, site: WebServer
) -> None:
    """Converted only as far as each call reads (past the first 128 KiB parsed, for the last part)."""
    long = site.url("/long?kb=200")
    calls, _, _ = await fetch_all(
        srv,
        allowed,
        workspace,
        {"url": long, "max_length": 1000},
        {"url": long, "start_index": 1000, "max_length": 1000},
        {"url": long, "start_index": 100_000, "max_length": 60_000},
    )
    first, second, last = (text_of(call).split("\n\n", 1) for call in calls)
    assert "[characters 0 to 1,000; call fetch again with start_index=1000 for the rest]" in first[0]
    assert "[characters 1,000 to 2,000; call fetch again with start_index=2000 for the rest]" in second[0]
    numbers = [int(n) for n in re.findall(r"Paragraph (\d+):", first[1] + second[1])]
    assert numbers == list(range(len(numbers))) and len(numbers) > 20
    assert "Paragraph 1: *some* words about widgets." in first[1]
    end = re.search(r"\[characters 100,000 to ([\d,]+) of ([\d,]+)\]", last[0])
    assert end is not None and end.group(1) == end.group(2)  # the page's end: its length is known
    assert re.search(r"Paragraph \d+: \*some\* words about widgets\.$", last[1])


async def test_redirects_are_followed_up_to_five_and_a_loop_is_stopped(
    srv: ScriptedModelServer, allowed: Settings, workspace: Path, site: WebServer
) -> None:
    moved = site.url("/redirect?to=/text")
    calls, told, _ = await fetch_all(srv, allowed, workspace, {"url": moved}, {"url": site.url("/loop/0")})
    followed, loop = calls
    assert f"URL: {site.url('/text')}\n(redirected from {moved})" in text_of(followed)
    assert "plain notes" in text_of(followed)
    assert loop["statuses"][-1] == "failed"
    assert "stopped after 5 redirects" in text_of(loop) and "perhaps in a loop" in told
    assert [path for path in site.paths() if path.startswith("/loop/")] == [f"/loop/{n}" for n in range(6)]


async def test_a_redirect_to_an_address_the_config_does_not_allow_is_refused_before_it_is_reached(
    srv: ScriptedModelServer, allowed: Settings, workspace: Path, site: WebServer, local: WebServer
) -> None:
    """127.0.0.2 is allowed by the config; what it redirects to, 127.0.0.1 (this machine), is not."""
    [call], told, _ = await fetch_all(srv, allowed, workspace, {"url": site.url(f"/redirect?to={local.url('/text')}")})
    assert call["statuses"][-1] == "failed"
    assert "refused: 127.0.0.1 is a loopback address" in told
    assert local.seen == []


async def test_this_machine_is_refused_unless_the_config_allows_private_addresses(
    srv: ScriptedModelServer, make_settings: Callable[..., Settings], workspace: Path, local: WebServer
) -> None:
    by_name = f"http://localhost:{local.port}/text"  # checked once resolved, not by its name
    calls, told, _ = await fetch_all(srv, make_settings(), workspace, {"url": local.url("/text")}, {"url": by_name})
    assert [call["statuses"][-1] for call in calls] == ["failed", "failed"]
    assert "refused: 127.0.0.1 is a loopback address" in told
    assert "refused: localhost (127.0.0.1) is a loopback address" in told or "localhost (::1)" in told
    assert local.seen == []
    [call], told, _ = await fetch_all(srv, make_settings(fetch_allow_private=True), workspace, {"url": by_name})
    assert call["statuses"][-1] == "completed" and "plain notes" in told


async def test_a_rejected_fetch_sends_nothing_and_the_model_is_told(
    srv: ScriptedModelServer, allowed: Settings, workspace: Path, site: WebServer
) -> None:
    url = site.url("/text")
    [call], told, run = await fetch_all(srv, allowed, workspace, {"url": url}, mode="default", permission="reject_once")
    [asked] = run.client.permission_requests
    assert asked.tool_call.title == f"Fetch {url}" and asked.tool_call.kind == "fetch"
    assert [(option.option_id, option.name) for option in asked.options] == [
        ("allow_once", "Allow"),
        ("allow_always", f"Always allow fetching from {SITE} in this session"),
        ("reject_once", "Reject"),
    ]
    assert call["statuses"][-1] == "failed" and "Refused: the user rejected this call" in told
    assert site.seen == []


def choose(option_id: str) -> Callable[[PermissionRequest], str]:
    def pick(request: PermissionRequest) -> str:
        assert option_id in [option.option_id for option in request.options]
        return option_id

    return pick


async def test_always_allow_this_domain_is_kept_for_later_prompts_and_sessions_and_listed_by_rules(
    srv: ScriptedModelServer,
    make_settings: Callable[..., Settings],
    tmp_path: Path,
    workspace: Path,
    site: WebServer,
    other: WebServer,
) -> None:
    config = tmp_path / "config"
    settings = make_settings(config_dir=config, fetch_allow_hosts=[SITE, OTHER])
    srv.enqueue(Reply.tool_calls([tool_call("fetch", {"url": site.url("/text")})]), Reply.text("Done."))
    srv.enqueue(Reply.tool_calls([tool_call("fetch", {"url": site.url("/json")})]), Reply.text("Done."))
    async with session("bare", settings, workspace, permission=choose("allow_always_project")) as run:
        assert await run.prompt("read it") == "end_turn"
        [asked] = run.client.permission_requests
        assert [option.name for option in asked.options][1] == f"Always allow fetching from {SITE} in this project"
        assert await run.prompt("and that") == "end_turn"  # the next prompt: not asked again
        assert len(run.client.permission_requests) == 1
    assert "widget" in model_saw(srv.requests[-1].body)
    rules = tomllib.loads((config / "rules.toml").read_text())["rule"]
    assert rules == [{"action": "allow", "tool": "fetch", "domain": SITE, "project": str(workspace)}]

    # a later session, in a new agent: the domain is allowed; another one is asked for
    calls, told, run = await fetch_all(
        srv, settings, workspace, {"url": site.url("/md")}, {"url": other.url("/md")}, mode="default",
        permission="reject_once",
    )  # fmt: skip
    assert "*as is*" in told
    assert [request.tool_call.title for request in run.client.permission_requests] == [f"Fetch {other.url('/md')}"]
    assert calls[0]["statuses"][-1] == "completed" and other.seen == []

    listed = run_rules(config)
    assert f"1. allow fetch from {SITE} in {workspace}" in listed


def run_rules(config: Path) -> str:
    """`coder-agent rules`, as the user runs it: its output."""
    import os
    import subprocess
    import sys

    environ = {**os.environ, "CODER_AGENT_CONFIG_DIR": str(config)}
    done = subprocess.run(
        [sys.executable, "-m", "coder_agent", "rules"], env=environ, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_plan_mode_may_fetch_once_the_user_allows_it(
    srv: ScriptedModelServer, allowed: Settings, workspace: Path, site: WebServer
) -> None:
    [call], told, run = await fetch_all(srv, allowed, workspace, {"url": site.url("/page")}, mode="plan")
    assert len(run.client.permission_requests) == 1  # it asks, as in the default mode
    assert call["statuses"][-1] == "completed" and "# Widgets" in told


@pytest.mark.parametrize("path", ["/drip", "/hang"])
async def test_a_slow_server_times_out(
    srv: ScriptedModelServer, allowed: Settings, workspace: Path, site: WebServer, path: str
) -> None:
    """`/drip` sends a byte every 0.2 s (no read ever times out): the whole fetch's bound stops it."""
    started = time.monotonic()
    [call], told, _ = await fetch_all(srv, allowed, workspace, {"url": site.url(path), "timeout": 1})
    assert time.monotonic() - started < 8
    assert call["statuses"][-1] == "failed" and "timed out after 1 s" in told


async def test_nothing_of_the_users_or_the_agents_is_sent(
    srv: ScriptedModelServer,
    allowed: Settings,
    workspace: Path,
    site: WebServer,
    other: WebServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No key, no proxy (nor its password) from the environment, no user:password of the URL."""
    proxy = f"http://someone:proxy-secret@{OTHER}:{other.port}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, proxy)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # the scripted model's address: its client may use a proxy
    with_password = f"http://me:hunter2@{SITE}:{site.port}/headers"
    calls, told, _ = await fetch_all(srv, allowed, workspace, {"url": site.url("/headers")}, {"url": with_password})
    headers_call, refused = calls
    headers = json.loads(text_of(headers_call).split("\n\n", 1)[1])
    assert set(headers) <= {"host", "user-agent", "accept", "accept-encoding", "connection"}, headers
    assert headers["host"] == f"{SITE}:{site.port}"
    assert other.seen == []  # the proxy
    assert refused["statuses"][-1] == "failed" and "never sends credentials" in told
    assert site.paths() == ["/headers"]


async def test_a_redirect_to_another_host_is_followed_only_when_the_user_allowed_that_host(
    srv: ScriptedModelServer,
    make_settings: Callable[..., Settings],
    tmp_path: Path,
    workspace: Path,
    site: WebServer,
    other: WebServer,
) -> None:
    config = tmp_path / "config"
    config.mkdir()
    rules = config / "rules.toml"
    rules.write_text(f"[[rule]]\naction = 'allow'\ntool = 'fetch'\ndomain = '{SITE}'\n")
    settings = make_settings(config_dir=config, fetch_allow_hosts=[SITE, OTHER])
    away = site.url(f"/redirect?to={other.url('/text')}")
    [call], told, run = await fetch_all(srv, settings, workspace, {"url": away}, mode="default")
    assert run.client.permission_requests == [] and other.seen == []
    assert call["statuses"][-1] == "completed"
    assert f"redirects to {other.url('/text')}, on another host" in told and "call fetch with that URL" in told

    rules.write_text(rules.read_text() + f"\n[[rule]]\naction = 'allow'\ntool = 'fetch'\ndomain = '{OTHER}'\n")
    [call], told, run = await fetch_all(srv, settings, workspace, {"url": away}, mode="default")
    assert run.client.permission_requests == [] and "plain notes" in told


async def test_https_checks_the_certificate_for_the_host_name_at_the_address_checked(
    srv: ScriptedModelServer, make_settings: Callable[..., Settings], workspace: Path
) -> None:
    """The connection goes to the address checked, and TLS still names the host (its certificate is checked for
    that name): a certificate no public authority signed is refused."""
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    trustme.CA().issue_cert("localhost").configure_cert(tls)
    with web_server("127.0.0.1", tls=tls) as server:
        url = f"https://localhost:{server.port}/text"
        [call], told, _ = await fetch_all(srv, make_settings(fetch_allow_private=True), workspace, {"url": url})
    assert call["statuses"][-1] == "failed" and "CERTIFICATE_VERIFY_FAILED" in told
    assert server.server_names == ["localhost"] and server.seen == []


async def test_what_is_not_an_http_url_is_refused_before_anything_is_asked_or_sent(
    srv: ScriptedModelServer, allowed: Settings, workspace: Path, site: WebServer
) -> None:
    urls = (
        "file:///etc/passwd",
        "docs.python.org/3/",
        "ftp://127.0.0.2/x",
        site.url("/redirect?to=file:///etc/passwd"),
    )
    calls, told, run = await fetch_all(srv, allowed, workspace, *({"url": url} for url in urls), mode="default")
    assert [call["statuses"][-1] for call in calls] == ["failed"] * 4
    assert told.count("only http:// and https:// URLs are fetched") == 4 and "add https://" in told
    assert "root:" not in told
    assert len(run.client.permission_requests) == 1  # the redirect's first page only
    assert site.paths() == ["/redirect?to=file:///etc/passwd"]
