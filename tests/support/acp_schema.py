"""The ACP v1 schema checker lives with the eval harness (`evals/harness/acp_schema.py`), which checks every
line an agent writes during a trial; tests import it from here as before (tests may import evals, not the
other way round).
"""

from __future__ import annotations

from evals.harness.acp_schema import (
    NPM_MEMBER,
    NPM_PACKAGE,
    SCHEMA_URI,
    AcpSchema,
    AgentMessageValidator,
    SchemaUnavailableError,
    Violation,
    compile_schema,
    describe,
    fetch_from_npm,
    find_schema_path,
    repo_root,
)

__all__ = [
    "NPM_MEMBER",
    "NPM_PACKAGE",
    "SCHEMA_URI",
    "AcpSchema",
    "AgentMessageValidator",
    "SchemaUnavailableError",
    "Violation",
    "compile_schema",
    "describe",
    "fetch_from_npm",
    "find_schema_path",
    "repo_root",
]
