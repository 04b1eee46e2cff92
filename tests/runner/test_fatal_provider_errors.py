"""Fatal provider errors (wrong key, no permission, unknown model, missing key, bad or unreachable
api_base) are not retried: the run stops at once with one message and exit code 5, and items
already judged are kept."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from jurist.errors import ExitCode, FatalProviderError
from jurist.runner import RESULTS_DB, ResultStore
from jurist.testing import Fault, OpenAICompatibleServer
from jurist.testing.openai_server import closed_port_url
from support import ragbench_answer, ragbench_rows, ragbench_run, run_cli, write_jsonl


def _config_file(path: Path, config) -> Path:
    path.write_text(yaml.safe_dump(config.model_dump(mode="json")), encoding="utf-8")
    return path


def test_forty_items_against_a_closed_port_stop_within_seconds(llm_config, tmp_path, capsys):
    url = closed_port_url()
    # Default retries (6, with waits up to 30 s): a retried refusal would take minutes.
    config = llm_config.model_copy(update={"api_base": url, "num_retries": 6, "retry_max_wait": 30.0})
    config_file = _config_file(tmp_path / "judge.yaml", config)
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(40))
    out = tmp_path / "run"

    start = time.monotonic()
    code = run_cli(
        ["judge", "ragbench", str(data), "--out", str(out), "--config", str(config_file), "--no-progress"]
    )
    elapsed = time.monotonic() - start

    assert code == ExitCode.FATAL_PROVIDER == 5
    assert elapsed < 30
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    message = err[0]
    assert message.startswith("error: ") and "connection refused" in message
    for named in (str(config_file), config.model, url, "start the server"):
        assert named in message
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "stopped" and manifest["counts"] == {"ok": 0, "failed": 0}


@pytest.mark.parametrize("engine", ["auto", "litellm"])
@pytest.mark.parametrize(
    ("fault", "words"),
    [
        (Fault.unauthorized(), ["authentication failed", "set JURIST_TEST_API_KEY"]),
        (Fault.forbidden(), ["permission denied", "use a key allowed"]),
        (Fault.model_not_found(), ["does not know this model", "check the model name"]),
    ],
)
def test_refusals_are_not_retried_and_stop_the_run(engine, fault, words, server, llm_config, tmp_path):
    config = llm_config.model_copy(update={"engine": engine, "concurrency": 1, "num_retries": 6})
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(5))
    server.fail_always(fault)
    with pytest.raises(FatalProviderError) as info:
        ragbench_run(data, tmp_path / "run", config)
    assert server.requests == 1  # neither retried nor tried on the next item
    message = str(info.value)
    assert "\n" not in message
    for word in [*words, config.model, server.base_url]:
        assert word in message
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["status"] == "stopped"


def test_items_judged_before_the_refusal_are_kept_and_the_run_resumes(llm_config, tmp_path):
    answered = 0

    def responder(body: dict) -> str:
        nonlocal answered
        answered += 1
        if answered == 3:  # the key is revoked after three answers
            srv.fail_always(Fault.unauthorized())
        return ragbench_answer(body)

    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(8))
    out = tmp_path / "run"
    with OpenAICompatibleServer(responder) as srv:
        config = llm_config.model_copy(update={"api_base": srv.base_url, "concurrency": 1})
        with pytest.raises(FatalProviderError):
            ragbench_run(data, out, config)
        with ResultStore(out / RESULTS_DB) as store:
            assert store.counts() == {"ok": 3}
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["status"] == "stopped" and "authentication failed" in manifest["stopped_by"]

        srv.fail_always(None)  # a valid key again
        srv.reset_count()
        run = ragbench_run(data, out, config)
        assert srv.requests == 5 and run.summary["ok"] == 8


def test_a_missing_key_variable_stops_before_anything_is_sent(
    server, llm_config, tmp_path, capsys, monkeypatch
):
    monkeypatch.delenv("JURIST_TEST_API_KEY")
    config_file = _config_file(tmp_path / "judge.yaml", llm_config)
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(3))
    code = run_cli(
        ["judge", "ragbench", str(data), "--out", str(tmp_path / "run"), "--config", str(config_file)]
    )
    assert code == 5
    message = capsys.readouterr().err.strip()
    assert (
        "no API key is set" in message
        and "set JURIST_TEST_API_KEY" in message
        and str(config_file) in message
    )
    assert server.requests == 0


def test_a_missing_provider_key_stops_the_run(server, llm_config, tmp_path):
    # No api_key_env, and OPENAI_API_KEY is not set (the test environment removes it).
    config = llm_config.model_copy(update={"api_key_env": None})
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(3))
    with pytest.raises(FatalProviderError, match="no API key is set.*set OPENAI_API_KEY"):
        ragbench_run(data, tmp_path / "run", config)
    assert server.requests == 0


@pytest.mark.parametrize("engine", ["auto", "litellm"])
def test_an_api_base_that_is_not_a_url_stops_the_run(engine, llm_config, tmp_path):
    config = llm_config.model_copy(update={"api_base": "127.0.0.1:9/v1", "engine": engine})
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(3))
    with pytest.raises(FatalProviderError, match="server address cannot be used.*check api_base"):
        ragbench_run(data, tmp_path / "run", config)


# Failures that refuse every call, through the `jurist judge` command: each stops the run at
# once (exit 5, one line), and the calls the run reports are the requests the server received.


def _judge_cli(tmp_path: Path, config, capsys, rows: int = 20) -> tuple[int, str, str, dict, Path]:
    """``jurist judge ragbench`` of ``rows`` items with ``config`` written to a file: the exit
    status, stdout, stderr, the run's manifest and the config file."""
    config_file = _config_file(tmp_path / "judge.yaml", config)
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(rows))
    out = tmp_path / "run"
    args = ["judge", "ragbench", str(data), "--out", str(out), "--config", str(config_file), "--no-progress"]
    code = run_cli(args)
    captured = capsys.readouterr()
    manifest = json.loads((out / "manifest.json").read_text())
    return code, captured.out, captured.err, manifest, config_file


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ")
    return lines[0]


@pytest.mark.parametrize("engine", ["auto", "litellm", "lm15"])
def test_an_https_base_against_a_plain_http_server_stops_at_the_handshake(
    engine, server, llm_config, tmp_path, capsys
):
    https = server.base_url.replace("http://", "https://")
    # Default retries (6, waits up to 30 s): retried, twenty items would take minutes.
    config = llm_config.model_copy(
        update={"api_base": https, "engine": engine, "num_retries": 6, "retry_max_wait": 30.0}
    )
    code, _, err, manifest, config_file = _judge_cli(tmp_path, config, capsys)

    assert code == ExitCode.FATAL_PROVIDER == 5
    message = _one_line(err)
    for named in ("TLS handshake", str(config_file), config.model, https, "takes http://, not https://"):
        assert named in message
    # One handshake per item in flight, none retried, no later item tried; no request arrived.
    assert 1 <= server.connections <= config.concurrency
    assert server.requests == 0
    assert manifest["status"] == "stopped" and manifest["counts"] == {"ok": 0, "failed": 0}
    assert manifest["usage"]["calls"] == server.requests == 0


@pytest.mark.parametrize("engine", ["auto", "litellm", "lm15"])
def test_a_misspelt_provider_prefix_stops_before_anything_is_sent(
    engine, server, llm_config, tmp_path, capsys
):
    config = llm_config.model_copy(
        update={"model": "openaii/gpt-4o-mini", "engine": engine, "num_retries": 6}
    )
    code, _, err, manifest, config_file = _judge_cli(tmp_path, config, capsys)

    assert code == 5
    message = _one_line(err)
    for named in ("provider is unknown", "provider openaii", "check the provider prefix", str(config_file)):
        assert named in message
    assert server.requests == server.connections == 0
    assert manifest["status"] == "stopped" and manifest["usage"]["calls"] == 0


@pytest.mark.parametrize("engine", ["auto", "litellm"])
@pytest.mark.parametrize(
    ("fault", "words"),
    [
        (Fault.insufficient_quota(), ["quota or credit used up", "add credit"]),
        (Fault.billing_limit(), ["billing limit reached", "raise the spending limit"]),
        (Fault.billing_limit(status=402), ["billing limit reached", "raise the spending limit"]),
        (Fault.model_not_found(), ["does not know this model", "check the model name"]),
    ],
    ids=["429-insufficient-quota", "400-billing-hard-limit", "402-billing-hard-limit", "404-model-not-found"],
)
def test_quota_billing_and_unknown_model_stop_the_command_and_every_request_is_counted(
    engine, fault, words, server, llm_config, tmp_path, capsys
):
    server.fail_always(fault)
    config = llm_config.model_copy(update={"engine": engine, "num_retries": 6, "retry_max_wait": 30.0})
    code, _, err, manifest, config_file = _judge_cli(tmp_path, config, capsys)

    assert code == 5
    message = _one_line(err)
    for named in [*words, str(config_file), config.model, server.base_url]:
        assert named in message
    # One request per item in flight: none retried, no later item started.
    assert 1 <= server.requests <= config.concurrency
    # Those requests are in no item (none finished), but they are the run's calls: the items
    # in flight when the run stopped were let finish their request, then counted.
    assert manifest["counts"] == {"ok": 0, "failed": 0}
    assert manifest["usage"]["calls"] == manifest["unrecorded_usage"]["calls"] == server.requests


@pytest.mark.parametrize("engine", ["auto", "litellm"])
def test_an_ordinary_rate_limit_is_still_retried_and_every_request_is_counted(
    engine, server, llm_config, tmp_path, capsys
):
    # 429s whose error is a rate limit (no quota code), one with Retry-After: waited out.
    server.inject(Fault(429), Fault.rate_limit(0.01), Fault(429))
    config = llm_config.model_copy(update={"engine": engine})
    code, out, _, manifest, _ = _judge_cli(tmp_path, config, capsys)

    assert code == 0
    assert server.requests == 20 + 3 and server.statuses[429] == 3
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["ok"] == 20
    assert summary["usage"]["calls"] == manifest["usage"]["calls"] == server.requests
    assert f"({server.requests} provider calls, 0 cache hits)" in out
    assert "unrecorded_usage" not in manifest


def test_calls_refused_for_the_quota_stay_in_the_run_s_usage_when_it_resumes(
    server, llm_config, tmp_path, capsys
):
    server.fail_always(Fault.insufficient_quota())
    config = llm_config.model_copy(update={"concurrency": 2})
    code, *_ = _judge_cli(tmp_path, config, capsys, rows=6)
    assert code == 5
    refused = server.requests
    assert 1 <= refused <= 2

    server.fail_always(None)  # credit added
    code, out, _, manifest, _ = _judge_cli(tmp_path, config, capsys, rows=6)
    assert code == 0 and server.requests == refused + 6
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    # The items' calls are the requests that answered them; the run's usage adds the refused ones.
    assert summary["usage"]["calls"] == server.statuses[200] == 6
    assert "(6 provider calls, 0 cache hits)" in out
    assert manifest["status"] == "finished"
    assert manifest["usage"]["calls"] == server.requests
    assert manifest["unrecorded_usage"]["calls"] == refused
