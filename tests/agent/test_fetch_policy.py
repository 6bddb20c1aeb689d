"""What `fetch` may reach (the addresses and the user's config), and what "always allow this domain" keeps."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from coder_agent.agent.permissions.gate import PermissionRules, decide, permission_options
from coder_agent.agent.permissions.lasting_rules import Rule, decision_of, rule_for
from coder_agent.agent.tools.base import Intent
from coder_agent.agent.tools.fetch_addresses import FetchPolicy, kind_of
from coder_agent.config.settings import Settings


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("93.184.216.34", None),
        ("2606:2800:220:1:248:1893:25c8:1946", None),
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("fd00::1", "private"),
        ("169.254.169.254", "link-local"),  # the cloud's metadata service
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("100.64.0.1", "non-public"),  # carrier-grade NAT
        ("240.0.0.1", "any"),  # reserved: Python's versions name it differently
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
        ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
        ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
        ("::ffff:93.184.216.34", None),
    ],
)
def test_what_an_address_is(address: str, kind: str | None) -> None:
    found = kind_of(ipaddress.ip_address(address))
    assert found is not None if kind == "any" else found == kind


def test_the_config_allows_names_globs_addresses_and_networks_and_nothing_else() -> None:
    policy = FetchPolicy.of(["intranet.corp", "*.dev.corp", "127.0.0.2", "10.1.0.0/16", "[::1]"], False)
    loopback = ipaddress.ip_address("127.0.0.1")
    assert policy.refusal("Intranet.Corp.", ipaddress.ip_address("10.9.9.9")) is None
    assert policy.refusal("api.dev.corp", loopback) is None
    assert policy.refusal("127.0.0.2", ipaddress.ip_address("127.0.0.2")) is None
    assert policy.refusal("db", ipaddress.ip_address("10.1.200.3")) is None
    assert policy.refusal("::1", ipaddress.ip_address("::1")) is None
    assert policy.refusal("db", ipaddress.ip_address("10.2.0.1")) is not None
    refused = policy.refusal("localhost", loopback)
    assert refused is not None and refused.startswith("localhost (127.0.0.1) is a loopback address")
    assert "fetch_allow_hosts" in refused
    assert FetchPolicy().refusal("example.com", ipaddress.ip_address("93.184.216.34")) is None
    assert FetchPolicy.of([], True).refusal("localhost", loopback) is None


def test_fetch_is_configured_in_a_fetch_table_of_the_users_config_or_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    (config / "config.toml").write_text('[fetch]\nallow_hosts = ["127.0.0.2", "*.corp"]\nallow_private = true\n')
    environ = {"HOME": str(tmp_path), "CODER_AGENT_CONFIG_DIR": str(config)}
    settings = Settings.load(environ)
    assert settings.fetch_allow_hosts == ["127.0.0.2", "*.corp"] and settings.fetch_allow_private is True
    assert settings.sources["fetch_allow_hosts"] == str(config / "config.toml")
    environ["CODER_AGENT_FETCH_ALLOW_HOSTS"] = "docs.corp, 10.0.0.0/8"
    assert Settings.load(environ).fetch_allow_hosts == ["docs.corp", "10.0.0.0/8"]
    (config / "config.toml").write_text("[fetch]\nallow_privat = true\n")
    assert any("fetch_allow_privat" in notice for notice in Settings.load(environ).notices)


def fetch_of(domain: str) -> Intent:
    return Intent(title=f"Fetch https://{domain}/", kind="fetch", effect="fetch", domain=domain)


def test_a_fetch_asks_as_a_command_does_and_plan_mode_may_fetch() -> None:
    rules = PermissionRules()
    for mode in ("ask", "default", "accept-edits", "plan"):
        assert decide(mode, "fetch", fetch_of("docs.python.org"), rules, ["/p"]).action == "ask"
    assert decide("bypass", "fetch", fetch_of("docs.python.org"), rules, ["/p"]).action == "allow"
    rules.remember("fetch", fetch_of("docs.python.org"), allowed=True)
    assert decide("plan", "fetch", fetch_of("docs.python.org"), rules, ["/p"]).action == "allow"
    assert decide("default", "fetch", fetch_of("evil.example"), rules, ["/p"]).action == "ask"
    assert decide("ask", "fetch", fetch_of("docs.python.org"), rules, ["/p"]).action == "ask"
    names = [option.name for option in permission_options("fetch", fetch_of("docs.python.org"), lasting=True)]
    assert names == ["Allow", "Always allow fetching from docs.python.org in this project", "Reject"]


def test_a_lasting_rule_names_the_domain_and_matches_it_alone() -> None:
    rule = rule_for("allow", "fetch", fetch_of("docs.python.org"), "/p")
    assert rule == Rule("allow", tool="fetch", domain="docs.python.org", project="/p")
    assert rule.describe() == "allow fetch from docs.python.org in /p"
    assert decision_of([rule], "fetch", fetch_of("docs.python.org"), "/p/src") is True
    assert decision_of([rule], "fetch", fetch_of("python.org"), "/p") is None
    assert decision_of([rule], "fetch", fetch_of("docs.python.org"), "/elsewhere") is None
    wide = Rule.from_table({"action": "allow", "tool": "fetch", "domain": "*.Python.org"})
    assert decision_of([wide], "fetch", fetch_of("docs.python.org"), "/q") is True
    command = Intent(title="curl", kind="execute", effect="execute", command="curl https://docs.python.org")
    assert decision_of([wide], "run_command", command, "/q") is None
    for bad in ("https://docs.python.org", "docs.python.org:443", "docs.python.org/3"):
        with pytest.raises(ValueError, match="domain must be a host name"):
            Rule.from_table({"action": "allow", "tool": "fetch", "domain": bad})
