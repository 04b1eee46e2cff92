"""Recognising provider failures no retry can fix, and the one message that names what to fix."""

from __future__ import annotations

import socket
import ssl
from pathlib import Path

import pytest

from jurist.judges.config import JudgeConfig, load_config
from jurist.judges.lm import fatal_provider_error
from jurist.judges.retry import ProviderProblem, is_transient, provider_problem, reached_provider


def _chain(*errors: BaseException) -> BaseException:
    """``errors[0]`` raised from ``errors[1]`` raised from ... (outermost first)."""
    for outer, inner in zip(errors, errors[1:], strict=False):
        outer.__cause__ = inner
    return errors[0]


class APIStatusError(Exception):
    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class PermissionDeniedError(APIStatusError):
    pass


class APIConnectionError(Exception):
    pass


def test_a_dns_failure_is_a_bad_api_base_and_never_reached_the_provider():
    exc = _chain(APIConnectionError("Connection error."), socket.gaierror(-2, "Name or service not known"))
    problem = provider_problem(exc)
    assert problem == ProviderProblem("bad_url", "[Errno -2] Name or service not known")
    assert not is_transient(exc) and not reached_provider(exc)


def test_status_codes_anywhere_in_the_chain_are_recognised():
    wrapped_403 = _chain(RuntimeError("APIError"), PermissionDeniedError("Error code: 403", 403))
    problem = provider_problem(wrapped_403)
    assert problem is not None and problem.kind == "permission"
    assert provider_problem(APIStatusError("no such model", 404)).kind == "model"  # type: ignore[union-attr]
    assert provider_problem(APIStatusError("bad key", 401)).kind == "auth"  # type: ignore[union-attr]


def test_transient_and_item_level_failures_are_not_fatal():
    assert provider_problem(APIStatusError("slow down", 429)) is None
    assert provider_problem(APIStatusError("oops", 500)) is None
    assert provider_problem(TimeoutError("read timed out")) is None
    # A 400 that mentions a URL is about the item's request, not about api_base.
    assert provider_problem(APIStatusError("invalid url for image_url", 400)) is None
    assert is_transient(APIStatusError("slow down", 429))
    # LiteLLM reports a refused connection as a 500; it is still fatal, and not retried.
    refused = _chain(
        APIStatusError("Connection error.", 500), ConnectionRefusedError(111, "Connection refused")
    )
    assert provider_problem(refused).kind == "unreachable"  # type: ignore[union-attr]
    assert not is_transient(refused)


def test_the_message_names_config_file_model_provider_and_what_to_do(tmp_path: Path):
    path = tmp_path / "judge.yaml"
    path.write_text("model: anthropic/claude-x\napi_base: http://127.0.0.1:9/v1\n")
    config = load_config(path)
    message = str(fatal_provider_error(config, ProviderProblem("auth", "invalid x-api-key")))
    assert "\n" not in message
    for part in (str(path), "'anthropic/claude-x'", "provider anthropic", "http://127.0.0.1:9/v1"):
        assert part in message
    assert "set ANTHROPIC_API_KEY" in message and "invalid x-api-key" in message
    built = JudgeConfig(model="openai/gpt-4o-mini", api_key_env="MY_KEY")
    message = str(fatal_provider_error(built, ProviderProblem("missing_key", "")))
    assert "command line" in message and "set MY_KEY" in message


@pytest.mark.parametrize("overrides", [None, {"concurrency": 3}])
def test_the_config_source_is_kept_but_never_part_of_the_judge(tmp_path: Path, overrides):
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    for path in (first, second):
        path.write_text("model: openai/x\ntemperature: 0.1\n")
    a, b = load_config(first, overrides), load_config(second)
    assert a.source == first and b.source == second
    assert a.model_copy(update={"timeout": 9}).source == first
    assert a.fingerprint() == b.fingerprint()
    assert "source" not in a.model_dump() and "_source" not in a.model_dump_json()


def test_the_message_never_repeats_an_echoed_key(monkeypatch):
    monkeypatch.setenv("MY_KEY", "secret-value-123")
    config = JudgeConfig(model="openai/x", api_key_env="MY_KEY")
    echoed = "Incorrect API key: secret-value-123 (Authorization: Bearer secret-value-123, sk-abcdef123456)"
    message = str(fatal_provider_error(config, ProviderProblem("auth", echoed)))
    assert "secret-value-123" not in message and "sk-abcdef123456" not in message


class RateLimitError(APIStatusError):
    """Like the OpenAI SDK's: the status, and the error object's ``code`` and ``type``."""

    def __init__(self, message: str, *, code: str, error_type: str) -> None:
        super().__init__(message, 429)
        self.code = code
        self.type = error_type
        self.body = {"message": message, "type": error_type, "code": code}


class ConnectError(Exception):
    """Named like httpx's and lm15's error of a connection's set-up."""


class ConnectTimeout(Exception):
    pass


def test_a_used_up_quota_is_fatal_though_it_comes_as_a_429_and_a_rate_limit_is_not():
    quota = RateLimitError(
        "You exceeded your current quota", code="insufficient_quota", error_type="insufficient_quota"
    )
    problem = provider_problem(quota)
    assert problem is not None and problem.kind == "billing"
    assert not is_transient(quota) and reached_provider(quota)  # the provider answered it
    limited = RateLimitError("Rate limit reached", code="rate_limit_exceeded", error_type="requests")
    assert provider_problem(limited) is None and is_transient(limited)
    # The code alone decides, never the words: a rate limit that talks of quotas is a rate limit.
    worded = RateLimitError("quota per minute exceeded", code="rate_limit_exceeded", error_type="tokens")
    assert provider_problem(worded) is None
    assert provider_problem(APIStatusError("Payment Required", 402)).kind == "billing"  # type: ignore[union-attr]


def test_a_failed_tls_handshake_is_fatal_and_sent_nothing():
    wrong_version = ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number")
    exc = _chain(APIConnectionError("Connection error."), ConnectError("TLS handshake failed"), wrong_version)
    problem = provider_problem(exc)
    assert problem is not None and problem.kind == "tls" and "WRONG_VERSION_NUMBER" in problem.detail
    assert not is_transient(exc) and not reached_provider(exc)
    untrusted = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] self-signed certificate")
    assert provider_problem(_chain(APIConnectionError("Connection error."), untrusted)).kind == "tls"  # type: ignore[union-attr]
    # A connection the server closed mid-answer is no handshake failure: retried, and counted.
    closed = _chain(APIConnectionError("Connection error."), ssl.SSLEOFError(8, "EOF occurred"))
    assert provider_problem(closed) is None and reached_provider(closed)


def test_an_unknown_provider_is_recognised_by_litellm_s_refusal_only():
    refused = _chain(
        APIStatusError("[openaii/x] litellm.BadRequestError: LLM Provider NOT provided.", 400),
        APIStatusError("litellm.BadRequestError: LLM Provider NOT provided. Pass in the LLM provider", 400),
    )
    problem = provider_problem(refused)
    assert problem is not None and problem.kind == "provider"
    assert not reached_provider(refused)
    # A provider's 400 that quotes those words (an item's text, say) is the item's problem.
    quoted = APIStatusError("Invalid content: 'LLM Provider NOT provided' is not allowed", 400)
    assert provider_problem(quoted) is None and reached_provider(quoted)


def test_a_connection_that_could_not_be_made_is_not_counted_as_a_call():
    timed_out = _chain(APIConnectionError("Connection error."), ConnectTimeout("timed out connecting"))
    assert provider_problem(timed_out) is None  # not fatal: a connect timeout may pass
    assert not reached_provider(timed_out)
    read_timeout = _chain(APIConnectionError("Connection error."), TimeoutError("read timed out"))
    assert reached_provider(read_timeout)
