"""An API key that the provider echoes back is written nowhere: finding 7 of issue 12.

The loopback server here leaks the key the way a provider or proxy can: every error body
repeats the request's ``Authorization`` header, every reply carries it in
``system_fingerprint``, and some answers quote it inside the judged text (an explanation, a
reasoning) or inside garbage that fails to parse. jurist judges a RAGBench file and a YAML
example task through the CLI (with a 500 then success, a 400 recorded as failed, a parse
failure that ``--retry-failed`` repairs and one that stays failed), then scores, calibrates
and optimizes; afterwards not one byte of the key is found in any file written (run
directories, exports, reports, calibration outputs, the artifact, the SQLite response
cache), on stdout or stderr, or in any log record.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import threading
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from jurist.redaction import REDACTED, redact, redact_value, shape_token
from jurist.testing import Fault, OpenAICompatibleServer, last_user_message
from jurist.testing.openai_server import API_KEY_PLACEHOLDER, AUTHORIZATION_PLACEHOLDER
from support import loopback_config, ragbench_answer, ragbench_rows, run_cli, write_jsonl

KEY = "sk" + "-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0"  # built: the file holds no key-shaped text
KEY_ENV = "JURIST_TEST_API_KEY"  # the variable loopback_config's api_key_env names
REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "context-faithfulness"
LEAK = f"(debug: {AUTHORIZATION_PLACEHOLDER}; key {API_KEY_PLACEHOLDER})"
GARBAGE = f"Sorry, I will not answer in your format. {LEAK} api_key={API_KEY_PLACEHOLDER}"


class LeakyModel:
    """The loopback "model": what it answers depends on the row's number in the prompt.

    Row ``n`` by ``n % 6``: 0 a valid answer quoting the key; 1 a 500 first, then a valid
    answer; 2 always a 400; 3 garbage quoting the key until :attr:`repaired`, then a valid
    answer; 4 always garbage quoting the key; 5 a valid answer without the key. Rows from 100
    on (the optimizer's data) always get a valid answer quoting the key.
    """

    def __init__(self) -> None:
        self.repaired = False
        self.calls: Counter[int] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str | Fault:
        text = last_user_message(body)
        found = re.search(r"fact number (\d+)|\(row (\d+)\)", text)
        row = int(next(group for group in found.groups() if group)) if found else 100
        with self._lock:
            self.calls[row] += 1
            first_call = self.calls[row] == 1
        behaviour = 0 if row >= 100 else row % 6
        if behaviour == 1 and first_call:
            return Fault.server_error()
        if behaviour == 2:
            return Fault.bad_request()
        if behaviour == 4 or (behaviour == 3 and not self.repaired):
            return GARBAGE
        return self.valid(body, leak=behaviour != 5)

    @staticmethod
    def valid(body: dict[str, Any], *, leak: bool) -> str:
        said = f" {LEAK}" if leak else ""
        if "[[ ## verdict ## ]]" in json.dumps(body["messages"][0]):  # the YAML task (bool + confidence)
            return (
                f"[[ ## reasoning ## ]]\nEvery claim is in the documents.{said}\n\n"
                "[[ ## verdict ## ]]\nTrue\n\n[[ ## confidence ## ]]\n0.9\n\n[[ ## completed ## ]]"
            )
        answer = ragbench_answer(body, extra_key=None)
        return answer.replace("The first sentence is relevant.", f"The first sentence is relevant.{said}")


def _config_file(tmp_path: Path, base_url: str, **updates: Any) -> Path:
    config = loopback_config(base_url, tmp_path / "cache").model_copy(
        update={"parse_retries": 1, "concurrency": 3, **updates}
    )
    path = tmp_path / f"judge-{len(list(tmp_path.glob('judge-*.yaml')))}.yaml"
    path.write_text(json.dumps(config.model_dump(mode="json")), encoding="utf-8")
    return path


def _example_rows(tmp_path: Path, count: int = 6) -> Path:
    """The YAML example's first rows, each question marked with its row number for the model."""
    lines = (EXAMPLE / "rows.jsonl").read_text(encoding="utf-8").splitlines()[:count]
    rows = [json.loads(line) for line in lines]
    for number, row in enumerate(rows):
        row["question"] = f"{row['question']} (row {number})"
    return write_jsonl(tmp_path / "cf_rows.jsonl", rows)


def _files_holding(root: Path, secret: str) -> list[str]:
    """Every file under ``root`` whose bytes hold ``secret`` (raw, or decoded ignoring errors)."""
    needle = secret.encode()
    hits = []
    for file in sorted(root.rglob("*")):
        if not file.is_file():
            continue
        data = file.read_bytes()
        if needle in data or secret in data.decode("utf-8", errors="ignore"):
            hits.append(str(file.relative_to(root)))
    return hits


def _sqlite_text(db: Path) -> str:
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT error, raw, output FROM results").fetchall()
    return json.dumps(rows)


def test_the_echo_server_really_leaks_the_key():
    """The fault this file guards against: the loopback echoes the key into errors and replies."""
    model = LeakyModel()
    with OpenAICompatibleServer(model, echo_authorization=True) as server:
        for row, status in ((102, 200), (2, 400)):
            request = urllib.request.Request(
                f"{server.base_url}/chat/completions",
                data=json.dumps({"messages": [{"role": "user", "content": f"fact number {row}"}]}).encode(),
                headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    body, got = response.read().decode(), response.status
            except urllib.error.HTTPError as error:
                body, got = error.read().decode(), error.code
            assert got == status and body.count(KEY) >= 2, body


def test_an_echoed_key_is_found_nowhere(tmp_path, monkeypatch, capsys, caplog):
    monkeypatch.setenv(KEY_ENV, KEY)
    caplog.set_level(logging.DEBUG)
    model = LeakyModel()
    rag = write_jsonl(tmp_path / "rag.jsonl", ragbench_rows(12))
    cf = _example_rows(tmp_path)
    gold = [{**row, "all_relevant_sentence_keys": ["0a"]} for row in ragbench_rows(112)[100:]]
    rag_train = write_jsonl(tmp_path / "train.jsonl", gold[:6])
    rag_dev = write_jsonl(tmp_path / "dev.jsonl", gold[6:])
    with OpenAICompatibleServer(model, echo_authorization=True) as server:
        config = _config_file(tmp_path, server.base_url)
        litellm_config = _config_file(tmp_path, server.base_url, engine="litellm")
        rag_run, cf_run = tmp_path / "rag-run", tmp_path / "cf-run"
        judge_rag = [
            "judge", "ragbench", str(rag), "--out", str(rag_run), "--config", str(config), "--no-progress",
        ]  # fmt: skip
        judge_cf = [
            "judge", str(EXAMPLE / "task.yaml"), str(cf), "--out", str(cf_run),
            "--config", str(litellm_config), "--no-progress",
        ]  # fmt: skip

        # Rows 2, 3, 4 (and 8, 9, 10) fail: a 400, garbage, garbage; exit 3.
        assert run_cli(judge_rag) == 3
        assert run_cli(judge_cf) == 3
        rag_first = _sqlite_text(rag_run / "results.sqlite")
        # The leak reached jurist and was redacted: in a failure's error, in raw garbage, in an output.
        assert "injected 400" in rag_first and "Authorization: Bearer [REDACTED]" in rag_first
        assert "api_key=[REDACTED]" in rag_first and f"key {REDACTED}" in rag_first

        # The provider recovers for rows 3 and 9; --retry-failed asks again (never the cache).
        model.repaired = True
        assert run_cli([*judge_rag, "--retry-failed"]) == 3
        assert run_cli([*judge_cf, "--retry-failed"]) == 3
        summary = json.loads((rag_run / "summary.json").read_text())
        assert (summary["ok"], summary["failed"]) == (8, 4)
        assert json.loads((cf_run / "summary.json").read_text())["failed"] == 2

        assert run_cli(["score", "ragbench", str(rag_run)]) == 3
        assert run_cli(["score", str(EXAMPLE / "task.yaml"), str(cf_run), "--gold", str(cf), "--json"]) == 3
        calibration = tmp_path / "calibration"
        # The judge fails rows on purpose, so calibrate exits 3 like judge (the exit-code table).
        assert run_cli(
            ["calibrate", "ragbench", "--gold", str(rag), "--config", str(config), "--out", str(calibration),
             "--resamples", "20"]
        ) == 3  # fmt: skip
        artifact = tmp_path / "compiled.json"
        assert run_cli(
            ["optimize", "ragbench", "--train", str(rag_train), "--dev", str(rag_dev), "--config",
             str(config), "--optimizer", "bootstrap", "--out", str(artifact)]
        ) == 0  # fmt: skip

        # A refusal whose body echoes the key: the one-line error (and --debug's traceback).
        server.fail_always(Fault.unauthorized())
        refused = ["judge", "ragbench", str(rag), "--out", str(tmp_path / "refused"), "--config", str(config)]
        assert run_cli(["--debug", *refused, "--no-progress", "--set", "temperature=0.5"]) == 5

    assert server.statuses[500] >= 2 and server.statuses[400] >= 2 and server.statuses[401] >= 1
    demos = json.loads(artifact.read_text())["program"]["label"]["demos"]
    assert demos and any(REDACTED in json.dumps(demo) for demo in demos)
    assert (tmp_path / "cache").is_dir() and list((tmp_path / "cache").rglob("*.db"))

    assert _files_holding(tmp_path, KEY) == []
    captured = capsys.readouterr()
    assert "error: the provider refused the API key" in captured.err
    assert KEY not in captured.out and KEY not in captured.err
    assert caplog.records and KEY not in caplog.text
    assert not [record for record in caplog.records if KEY in record.getMessage()]


def test_redaction_of_configured_keys_and_key_shaped_text(monkeypatch):
    """What counts as a secret: the value of a secret-named variable, and key-shaped text."""
    monkeypatch.setenv("MY_PROVIDER_API_KEY", "plain-words-no-digits")
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-zyxwvutsrq")
    monkeypatch.setenv("DISPLAY_NAME", "visible-value-1234")  # not a secret by its name
    bare_key = "sk" + "-ant-api03-abcdefghij0123"
    text = (
        "key plain-words-no-digits, token tok-zyxwvutsrq, visible-value-1234; "
        'headers {"Authorization": "Bearer abc123def456", "x-api-key": "qwertyuiop"}; '
        "OPENAI_API_KEY=sk" + f"-proj-0123456789abcdef {bare_key}; api_key_env: MY_KEY"
    )
    # Configured secrets and credentials by their place become [REDACTED]; a bare key-shaped
    # string becomes a token with its hash (shape_token).
    assert redact(text) == (
        "key [REDACTED], token [REDACTED], visible-value-1234; "
        'headers {"Authorization": "Bearer [REDACTED]", "x-api-key": "[REDACTED]"}; '
        f"OPENAI_API_KEY=[REDACTED] {shape_token(bare_key)}; api_key_env: MY_KEY"
    )
    assert re.fullmatch(r"\[REDACTED:[0-9a-f]{16}\]", shape_token(bare_key))
    # JSON stays JSON; ordinary words stay; a value with nothing secret is the same object.
    assert json.loads(redact(json.dumps({"a": 'said "Bearer x1234567" twice'}))) == {
        "a": 'said "Bearer [REDACTED]" twice'
    }
    plain = "task-abcdef123456, Bearer bonds, a basic understanding, the sentence keys 0a and 1b"
    assert redact(plain) == plain
    value = {"outputs": ["fine"], "n": 1}
    assert redact_value(value) is value
    nested = {"outputs": [{"text": "key sk-abcdef123456"}], "n": 1}
    assert redact_value(nested) == {"outputs": [{"text": f"key {shape_token('sk-abcdef123456')}"}], "n": 1}
    assert nested["outputs"][0]["text"] == "key sk-abcdef123456"  # the original is not modified


def test_log_records_of_any_logger_are_redacted(caplog):
    from jurist.redaction import install_log_redaction

    install_log_redaction()
    caplog.set_level(logging.DEBUG)
    try:
        raise RuntimeError(f"provider said: Authorization: Bearer {KEY}")
    except RuntimeError:
        logging.getLogger("httpx.some.child").exception("call failed with %s", f"api_key={KEY}")
    logging.getLogger("dspy.adapters").warning("echo %s", KEY)
    ours = [record for record in caplog.records if record.name in ("httpx.some.child", "dspy.adapters")]
    assert len(ours) == 2 and KEY not in caplog.text
    assert ours[0].getMessage() == "call failed with api_key=[REDACTED]"
    assert "Authorization: Bearer [REDACTED]" in caplog.text  # the exception's text, too
