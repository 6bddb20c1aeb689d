"""`initialize`: version negotiation and capabilities."""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationError, ValidationInfo, ValidatorFunctionWrapHandler, field_validator

from .base import Wire
from .elicitation import ElicitationCapabilities, ElicitationMode


class Implementation(Wire):
    name: str
    version: str
    title: str | None = None


class FileSystemCapabilities(Wire):
    read_text_file: bool = False
    write_text_file: bool = False


class AuthCapabilities(Wire):
    terminal: bool = False  # the client can run the agent's terminal login


class ClientSessionCapabilities(Wire):
    compaction: dict[str, Any] | None = None  # unstable: `{}` when the client takes `compaction_update`s


class ClientCapabilities(Wire):
    fs: FileSystemCapabilities = Field(default_factory=FileSystemCapabilities)
    terminal: bool = False
    auth: AuthCapabilities = Field(default_factory=AuthCapabilities)
    session: ClientSessionCapabilities | None = None
    elicitation: ElicitationCapabilities | None = None

    @field_validator("auth", "elicitation", mode="wrap")
    @classmethod
    def _default_on_error(cls, value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
        try:  # `x-deserialize-default-on-error`
            return handler(value)
        except ValidationError:
            return AuthCapabilities() if info.field_name == "auth" else None

    @property
    def elicitation_modes(self) -> frozenset[ElicitationMode]:
        """The elicitation modes the client renders (none when it advertised no `elicitation`)."""
        return self.elicitation.modes() if self.elicitation is not None else frozenset()

    @property
    def compaction_updates(self) -> bool:
        return self.session is not None and self.session.compaction is not None


class AuthenticateRequest(Wire):
    method_id: str


class InitializeRequest(Wire):
    protocol_version: int
    client_capabilities: ClientCapabilities = Field(default_factory=ClientCapabilities)
    client_info: Implementation | None = None

    @field_validator("client_capabilities", "client_info", mode="wrap")
    @classmethod
    def _default_on_error(cls, value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
        # The schema marks these `x-deserialize-default-on-error`: capabilities we cannot read count as none.
        try:
            return handler(value)
        except ValidationError:
            return ClientCapabilities() if info.field_name == "client_capabilities" else None
