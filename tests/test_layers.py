"""The layers of docs/architecture.md, enforced: what each unit of the package may import, and no import loops.

A unit is a room (a folder: `server`, `agent.workspace`, ...) or, in `agent/` and at the top, a loose module. The
rules are an allow-list: every unit is named in `ALLOWED` with the units it may import, so a new module has a
place in the rules from its first commit (an unknown unit fails the test), and a new arrow between rooms is a
line here that a reviewer sees. The stdlib rooms (`STDLIB_ONLY`) import nothing but the standard library, each
other, and what `THIRD_PARTY` names: they run before the runtime is imported (`prestart`) or are shared with it.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "coder_agent"

AGENT_ROOMS = ("sessions", "compaction", "workspace", "permissions", "tools", "commands")
# The core's loose modules: the turn's orchestration at the top, the seams (`client`, `errors`, `tool_source`) below.
AGENT_MODULES = (
    "prompting",
    "turn",
    "tool_calls",
    "context",
    "images",
    "usage",
    "client",
    "errors",
    "tool_source",
    "diagnostics",
)
AGENT_CORE = {f"agent.{room}" for room in AGENT_ROOMS} | {f"agent.{name}" for name in AGENT_MODULES}

# unit -> the units it may import (itself always)
ALLOWED: dict[str, set[str]] = {
    "coder_agent": set(),
    "__main__": {"cli"},
    # stdlib rooms
    "kit": set(),
    "store": {"kit"},
    "llm.wire": {"kit"},
    "prestart": {"coder_agent", "kit", "llm.wire", "store"},
    # the protocol, the user's configuration, the model
    "acp": {"kit"},
    "config": {"kit"},
    "llm": {"kit", "llm.wire", "prestart"},
    # the core: its seams, its rooms, the turn on top
    "agent": set(),
    "agent.errors": set(),
    "agent.diagnostics": set(),
    "agent.client": {"acp"},
    "agent.tool_source": {"agent.tools"},
    "agent.workspace": {"acp", "agent.client", "agent.errors", "kit", "prestart", "store"},
    "agent.tools": {"acp", "agent.client", "agent.diagnostics", "agent.errors", "agent.workspace", "kit", "prestart"},
    "agent.permissions": {"acp", "agent.tools", "config", "kit"},
    "agent.sessions": {
        *("acp", "agent.client", "agent.diagnostics", "agent.errors", "agent.permissions", "agent.tool_source"),
        "agent.workspace",
        *("kit", "llm", "prestart", "store"),
    },
    "agent.compaction": {"acp", "agent.client", "agent.errors", "agent.sessions", "kit", "llm", "store"},
    "agent.usage": {"acp", "agent.compaction", "agent.sessions", "llm"},
    # prestart: the menu (built-ins' names, the command files read), which the early stage announces too
    "agent.commands": {
        *("acp", "agent.errors", "agent.sessions", "agent.tool_source", "agent.workspace", "kit", "prestart"),
    },
    "agent.images": {"acp", "agent.errors", "llm"},
    "agent.context": {"acp", "agent.client", "agent.errors", "agent.workspace", "kit", "llm"},
    "agent.tool_permission": {
        *("acp", "agent.client", "agent.errors", "agent.permissions", "agent.sessions", "agent.tools"),
    },
    "agent.tool_calls": {
        *("acp", "agent.client", "agent.diagnostics", "agent.errors", "agent.permissions", "agent.sessions"),
        *("agent.tool_permission", "agent.tools"),
        *("agent.workspace", "kit", "llm"),
    },
    "agent.turn": {
        *("acp", "agent.client", "agent.compaction", "agent.sessions", "agent.tool_calls", "agent.tools"),
        *("agent.usage", "agent.workspace", "kit", "llm"),
    },
    # llm.wire: the one "no model is configured" message (`usable.NO_MODEL_MESSAGE`), which the login check says too
    "agent.prompting": AGENT_CORE - {"agent.prompting"} | {"acp", "kit", "llm", "llm.wire"},
    # what the core is served by and serves
    "local": {"acp", "agent.client", "agent.errors", "kit"},
    "mcp": {"acp", "agent.errors", "agent.tool_source", "agent.tools", "config", "kit"},
    # the session's language servers: the core's seam they serve, the user's [lsp.*] tables, the child
    # environment, and the watchdog and process groups that commands die by (a server dies by them too)
    "lsp": {"agent.diagnostics", "config", "kit", "local"},
    "server": AGENT_CORE | {"acp", "config", "kit", "llm", "llm.wire", "local", "lsp", "mcp", "prestart", "store"},
    "headless": {
        *("coder_agent", "acp", "agent.sessions", "agent.workspace", "config", "kit", "local", "prestart"),
        *("server", "store"),
    },
    "remote": {"acp", "config", "kit", "server"},
    "scripted": set(),
    # every command: anything
    "cli": set(),  # filled in below
}
ALLOWED["cli"] = set(ALLOWED) - {"cli", "__main__"}

STDLIB_ONLY = ("kit", "store", "llm.wire", "prestart")
# Packages outside the standard library that a stdlib room may use, and why.
THIRD_PARTY: dict[str, set[str]] = {
    # the early first call's https: certifi's CA bundle is a file path (~1 ms to import), as httpx uses it
    "prestart": {"certifi"},
}
# Of acp, the core may use the wire types alone (not the connection, the router or JSON-RPC errors).
CORE_MAY_USE_FROM_ACP = ("coder_agent.acp.schema",)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def unit(name: str) -> str:
    """The unit a module belongs to (see the module's docstring)."""
    parts = name.split(".")[1:]
    if not parts:
        return "coder_agent"
    if parts[0] == "agent" and len(parts) > 1:
        return f"agent.{parts[1]}"
    if parts[:2] == ["llm", "wire"]:
        return "llm.wire"
    return parts[0]


def _imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, bool]]:
    """(module, ours) for every import in the module, runtime and type-checking imports alike: ours are the
    coder_agent modules, the others top-level package names."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                ours = alias.name.startswith("coder_agent")
                yield (alias.name if ours else alias.name.split(".")[0]), ours
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if not target.startswith("coder_agent"):
                yield target.split(".")[0], False
                continue
            submodules = [f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in known]
            for module in submodules or [target]:
                yield module, True


def graph() -> dict[str, set[str]]:
    known = modules()
    return {
        name: {target for target, ours in _imports(name, path, known) if ours and target in known and target != name}
        for name, path in known.items()
    }


def test_every_unit_has_a_place_in_the_rules() -> None:
    assert sorted({unit(name) for name in modules()} - set(ALLOWED)) == []


def test_no_unit_imports_what_the_rules_do_not_allow() -> None:
    broken = [
        f"{source} imports {target}"
        for source, targets in graph().items()
        for target in sorted(targets)
        if unit(target) != unit(source) and unit(target) not in ALLOWED.get(unit(source), set())
    ]
    assert broken == []


def test_the_stdlib_rooms_import_nothing_else() -> None:
    known = modules()
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    broken = [
        f"{name} imports {target}"
        for name, path in known.items()
        if unit(name) in STDLIB_ONLY
        for target, ours in _imports(name, path, known)
        if not ours and target and target not in stdlib and target not in THIRD_PARTY.get(unit(name), set())
    ]
    assert broken == []


def test_the_core_uses_only_the_wire_types_of_the_protocol_layer() -> None:
    broken = [
        f"{source} imports {target}"
        for source, targets in graph().items()
        if unit(source) in AGENT_CORE
        for target in targets
        if unit(target) == "acp" and not target.startswith(CORE_MAY_USE_FROM_ACP)
    ]
    assert broken == []


def loops_in(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    loops: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return loops


def test_no_import_loops() -> None:
    assert loops_in(graph()) == []


def test_the_rules_themselves_allow_no_loop_between_units() -> None:
    assert loops_in({name: allowed - {name} for name, allowed in ALLOWED.items()}) == []


def _imported_modules(folder: Path) -> Iterator[tuple[Path, str]]:
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                yield from ((path, alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                yield path, node.module


def test_benches_do_not_import_the_tests() -> None:
    broken = [
        f"{path.name} imports {name}"
        for path, name in _imported_modules(ROOT / "bench")
        if name == "tests" or name.startswith("tests.")
    ]
    assert broken == []


def test_tests_share_code_through_tests_support_alone() -> None:
    """A test module never imports another test module: what tests share lives in tests/support/."""
    broken = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path, name in _imported_modules(ROOT / "tests")
        if name.startswith("tests.") and not name.startswith("tests.support")
    ]
    assert broken == []
