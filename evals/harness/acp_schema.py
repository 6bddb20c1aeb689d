"""The official ACP v1 JSON schema, and a strict checker for every line an agent writes to stdout.

The schema is loaded, never copied into the repo: ``$ACP_SCHEMA_PATH``, else the shared snapshot beside the
repo, else the copy shipped in the npm package ``@agentclientprotocol/sdk`` (fetched once with ``npm pack``).
The eval harness checks every trial's wire with it; ``tests/support/acp_schema.py`` re-exports it for the tests.

How the schema tags messages (``x-method`` / ``x-side`` in ``$defs``): ``x-side`` names the side that *handles
the method*, for requests and responses alike, so ``InitializeRequest`` and ``InitializeResponse`` both carry
``x-method: initialize, x-side: agent``. A tag alone can't tell a request from its response; the envelope unions
can. ``AgentRequest.params`` lists what the agent may ask, ``AgentNotification.params`` what it may notify, and
``AgentResponse``'s ``result`` branch the results it may return. Each union is keyed by its members' ``x-method``.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import tarfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry
from referencing.jsonschema import DRAFT202012

NPM_PACKAGE = "@agentclientprotocol/sdk@2.4.0"
NPM_MEMBER = "package/schema/v1/schema.json"
SCHEMA_URI = "urn:acp:schema:v1"


class SchemaUnavailableError(RuntimeError):
    """No ACP schema could be found or fetched."""


def repo_root() -> Path:
    """The folder holding pyproject.toml."""
    for folder in Path(__file__).resolve().parents:
        if (folder / "pyproject.toml").is_file():
            return folder
    raise SchemaUnavailableError(f"no pyproject.toml above {__file__}")


def fetch_from_npm(cache_dir: Path, member: str = NPM_MEMBER) -> Path:
    """``npm pack`` the official TypeScript SDK into cache_dir and pull its v1 schema out (cached)."""
    name = Path(member).name.removeprefix("schema").removesuffix(".json")  # "" or ".unstable"
    target = cache_dir / f"{NPM_PACKAGE.lstrip('@').replace('/', '-').replace('@', '-')}-v1-schema{name}.json"
    if target.is_file():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["npm", "pack", NPM_PACKAGE, "--pack-destination", str(cache_dir), "--silent"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if done.returncode != 0:
        raise SchemaUnavailableError(f"npm pack {NPM_PACKAGE} failed: {done.stderr.strip()[-500:]}")
    tarball = cache_dir / done.stdout.strip().splitlines()[-1]
    with tarfile.open(tarball) as tar:
        extracted = tar.extractfile(member)
        if extracted is None:
            raise SchemaUnavailableError(f"{tarball} has no {member}")
        data = extracted.read()
    partial = target.with_name(f"{target.name}.{os.getpid()}.part")
    partial.write_bytes(data)
    partial.replace(target)
    tarball.unlink(missing_ok=True)
    return target


def find_schema_path(
    env: Mapping[str, str] | None = None,
    root: Path | None = None,
    fetch: Callable[[Path], Path] = fetch_from_npm,
) -> Path:
    """Where the v1 schema is: $ACP_SCHEMA_PATH, the shared snapshot, or the npm package's copy."""
    env = os.environ if env is None else env
    if explicit := env.get("ACP_SCHEMA_PATH"):
        path = Path(explicit)
        if not path.is_file():
            raise SchemaUnavailableError(f"ACP_SCHEMA_PATH={explicit} is not a file")
        return path
    root = repo_root() if root is None else root
    shared = root.parent / "shared" / "acp-schema" / "v1" / "schema.json"
    if shared.is_file():
        return shared
    try:
        return fetch(root / ".cache" / "acp-schema")
    except (OSError, subprocess.SubprocessError, tarfile.TarError, SchemaUnavailableError) as exc:
        raise SchemaUnavailableError(
            f"no ACP v1 schema: ACP_SCHEMA_PATH is unset, {shared} does not exist, and fetching "
            f"{NPM_PACKAGE} with npm failed ({exc}). Set ACP_SCHEMA_PATH to a copy of schema/v1/schema.json."
        ) from exc


def find_unstable_schema_path() -> Path:
    """v1 with its unstable parts (`schema.unstable.json`): beside the stable one, or from the npm package.

    For checking what an agent sends a client that advertised an unstable capability (e.g. `session.compaction`).
    """
    beside = find_schema_path().with_name("schema.unstable.json")
    if beside.is_file():
        return beside
    try:
        return fetch_from_npm(
            repo_root() / ".cache" / "acp-schema", NPM_MEMBER.replace("schema.json", "schema.unstable.json")
        )
    except (OSError, subprocess.SubprocessError, tarfile.TarError, SchemaUnavailableError) as exc:
        raise SchemaUnavailableError(
            f"no unstable ACP v1 schema beside {find_schema_path()} nor from npm: {exc}"
        ) from exc


@dataclass(frozen=True)
class AcpSchema:
    """The compiled parts of the schema that the wire checker needs."""

    agent_message: Draft202012Validator
    protocol_message: Draft202012Validator
    defs: Mapping[str, Draft202012Validator]
    agent_requests: Mapping[str, str]  # method -> $defs name of its params (agent -> client requests)
    agent_notifications: Mapping[str, str]  # method -> params def (agent -> client notifications)
    agent_results: Mapping[str, str]  # method of a client request -> def of the agent's result
    protocol_notifications: Mapping[str, str]  # x-side "protocol", e.g. $/cancel_request

    def errors(self, def_name: str, instance: Any) -> str | None:
        return describe(self.defs[def_name], instance)


def describe(validator: Draft202012Validator, instance: Any) -> str | None:
    """The most relevant schema error, readable, or None when the instance is valid."""
    error = best_match(validator.iter_errors(instance))
    return None if error is None else _explain(error)


def _explain(error: ValidationError, depth: int = 0) -> str:
    text = f"{error.json_path}: {error.message[:200]}"
    branches = error.schema.get(str(error.validator)) if isinstance(error.schema, dict) else None
    if not error.context or not isinstance(branches, list) or depth > 4:
        return text
    tags = [{k for k, v in b.get("properties", {}).items() if "const" in v} for b in branches if isinstance(b, dict)]
    tag = min(set.intersection(*tags), default=None) if len(tags) == len(branches) else None
    if tag is not None and isinstance(error.instance, dict):  # a tagged union, e.g. on sessionUpdate
        allowed = [branch["properties"][tag]["const"] for branch in branches]
        if error.instance.get(tag) not in allowed:
            found = repr(error.instance[tag]) if tag in error.instance else "missing"
            return f"{error.json_path}.{tag}: {found}, expected one of {allowed}"
        chosen = allowed.index(error.instance[tag])
        inner = best_match(sub for sub in error.context if sub.relative_schema_path[0] == chosen)
        return text if inner is None else _explain(inner, depth + 1)
    reasons = list(dict.fromkeys(f"{sub.json_path}: {sub.message[:120]}" for sub in error.context))
    return f"{text} (branches: {'; '.join(reasons[:8])})"


def _union_members(node: Any) -> list[str]:
    """The ``$defs`` names an envelope union lists, looking through nested anyOf/allOf."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return [ref.removeprefix("#/$defs/")]
        return [
            name for key in ("anyOf", "oneOf", "allOf") for sub in node.get(key, []) for name in _union_members(sub)
        ]
    return []


def _by_method(defs: Mapping[str, Any], members: list[str], side: str) -> dict[str, str]:
    table: dict[str, str] = {}
    for name in members:
        tags = defs[name]
        if "x-method" not in tags:  # ExtRequest / ExtNotification / ExtResponse: the "_..." escape hatch
            continue
        if tags.get("x-side") not in (side, "both"):  # "both": the unstable MCP-over-ACP messages
            raise SchemaUnavailableError(f"schema surprise: {name} has x-side {tags.get('x-side')}, not {side}")
        table[tags["x-method"]] = name
    return table


@functools.lru_cache(maxsize=4)
def compile_schema(path: str | None = None) -> AcpSchema:
    """Compile (once per path) the validators for the schema at path, or at find_schema_path()."""
    schema = json.loads(Path(path or find_schema_path()).read_text(encoding="utf-8"))
    defs: dict[str, Any] = schema["$defs"]
    registry: Registry[Any] = Registry().with_resource(SCHEMA_URI, DRAFT202012.create_resource(schema))
    checker = Draft202012Validator.FORMAT_CHECKER

    def compiled(pointer: str) -> Draft202012Validator:
        return Draft202012Validator({"$ref": f"{SCHEMA_URI}#{pointer}"}, registry=registry, format_checker=checker)

    branches = {branch.get("title"): index for index, branch in enumerate(schema["anyOf"])}
    results = next(b for b in defs["AgentResponse"]["anyOf"] if "result" in b.get("properties", {}))
    protocol = [name for name, tags in defs.items() if tags.get("x-side") == "protocol"]
    return AcpSchema(
        agent_message=compiled(f"/anyOf/{branches['Agent']}"),
        protocol_message=compiled(f"/anyOf/{branches['ProtocolLevel']}"),
        defs={name: compiled(f"/$defs/{name}") for name in defs},
        agent_requests=_by_method(defs, _union_members(defs["AgentRequest"]["properties"]["params"]), "client"),
        agent_notifications=_by_method(
            defs, _union_members(defs["AgentNotification"]["properties"]["params"]), "client"
        ),
        agent_results=_by_method(defs, _union_members(results["properties"]["result"]), "agent"),
        protocol_notifications=_by_method(defs, protocol, "protocol"),
    )


@dataclass(frozen=True)
class Violation:
    line_no: int  # 1-based, among the lines the agent wrote
    line: bytes
    problem: str

    def __str__(self) -> str:
        shown = self.line.decode("utf-8", "replace")
        shown = shown if len(shown) <= 400 else shown[:400] + "..."
        return f"agent line {self.line_no}: {self.problem}\n    {shown!r}"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicate keys in {keys}")
    return dict(pairs)


def _id_key(request_id: Any) -> str:
    return json.dumps(request_id)  # keeps 1 and "1" apart


class AgentMessageValidator:
    """Checks every line an agent writes. Feed it the client's lines too, so responses can be matched up."""

    def __init__(self, schema: AcpSchema | None = None) -> None:
        self.schema = schema or compile_schema()
        self.agent_lines: list[bytes] = []
        self.messages: list[dict[str, Any]] = []
        self.violations: list[Violation] = []
        self._agent_partial: list[bytes] = []
        self._client_partial: list[bytes] = []
        self._client_requests: dict[str, Any] = {}  # id -> method, until the agent answers
        self._agent_requests: set[str] = set()  # ids the client has not answered yet

    def feed_agent(self, chunk: bytes) -> list[dict[str, Any] | None]:
        """Raw stdout bytes, in any chunking: checks each completed line, returns what parsed (None if not)."""
        return [self.check_agent_line(line) for line in self._split(chunk, self._agent_partial)]

    def end_agent(self) -> None:
        """The agent closed stdout: a leftover partial line is a framing error."""
        if self._agent_partial:
            line = b"".join(self._agent_partial)
            self._agent_partial.clear()
            self.agent_lines.append(line)
            self._flag(line, "stdout ended inside a line (no trailing newline)")

    def feed_client(self, chunk: bytes) -> None:
        """Raw bytes the client wrote to the agent's stdin: only recorded, to learn request ids and methods."""
        for line in self._split(chunk, self._client_partial):
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):  # what the client sends may be deliberately broken
                continue
            if not isinstance(message, dict) or "id" not in message:
                continue
            if "result" in message or "error" in message:
                self._agent_requests.discard(_id_key(message["id"]))
            else:
                self._client_requests[_id_key(message["id"])] = message.get("method")

    def check_agent_line(self, line: bytes) -> dict[str, Any] | None:
        """One complete line (with its b"\\n"): framing, JSON, the schema's Agent branch, then per method."""
        self.agent_lines.append(line)
        message = None
        try:
            if not line.endswith(b"\n"):
                raise ValueError("no trailing newline")
            if not line.strip():
                raise ValueError("empty line")
            if line.endswith(b"\r\n"):
                raise ValueError("line ends in \\r\\n")
            value = json.loads(line.decode("utf-8"), parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
            if not isinstance(value, dict):
                raise ValueError(f"a JSON {type(value).__name__}, not one JSON object")
            message = value
        except ValueError as exc:  # includes UnicodeDecodeError and JSONDecodeError
            self._flag(line, f"bad framing: {exc}")
            return None
        self.messages.append(message)
        if problem := self._check(message):
            self._flag(line, problem)
        return message

    def report(self) -> str:
        head = f"{len(self.violations)} invalid line(s) among {len(self.agent_lines)} the agent wrote:"
        return "\n".join([head, *(str(v) for v in self.violations[:50])])

    def assert_valid(self) -> None:
        if self.violations:
            raise AssertionError(self.report())

    def _flag(self, line: bytes, problem: str) -> None:
        self.violations.append(Violation(len(self.agent_lines), line, problem))

    @staticmethod
    def _split(chunk: bytes, partial: list[bytes]) -> list[bytes]:
        lines: list[bytes] = []
        while (cut := chunk.find(b"\n")) >= 0:
            lines.append(b"".join([*partial, chunk[: cut + 1]]))
            partial.clear()
            chunk = chunk[cut + 1 :]
        if chunk:
            partial.append(chunk)
        return lines

    def _check(self, message: dict[str, Any]) -> str | None:
        if message.get("jsonrpc") != "2.0":
            return 'jsonrpc is not "2.0"'
        if extra := sorted(set(message) - {"jsonrpc", "id", "method", "params", "result", "error"}):
            return f"unknown top-level members {extra}"
        method = message.get("method")
        if isinstance(method, str) and method in self.schema.protocol_notifications and "id" not in message:
            envelope = describe(self.schema.protocol_message, message)
            params = self.schema.errors(self.schema.protocol_notifications[method], message.get("params"))
            return envelope or params
        if problem := describe(self.schema.agent_message, message):
            return f"not an Agent message: {problem}"
        if method is None:
            return self._check_response(message)
        if "result" in message or "error" in message:
            return "has both method and result/error"
        return self._check_call(method, message)

    def _check_call(self, method: str, message: dict[str, Any]) -> str | None:
        is_request = "id" in message
        table = self.schema.agent_requests if is_request else self.schema.agent_notifications
        kind = "request" if is_request else "notification"
        def_name = table.get(method) or (f"Ext{kind.title()}" if method.startswith("_") else None)
        if def_name is None:
            return f"{method!r} is not an agent->client {kind} in the schema"
        if is_request:
            key = _id_key(message["id"])
            if message["id"] is None or key in self._agent_requests:
                return f"request id {message['id']!r} is null or already used by an unanswered request"
            self._agent_requests.add(key)
        if problem := self.schema.errors(def_name, message.get("params")):
            return f"{method} params are not a valid {def_name}: {problem}"
        return None

    def _check_response(self, message: dict[str, Any]) -> str | None:
        if ("result" in message) == ("error" in message):
            return "a response needs exactly one of result and error"
        key = _id_key(message["id"])
        if "error" in message:
            self._client_requests.pop(key, None)  # id null (unparsable request) is fine for errors
            return None  # the Agent branch already checked it against Error
        if key not in self._client_requests:
            return f"result for id {message['id']!r}, which the client never sent or was already answered"
        method = self._client_requests.pop(key)
        def_name = self.schema.agent_results.get(method) if isinstance(method, str) else None
        if def_name is None and isinstance(method, str) and method.startswith("_"):
            def_name = "ExtResponse"
        if def_name is None:
            return f"result for {method!r}, which has no result type in the schema (expected an error)"
        if problem := self.schema.errors(def_name, message["result"]):
            return f"result for {method} is not a valid {def_name}: {problem}"
        return None
