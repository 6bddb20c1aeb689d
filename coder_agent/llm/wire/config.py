"""What one model needs to be called: the settings that apply to every path to it. Stdlib only: the early first
call (before the runtime is imported) routes with it too."""

from __future__ import annotations

from typing import Any, NamedTuple

from ...kit import masking

# Records here and in the other modules the early first call imports are NamedTuples and plain classes, not
# dataclasses: `dataclasses` imports `inspect` and `ast`, and each frozen dataclass is made with `exec`: ~10 ms
# of the path to the first prompt's first chunk (see `prestart/`).


class RetryPolicy(NamedTuple):
    max_retries: int = 3
    base_delay: float = 1.0  # doubles each retry
    max_delay: float = 30.0  # also caps a server's Retry-After


_CONFIG_FIELDS = (
    "model",
    "api_base",
    "api_key",
    "timeout",
    "max_retries",
    "retry_base_delay",
    "retry_max_delay",
    "max_tokens",
    "reasoning_effort",
)


class ModelConfig:
    """Immutable: `replace` makes a changed copy. A plain class (not a NamedTuple): making one teaches the masking."""

    __slots__ = _CONFIG_FIELDS

    def __init__(
        self,
        model: str,  # a litellm model string
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,  # applied per read while streaming: a stall detector
        max_retries: int = 3,
        retry_base_delay: float = 1.0,
        retry_max_delay: float = 30.0,
        max_tokens: int | None = None,
        reasoning_effort: str | None = None,
    ) -> None:
        self.model = model
        self.api_base = api_base
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay
        self.max_tokens = max_tokens
        self.reasoning_effort = reasoning_effort
        # The key and the address a model is called with are secrets the agent holds, wherever this was made
        # (settings, the early call, doctor): a provider's error that echoes them is masked like the rest.
        masking.learn(masking.MODEL_KEY, self.api_key)
        masking.learn_url(masking.API_BASE_VARIABLE, self.api_base)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _CONFIG_FIELDS}

    def replace(self, **changes: Any) -> ModelConfig:
        return ModelConfig(**{**self.as_dict(), **changes})

    def __setattr__(self, name: str, value: object) -> None:
        if hasattr(self, name):
            raise AttributeError(f"ModelConfig is immutable: {name} (use replace)")
        object.__setattr__(self, name, value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelConfig) and self.as_dict() == other.as_dict()

    def __hash__(self) -> int:
        return hash(tuple(self.as_dict().values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.as_dict().items() if name != "api_key")
        return f"ModelConfig({shown})"

    @property
    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(self.max_retries, self.retry_base_delay, self.retry_max_delay)
