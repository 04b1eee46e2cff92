"""Runs, calibrations and compiled programs logged to a real MLflow tracking server, read back.

Every command runs through the CLI against a local ``mlflow server`` (``conftest.py``) and,
for LLM judges, the loopback OpenAI-compatible server. What is logged is read back with
``MlflowClient`` and compared with the files the command wrote: params with the manifest,
metrics with ``summary.json`` (or the leaderboard, or the artifact's scores), artifacts byte
for byte.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from jurist.judges.config import load_config
from jurist.tasks import _registry, register_task
from jurist.testing import OpenAICompatibleServer
from metric_task import CapsMetricTask, write_texts
from support import prompt_sections, run_cli, write_jsonl

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "context-faithfulness"
SECRET = "sk-test-" + "7f3a9c1e5b" * 3  # a key the user has in the environment
TRACKING_CODE = 6  # jurist.errors.ExitCode.TRACKING_FAILED, as documented

LABEL_TASK = """\
name: tracked-labeller
instructions: Say whether the answer is right.
inputs: [answer]
output:
  kind: label
  labels: [right, wrong]
gold: gold
"""
_MARK = re.compile(r"LABEL=(\w+)")


def responder(body: dict[str, Any]) -> str:
    """Answers the label the item's text names, and quotes the text back (key included)."""
    answer = prompt_sections(body).get("answer", "")
    found = _MARK.search(answer)
    fields = {"reasoning": f"The text says: {answer}", "verdict": found.group(1) if found else "right"}
    return "\n\n".join(f"[[ ## {k} ## ]]\n{v}" for k, v in fields.items()) + "\n\n[[ ## completed ## ]]"


def label_rows(count: int) -> list[dict[str, str]]:
    """Rows whose answer names the verdict; every third is answered against its gold label."""
    rows = []
    for i in range(count):
        gold = "right" if i % 2 == 0 else "wrong"
        said = gold if i % 3 else {"right": "wrong", "wrong": "right"}[gold]
        rows.append({"answer": f"Answer {i}: LABEL={said} (written with {SECRET})", "gold": gold})
    return rows


def judge_yaml(
    path: Path, base_url: str, cache: Path, mlflow: dict[str, str] | None = None, **fields: Any
) -> Path:
    """A judge config for the loopback server, with an ``mlflow`` key when given."""
    config: dict[str, Any] = {
        **fields,
        "model": "openai/loopback-judge",
        "api_base": base_url,
        "api_key_env": "JURIST_TEST_API_KEY",
        "cache_dir": str(cache),
        "concurrency": 4,
        "retry_max_wait": 0.2,
        "timeout": 5,
    }
    if mlflow is not None:
        config["mlflow"] = mlflow
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.fixture
def client(tracking_server: str) -> Any:
    """An MLflow client of the test server (MLflow imported as jurist imports it)."""
    from jurist.tracking import require_mlflow

    require_mlflow()
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_server)


@pytest.fixture
def loopback() -> Any:
    with OpenAICompatibleServer(responder) as server:
        yield server


def only_run(client: Any, experiment: str, **filters: str) -> Any:
    """The one top-level run of ``experiment`` (or the one whose params and tags match)."""
    found = client.get_experiment_by_name(experiment)
    assert found is not None, f"no experiment {experiment!r}"
    runs = [
        run
        for run in client.search_runs([found.experiment_id])
        if all({**run.data.params, **run.data.tags}.get(k) == v for k, v in filters.items())
        and ("mlflow.parentRunId" not in run.data.tags or filters)
    ]
    assert len(runs) == 1, [run.data.tags for run in runs]
    return runs[0]


def numeric_leaves(value: Any, path: tuple[str, ...] = ()) -> dict[str, float]:
    """The numeric leaves of JSON, by dotted path (lists of numbers left out), read by hand."""
    if isinstance(value, bool):
        return {".".join(path): float(value)}
    if isinstance(value, int | float):
        return {".".join(path): float(value)}
    found: dict[str, float] = {}
    if isinstance(value, dict):
        for key, item in value.items():
            found.update(numeric_leaves(item, (*path, str(key))))
    elif isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        for index, item in enumerate(value):
            found.update(numeric_leaves(item, (*path, str(index))))
    return found


def expected_params(manifest: dict[str, Any]) -> dict[str, str]:
    config, dataset, versions = manifest["config"], manifest["dataset"], manifest["versions"]
    return {
        "task": manifest["task"],
        "judge": manifest["judge"],
        "judge_fingerprint": manifest["judge_fingerprint"],
        "model": config["model"],
        "engine": config["engine"],
        "temperature": json.dumps(config["temperature"]),
        "max_tokens": json.dumps(config["max_tokens"]),
        "adapter": config["adapter"],
        "program": (manifest["program"] or {}).get("path", "none"),
        "dataset.path": dataset["path"],
        "dataset.sha256": dataset["sha256"],
        "dataset.items": str(dataset["items"]),
        "version.jurist": versions["jurist"],
        "version.dspy": versions["dspy"],
        "version.litellm": versions["litellm"],
    }


def assert_run_logged(client: Any, run: Any, run_dir: Path, tmp_path: Path) -> None:
    """Params equal the manifest, metrics the summary, artifacts the run directory's files."""
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    params = run.data.params
    assert expected_params(manifest).items() <= params.items()
    for name, value in manifest["task_options"].items():
        assert params[f"task_options.{name}"] == (value if isinstance(value, str) else json.dumps(value))
    metrics = run.data.metrics
    leaves = {k: v for k, v in numeric_leaves(summary).items() if re.fullmatch(r"[\w.\- ]+", k)}
    assert leaves and {name: metrics.get(name) for name in leaves} == pytest.approx(leaves)
    for name in ("items", "ok", "failed"):
        assert metrics[name] == summary[name]
    for name in ("calls", "cache_hits", "prompt_tokens", "completion_tokens"):
        assert metrics[f"usage.{name}"] == summary["usage"][name]
    assert run.data.tags["jurist.kind"] == "judge"
    assert run.data.tags["jurist.status"] == manifest["status"] == "finished"
    assert run.info.status == "FINISHED"

    listed = {item.path for item in client.list_artifacts(run.info.run_id)}
    expected = {"report.md", "summary.json", "items.csv", "items.parquet", "manifest.json"}
    expected |= {
        name for name in ("report.html", "figures.json", "review.json") if (run_dir / name).is_file()
    }
    assert listed == expected
    for name in expected - {"items.parquet"}:
        copy = Path(client.download_artifacts(run.info.run_id, name, str(tmp_path)))
        assert copy.read_bytes() == (run_dir / name).read_bytes(), name
    parquet = Path(client.download_artifacts(run.info.run_id, "items.parquet", str(tmp_path)))
    pd.testing.assert_frame_equal(pd.read_parquet(parquet), pd.read_parquet(run_dir / "items.parquet"))


def assert_secret_nowhere(
    client: Any, run_id: str, folder: Path, secrets: tuple[str, ...] = (SECRET,)
) -> None:
    """The key (or each of ``secrets``) is in no param, tag, metric name or artifact (Parquet
    read cell by cell)."""
    run = client.get_run(run_id)
    for secret in secrets:
        for key, value in {**run.data.params, **run.data.tags}.items():
            assert secret not in key and secret not in value, key
        assert all(secret not in name for name in run.data.metrics)
    folder.mkdir()
    downloaded = Path(client.download_artifacts(run_id, "", str(folder)))
    files = [path for path in downloaded.rglob("*") if path.is_file()]
    assert files
    for path in files:
        for secret in secrets:
            assert secret.encode() not in path.read_bytes(), path.name
            if path.suffix == ".parquet":
                assert secret not in pd.read_parquet(path).to_csv()


# ---------------------------------------------------------------------- judge


def test_judge_offline_baseline_logged_through_the_cli(tracking_server, client, tmp_path, capsys):
    out = tmp_path / "run"
    code = run_cli(
        [
            "judge",
            str(EXAMPLE / "task.yaml"),
            str(EXAMPLE / "rows.jsonl"),
            "--out",
            str(out),
            "--no-progress",
            "--mlflow",
            "--mlflow-uri",
            tracking_server,
        ]
    )
    assert code == 0
    run = only_run(client, "context-faithfulness", **{"jurist.run_dir": str(out.resolve())})
    printed = capsys.readouterr()
    assert f"/#/experiments/{run.info.experiment_id}/runs/{run.info.run_id}" in printed.err
    assert "View run" not in printed.out  # MLflow's own line on stdout is off; jurist's is on stderr
    assert_run_logged(client, run, out, tmp_path / "downloads")
    assert run.data.params["model"] == "baseline"
    assert run.data.metrics["agreement.accuracy_low"] <= run.data.metrics["agreement.accuracy"]
    assert run.data.metrics["agreement.accuracy"] <= run.data.metrics["agreement.accuracy_high"]


def test_a_metric_a_python_task_declares_once_is_logged_for_its_run_and_its_leaderboard_row(
    tracking_server, client, tmp_path, monkeypatch
):
    monkeypatch.setattr(_registry, "_registered", dict(_registry._registered))
    register_task(CapsMetricTask)
    texts = write_texts(tmp_path / "texts.jsonl")
    out = tmp_path / "run"
    judge = ["judge", "test-caps-metric", str(texts), "--out", str(out), "--no-progress"]
    assert run_cli([*judge, "--mlflow", "--mlflow-uri", tracking_server]) == 0
    run = only_run(client, "test-caps-metric", **{"jurist.run_dir": str(out.resolve())})
    assert run.data.metrics["caps_agreement"] == pytest.approx(0.75)
    assert run.data.metrics["caps_agreement_low"] < 0.75 < run.data.metrics["caps_agreement_high"]
    cal = tmp_path / "cal"
    calibrate = ["calibrate", "test-caps-metric", "--gold", str(texts), "--out", str(cal)]
    assert run_cli([*calibrate, "--mlflow-uri", tracking_server, "--mlflow-experiment", "caps-cal"]) == 0
    row = only_run(client, "caps-cal", **{"calibration.judge": "baseline"})
    assert row.data.metrics["caps_agreement"] == pytest.approx(0.75)


def test_judge_config_key_logs_an_llm_run_without_secrets_or_a_new_judge_identity(
    tracking_server, client, loopback, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    task = tmp_path / "task.yaml"
    task.write_text(LABEL_TASK, encoding="utf-8")
    data = write_jsonl(tmp_path / "rows.jsonl", label_rows(6))
    settings = {"tracking_uri": tracking_server, "experiment": "keyed"}
    keyed = judge_yaml(tmp_path / "keyed.yaml", loopback.base_url, tmp_path / "cache", settings)
    plain = judge_yaml(tmp_path / "plain.yaml", loopback.base_url, tmp_path / "cache")
    out = tmp_path / f"run-{SECRET}"  # the run directory's name holds the key: its tag must not
    args = ["judge", str(task), str(data), "--out", str(out), "--no-progress", "--config"]

    assert run_cli([*args, str(keyed)]) == 0
    assert loopback.requests == 6
    run = only_run(client, "keyed")
    assert_run_logged(client, run, out, tmp_path / "downloads")
    assert run.data.params["model"] == "openai/loopback-judge"
    assert run.data.metrics["usage.calls"] == 6
    assert run.data.tags["jurist.run_dir"].endswith("run-[REDACTED]")
    assert_secret_nowhere(client, run.info.run_id, tmp_path / "all")

    # The key changes neither the judge's fingerprint nor its cache: the same judge without
    # it resumes nothing new and calls nothing (every answer comes from the cache).
    assert load_config(keyed).fingerprint() == load_config(plain).fingerprint()
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert "mlflow" not in manifest["config"]
    assert run_cli([*args[:4], str(tmp_path / "again"), "--no-progress", "--config", str(plain)]) == 0
    assert loopback.requests == 6
    again = json.loads((tmp_path / "again" / "summary.json").read_text(encoding="utf-8"))
    assert again["usage"]["cache_hits"] == 6
    assert again["run"]["judge_fingerprint"] == manifest["judge_fingerprint"]
    # --no-mlflow turns a config's key off.
    assert (
        run_cli([*args[:4], str(tmp_path / "off"), "--no-progress", "--no-mlflow", "--config", str(keyed)])
        == 0
    )
    assert len(client.search_runs([run.info.experiment_id])) == 1


def test_credentials_in_the_api_base_and_tracking_urls_reach_no_mlflow_param_artifact_or_line(
    tracking_server, client, loopback, tmp_path, capsys
):
    """Issue 21, item 5: ``http://user:pass@host`` in ``api_base`` (sent as basic auth) and in
    the tracking URI (MLflow's client sends it as basic auth too) is in nothing logged."""
    user, password = "tracked" + "-robot", "pw-" + "5be0c2" * 2  # built at run time
    task = tmp_path / "task.yaml"
    task.write_text(LABEL_TASK, encoding="utf-8")
    data = write_jsonl(tmp_path / "rows.jsonl", label_rows(4))
    tracking = tracking_server.replace("http://", f"http://{user}:{password}@", 1)
    settings = {"tracking_uri": tracking, "experiment": "credentials-in-urls"}
    api_base = loopback.base_url.replace("http://", f"http://{user}:{password}@", 1)
    config = judge_yaml(tmp_path / "judge.yaml", api_base, tmp_path / "cache", settings)
    out = tmp_path / "run"

    assert (
        run_cli(["judge", str(task), str(data), "--out", str(out), "--no-progress", "--config", str(config)])
        == 0
    )
    assert loopback.requests == 4
    assert {headers.get("authorization", "").split()[0] for headers in loopback.request_headers} == {"Basic"}
    run = only_run(client, "credentials-in-urls")
    assert_run_logged(client, run, out, tmp_path / "downloads")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["api_base"].startswith("http://[REDACTED]@127.0.0.1:")
    secrets = (password, f"{user}:{password}", user)
    assert_secret_nowhere(client, run.info.run_id, tmp_path / "all", secrets)
    captured = capsys.readouterr()
    assert not [secret for secret in secrets if secret in captured.out + captured.err]


# ---------------------------------------------------------------------- calibrate and optimize


def test_calibrate_logs_a_parent_run_and_one_nested_run_per_leaderboard_row(
    tracking_server, client, loopback, tmp_path
):
    task = tmp_path / "task.yaml"
    task.write_text(LABEL_TASK, encoding="utf-8")
    data = write_jsonl(tmp_path / "gold.jsonl", label_rows(8))
    config = judge_yaml(tmp_path / "loopback.yaml", loopback.base_url, tmp_path / "cache")
    warm = judge_yaml(tmp_path / "warm.yaml", loopback.base_url, tmp_path / "cache", temperature=0.7)
    out = tmp_path / "cal"
    code = run_cli(
        [
            "calibrate",
            str(task),
            "--gold",
            str(data),
            "--config",
            str(config),
            "--config",
            str(warm),
            "--out",
            str(out),
            "--resamples",
            "20",
            "--mlflow-uri",
            tracking_server,
            "--mlflow-experiment",
            "calibrations",
        ]
    )
    assert code == 0
    calibration = json.loads((out / "calibration.json").read_text(encoding="utf-8"))
    parent = only_run(client, "calibrations")
    assert parent.data.tags["jurist.kind"] == "calibration"
    assert parent.data.tags["jurist.status"] == "passed"
    assert parent.data.params["task"] == "tracked-labeller"
    assert parent.data.params["n_resamples"] == "20"
    assert parent.data.metrics["passed"] == 1.0
    listed = {item.path for item in client.list_artifacts(parent.info.run_id)}
    assert listed == {"leaderboard.md", "leaderboard.csv", "by_label.csv", "calibration.json"}
    for name in listed:
        copy = Path(client.download_artifacts(parent.info.run_id, name, str(tmp_path / "dl")))
        assert copy.read_bytes() == (out / name).read_bytes(), name

    rows = {row["judge"]: row for row in calibration["leaderboard"]}
    assert set(rows) == {"loopback", "warm"}
    for judge, row in rows.items():
        child = only_run(client, "calibrations", **{"calibration.judge": judge})
        assert child.data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert child.data.tags["jurist.kind"] == "calibration-row"
        assert child.data.params["model"] == row["model"]
        manifest = json.loads((Path(row["run_dir"]) / "manifest.json").read_text(encoding="utf-8"))
        assert child.data.params["judge_fingerprint"] == manifest["judge_fingerprint"]
        figures = {
            k: float(v) for k, v in row.items() if isinstance(v, int | float) and not isinstance(v, bool)
        }
        assert {k: child.data.metrics[k] for k in figures} == pytest.approx(figures)
    assert rows["loopback"]["accuracy"] == pytest.approx(5 / 8)  # rows 0, 3 and 6 are answered wrong
    warm_run = only_run(client, "calibrations", **{"calibration.judge": "warm"})
    assert warm_run.data.params["temperature"] == "0.7"


def test_optimize_logs_the_artifact_and_its_scores(tracking_server, client, loopback, tmp_path, capsys):
    task = tmp_path / "task.yaml"
    task.write_text(LABEL_TASK, encoding="utf-8")
    rows = label_rows(8)
    train = write_jsonl(tmp_path / "train.jsonl", rows[0::2])
    dev = write_jsonl(tmp_path / "dev.jsonl", rows[1::2])
    settings = {"tracking_uri": tracking_server, "experiment": "compiled"}
    config = judge_yaml(tmp_path / "loopback.yaml", loopback.base_url, tmp_path / "cache", settings)
    artifact = tmp_path / "compiled.json"
    code = run_cli(
        [
            "optimize",
            str(task),
            "--train",
            str(train),
            "--dev",
            str(dev),
            "--out",
            str(artifact),
            "--config",
            str(config),
            "--optimizer",
            "bootstrap",
        ]
    )
    assert code == 0, capsys.readouterr().err
    saved = json.loads(artifact.read_text(encoding="utf-8"))
    run = only_run(client, "compiled")
    params, metrics = run.data.params, run.data.metrics
    assert run.data.tags["jurist.kind"] == "optimization"
    assert params["optimizer"] == "bootstrap"
    assert params["model"] == "openai/loopback-judge"
    assert params["program_sha256"] == hashlib.sha256(artifact.read_bytes()).hexdigest()
    assert params["data.train.sha256"] == saved["data"]["train"]["sha256"]
    assert params["version.dspy"] == saved["versions"]["dspy"]
    for split, score in saved["scores"].items():
        assert metrics[split] == pytest.approx(score["score"])
        assert metrics[f"{split}.scored"] == score["scored"]
        assert metrics[f"{split}.failed"] == score["failed"]
    assert {"dev_before", "dev_after"} <= set(saved["scores"])
    [folder] = client.list_artifacts(run.info.run_id)
    assert folder.path == "program" and folder.is_dir
    copy = Path(client.download_artifacts(run.info.run_id, "program/compiled.json", str(tmp_path / "dl")))
    assert copy.read_bytes() == artifact.read_bytes()


# ---------------------------------------------------------------------- failures


def test_an_unreachable_server_keeps_the_results_and_exits_with_the_tracking_code(
    unused_port, tmp_path, capsys
):
    port = unused_port
    out = tmp_path / "run"
    uri = f"http://jurist:hunter2-secret@127.0.0.1:{port}"
    code = run_cli(
        [
            "judge",
            str(EXAMPLE / "task.yaml"),
            str(EXAMPLE / "rows.jsonl"),
            "--out",
            str(out),
            "--no-progress",
            "--mlflow-uri",
            uri,
        ]
    )
    err = capsys.readouterr().err
    assert code == TRACKING_CODE
    assert f"could not log to MLflow at http://127.0.0.1:{port}: the tracking server is unreachable" in err
    assert f"the results are kept in {out}" in err
    assert "hunter2" not in err
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert (summary["items"], summary["failed"]) == (16, 0)

    from jurist.tracking import TrackingError, log_run

    with pytest.raises(TrackingError, match="unreachable") as raised:
        log_run(out, tracking_uri=f"http://127.0.0.1:{port}")
    assert raised.value.exit_code == TRACKING_CODE


def _clean_env() -> dict[str, str]:
    """This environment without anything that turns MLflow's telemetry off by itself (CI, pytest)."""
    telemetry_off = {
        *("MLFLOW_DISABLE_TELEMETRY", "DO_NOT_TRACK", "PYTEST_CURRENT_TEST", "CI", "GITHUB_ACTIONS"),
        *("CIRCLECI", "GITLAB_CI", "JENKINS_URL", "TRAVIS", "TF_BUILD", "BITBUCKET_BUILD_NUMBER"),
        *("CODEBUILD_BUILD_ARN", "BUILDKITE", "TEAMCITY_VERSION", "CLOUD_RUN_EXECUTION"),
    }
    return {k: v for k, v in os.environ.items() if k not in telemetry_off}


def test_without_mlflow_the_command_stops_before_judging_and_says_what_to_install(tmp_path):
    out = tmp_path / "run"
    code = "import sys; sys.modules['mlflow'] = None; from jurist.cli import main; main(sys.argv[1:])"
    done = subprocess.run(
        [sys.executable, "-c", code, "judge", str(EXAMPLE / "task.yaml"), str(EXAMPLE / "rows.jsonl")]
        + ["--out", str(out), "--no-progress", "--mlflow"],
        capture_output=True,
        text=True,
        timeout=120,
        env=_clean_env(),
    )
    assert done.returncode == 2, done.stderr
    assert 'pip install "jurist[mlflow]"' in done.stderr
    assert not out.exists()


def test_jurist_turns_mlflow_telemetry_off_by_default():
    """No CI or pytest variable here: only jurist's default keeps MLflow from reporting usage."""
    code = (
        "import os, jurist.tracking as t; t.require_mlflow(); "
        "from mlflow.telemetry.client import get_telemetry_client; "
        "print(os.environ['MLFLOW_DISABLE_TELEMETRY'], get_telemetry_client() is None)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=_clean_env()
    )
    assert done.stdout.split() == ["true", "True"], done.stderr
