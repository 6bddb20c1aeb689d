"""Fixtures shared by the agent tests."""

from tests.support.file_fixtures import any_ctx, bare_client, bare_ctx, editor_client, editor_ctx, tasks

__all__ = ["any_ctx", "bare_client", "bare_ctx", "editor_client", "editor_ctx", "tasks"]
