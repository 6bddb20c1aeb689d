"""What one model needs to be called: the settings that apply to every path to it. Stdlib only: the early first
call (before the runtime is imported) routes with it too."""

from __future__ import annotations

from dataclasses import dataclass

from ...kit import masking


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    base_delay: float = 1.0  # doubles each retry
    max_delay: float = 30.0  # also caps a server's Retry-After


@dataclass(frozen=True)
class ModelConfig:
    model: str  # a litellm model string
    api_base: str | None = None
    api_key: str | None = None
    timeout: float = 120.0  # applied per read while streaming: a stall detector
    max_retries: int = 3
    retry_base_delay: float = 1.0
    retry_max_delay: float = 30.0
    max_tokens: int | None = None
    reasoning_effort: str | None = None

    def __post_init__(self) -> None:
        # The key and the address a model is called with are secrets the agent holds, wherever this was made
        # (settings, the early call, doctor): a provider's error that echoes them is masked like the rest.
        masking.learn(masking.MODEL_KEY, self.api_key)
        masking.learn_url(masking.API_BASE_VARIABLE, self.api_base)

    @property
    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(self.max_retries, self.retry_base_delay, self.retry_max_delay)
