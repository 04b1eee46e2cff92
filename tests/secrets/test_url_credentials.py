"""A user name and password in ``api_base`` (issue 21, item 5).

``http://user:pass@host/v1`` used to be written to ``manifest.json``, the MLflow copy of it
and the stderr error line, and the URL never worked (exit 5 on the default engine, exit 3
on LiteLLM). Now the ``auto`` and ``litellm`` engines request the URL without its
user-info and send the credentials as HTTP basic auth (the loopback server records the
header), the ``lm15`` engine is refused at config time (exit 2, one line), and the
credentials are in no file jurist writes, on no output line, in no fingerprint and in no
cache key. User-info in any URL is redacted from free text by :mod:`jurist.redaction`.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from jurist.judges.config import JudgeConfig, load_config, split_userinfo
from jurist.redaction import REDACTED, redact, redact_value
from jurist.testing import Fault, OpenAICompatibleServer
from support import CLAIMS_TASK, run_cli, true_verdict, write_jsonl

USER = "judge" + "-robot"
PASSWORD = "pw-" + "4c1d9e" * 2  # built at run time: no tracked file holds it
OTHER_PASSWORD = "pw-" + "77aa01" * 2


def _with_userinfo(base_url: str, password: str = PASSWORD) -> str:
    return base_url.replace("http://", f"http://{USER}:{password}@", 1)


def _basic(password: str = PASSWORD) -> str:
    return "Basic " + base64.b64encode(f"{USER}:{password}".encode()).decode()


def _config(tmp_path: Path, name: str, api_base: str, **fields: Any) -> Path:
    values = {
        "model": "openai/loopback-judge",
        "api_base": api_base,
        "api_key_env": "JURIST_TEST_API_KEY",
        "cache_dir": str(tmp_path / "cache"),
        "concurrency": 2,
        "retry_max_wait": 0.2,
        "timeout": 5,
        **fields,
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps(values), encoding="utf-8")
    return path


def _claims(tmp_path: Path, count: int = 4) -> tuple[Path, Path]:
    task = tmp_path / "claims.yaml"
    task.write_text(CLAIMS_TASK, encoding="utf-8")
    rows = [{"id": f"c{i}", "claim": f"claim number {i}", "gold": True} for i in range(count)]
    return task, write_jsonl(tmp_path / "claims.jsonl", rows)


def _holding(root: Path, needles: list[str]) -> list[str]:
    """Files under ``root`` whose bytes hold any of ``needles``."""
    found = []
    for file in sorted(root.rglob("*")):
        if file.is_file():
            data = file.read_bytes()
            if any(needle.encode() in data for needle in needles):
                found.append(str(file.relative_to(root)))
    return found


def _secrets(password: str = PASSWORD) -> list[str]:
    return [password, f"{USER}:{password}", _basic(password).split()[1], USER]


@pytest.mark.parametrize("engine", ["auto", "litellm"])
def test_credentials_in_api_base_are_sent_as_basic_auth_and_written_nowhere(engine, tmp_path, capsys):
    task, data = _claims(tmp_path)
    with OpenAICompatibleServer(true_verdict) as server:
        host = server.base_url.split("//", 1)[1].split("/", 1)[0]
        config = _config(tmp_path, "judge", _with_userinfo(server.base_url), engine=engine)
        out = tmp_path / "run"
        judge = ["judge", str(task), str(data), "--no-progress", "--out"]
        assert run_cli([*judge, str(out), "--config", str(config)]) == 0

        # It works: every request carried the credentials as basic auth, to the URL without them.
        assert server.requests == 4
        assert [headers.get("authorization") for headers in server.request_headers] == [_basic()] * 4
        assert {headers.get("host") for headers in server.request_headers} == {host}
        assert set(server.request_paths) == {"/v1/chat/completions"}
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        assert (summary["ok"], summary["failed"]) == (4, 0)

        # They are not part of the judge: another password resumes the run (no request, the
        # same fingerprint) and, in a new directory, is served from the cache.
        other = _config(tmp_path, "other", _with_userinfo(server.base_url, OTHER_PASSWORD), engine=engine)
        plain = _config(tmp_path, "plain", server.base_url, engine=engine)
        assert load_config(config).fingerprint() == load_config(plain).fingerprint()
        assert run_cli([*judge, str(out), "--config", str(other)]) == 0
        assert run_cli([*judge, str(tmp_path / "again"), "--config", str(other)]) == 0
        assert server.requests == 4
        again = json.loads((tmp_path / "again" / "summary.json").read_text(encoding="utf-8"))
        assert again["usage"]["cache_hits"] == 4

    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["api_base"] == f"http://{REDACTED}@{host}/v1"
    captured = capsys.readouterr()
    for secret in _secrets() + _secrets(OTHER_PASSWORD):
        assert secret not in captured.out and secret not in captured.err
    written = [tmp_path / "run", tmp_path / "again", tmp_path / "cache"]
    assert [hit for root in written for hit in _holding(root, _secrets() + _secrets(OTHER_PASSWORD))] == []


def test_a_refused_request_names_the_server_without_its_credentials(tmp_path, capsys):
    task, data = _claims(tmp_path, count=2)
    with OpenAICompatibleServer(true_verdict) as server:
        server.fail_always(Fault.unauthorized())
        host = server.base_url.split("//", 1)[1].split("/", 1)[0]
        config = _config(tmp_path, "judge", _with_userinfo(server.base_url))
        out = tmp_path / "run"
        args = ["--debug", "judge", str(task), str(data), "--out", str(out), "--config", str(config)]
        assert run_cli([*args, "--no-progress"]) == 5
        assert server.requests >= 1 and server.request_headers[0].get("authorization") == _basic()

    err = capsys.readouterr().err
    line = next(line for line in err.splitlines() if line.startswith("error: "))
    assert f"at http://{REDACTED}@{host}/v1" in line
    assert not [secret for secret in _secrets() if secret in err]
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["status"] == "stopped"
    assert _holding(out, _secrets()) == []


def test_the_lm15_engine_refuses_credentials_in_api_base_at_config_time(tmp_path, capsys):
    task, data = _claims(tmp_path, count=2)
    with OpenAICompatibleServer(true_verdict) as server:
        refused = _config(tmp_path, "lm15", _with_userinfo(server.base_url), engine="lm15")
        auto = _config(tmp_path, "auto", _with_userinfo(server.base_url))
        judge = ["judge", str(task), str(data), "--no-progress", "--out", str(tmp_path / "run"), "--config"]
        assert run_cli([*judge, str(refused)]) == 2
        assert run_cli([*judge, str(auto), "--set", "engine=lm15"]) == 2
        assert server.requests == 0

    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"error: {refused}, line 1, field 'api_base': ")
    assert lines[1].startswith(f"error: {auto}, line 1, field 'api_base': ")
    for line in lines:
        assert "the lm15 engine cannot send" in line and "use engine auto or litellm" in line
        assert not [secret for secret in _secrets() if secret in line]
    assert not (tmp_path / "run" / "results.sqlite").exists()


def test_user_info_of_any_url_is_redacted_from_free_text():
    text = (
        f"POST http://{USER}:{PASSWORD}@127.0.0.1:8000/v1/chat/completions failed; "
        f"mlflow at https://{USER}:p%40ss@tracking.example:5000, "
        f"a token as the user https://{PASSWORD}@git.example/repo.git, "
        f"an '@' in the password http://{USER}:p@{PASSWORD}@host/x; "
        "left alone: http://host/path?mail=a@b.example and user@example.org"
    )
    assert redact(text) == (
        f"POST http://{REDACTED}@127.0.0.1:8000/v1/chat/completions failed; "
        f"mlflow at https://{REDACTED}@tracking.example:5000, "
        f"a token as the user https://{REDACTED}@git.example/repo.git, "
        f"an '@' in the password http://{REDACTED}@host/x; "
        "left alone: http://host/path?mail=a@b.example and user@example.org"
    )
    assert redact(redact(text)) == redact(text)
    record = {"config": {"api_base": f"http://{USER}:{PASSWORD}@h:1/v1"}, "note": 'say "http://a:b@c"'}
    assert (
        json.loads(redact(json.dumps(record)))
        == redact_value(record)
        == {
            "config": {"api_base": f"http://{REDACTED}@h:1/v1"},
            "note": f'say "http://{REDACTED}@c"',
        }
    )


def test_api_base_without_user_info_keeps_its_fingerprint():
    """Only the user-info is left out of what the fingerprint reads: other URLs hash as before."""
    assert split_userinfo("http://localhost:8000/v1") == ("http://localhost:8000/v1", None)
    assert split_userinfo("http://u%3Ax:p%40ss@h:9/v1/") == ("http://h:9/v1/", ("u:x", "p@ss"))
    assert split_userinfo("http://token@h/v1") == ("http://h/v1", ("token", ""))
    plain = JudgeConfig(model="openai/m", api_base="http://localhost:8000/v1")
    keyed = JudgeConfig(model="openai/m", api_base=f"http://{USER}:{PASSWORD}@localhost:8000/v1")
    other = JudgeConfig(model="openai/m", api_base="http://localhost:8001/v1")
    assert plain.fingerprint() == keyed.fingerprint() != other.fingerprint()
    fields = {"model", "temperature", "max_tokens", "api_base", "adapter", "program"}
    dumped = json.dumps(plain.model_dump(mode="json", include=fields), sort_keys=True)
    assert plain.fingerprint() == hashlib.sha256(dumped.encode()).hexdigest()[:16]  # as before
    assert keyed.api_base_url == "http://localhost:8000/v1" and keyed.basic_auth == (USER, PASSWORD)
