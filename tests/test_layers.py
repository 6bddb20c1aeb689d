"""The layers of docs/architecture.md, enforced: who may import whom, and no import loops."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "coder_agent"

# package -> the coder_agent packages and modules it must never import
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "acp": ("agent", "server", "llm", "store", "mcp", "local", "headless", "remote", "auth", "cli", "settings"),
    "agent": ("server", "mcp", "local", "headless", "remote", "cli"),
    "llm": ("acp", "agent", "server", "store", "mcp", "local", "headless", "remote", "cli"),
    "store": ("acp", "agent", "server", "llm", "mcp", "local", "headless", "remote", "auth", "cli"),
    "mcp": ("server", "local", "headless", "remote", "cli"),
    "local": ("server", "mcp", "headless", "remote", "cli"),
    # the protocol side serves every entry point; none of them is below it
    "server": ("headless", "remote", "cli"),
    # saved keys and login: below the core (the model's key), above nothing that runs a session
    "auth": ("acp", "agent", "server", "store", "mcp", "local", "headless", "remote", "cli"),
    # `coder-agent serve` reaches the agent through `server.assembly` alone, as stdio does
    "remote": ("agent", "local", "headless", "mcp", "cli"),
}
# Of acp, the core may use the wire types alone (not the connection, the router or JSON-RPC errors).
CORE_MAY_USE_FROM_ACP = ("coder_agent.acp.schema",)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The coder_agent modules `name` imports (runtime and type-checking imports alike)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name.startswith("coder_agent"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if not target.startswith("coder_agent"):
                continue
            submodules = [f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in known]
            yield from submodules or [target]


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: {t for t in imports(name, path, known) if t in known and t != name} for name, path in known.items()}


def top(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_no_package_imports_what_its_layer_forbids() -> None:
    broken = [
        f"{source} imports {target}"
        for source, targets in graph().items()
        for target in targets
        if top(target) in FORBIDDEN.get(top(source), ())
    ]
    assert broken == []


def test_the_core_uses_only_the_wire_types_of_the_protocol_layer() -> None:
    broken = [
        f"{source} imports {target}"
        for source, targets in graph().items()
        if top(source) == "agent"
        for target in targets
        if top(target) == "acp" and not target.startswith(CORE_MAY_USE_FROM_ACP)
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


def test_no_loops_between_packages() -> None:
    """Folders and top-level modules alike (`auth` and `settings` once imported each other)."""
    packages: dict[str, set[str]] = {}
    for source, targets in graph().items():
        packages.setdefault(top(source), set()).update(top(t) for t in targets if top(t) not in ("", top(source)))
    assert loops_in(packages) == []
