"""The cost limit over ``calibrate`` (``--max-cost``, ``max_cost=``) and over a cascade and
repeats in ``judge``, end to end against the loopback server with a priced model name."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from jurist.errors import ConfigError, CostLimitReached, ExitCode
from jurist.runner import iter_run_results
from jurist.testing import OpenAICompatibleServer
from jurist.verbs import calibrate, judge
from support import loopback_config, ragbench_answer, ragbench_rows, run_cli, write_jsonl

PRICED = "openai/gpt-4o-mini"
CLAIMS_TASK = """\
name: claim-checker
instructions: Say whether the claim is true.
inputs: [claim]
output:
  kind: bool
  reasoning: false
  confidence: true
gold: gold
"""
# Columns that differ between two equal calibrations (where and how fast they ran).
VOLATILE = ["run_dir", "latency_s"]


@pytest.fixture
def server():
    with OpenAICompatibleServer(ragbench_answer) as running:
        yield running


@pytest.fixture
def claims_server():
    with OpenAICompatibleServer(_claim_answer) as running:
        yield running


def _files(tmp_path: Path, server: OpenAICompatibleServer, cache: str) -> dict[str, Path]:
    """Three judge configs (distinct fingerprints, so no one answers from another's cache
    entries) and a jury of the last two, all with one cache."""
    first = loopback_config(server.base_url, tmp_path / cache, model=PRICED)
    folder = tmp_path / f"{cache}-files"  # the same file names for every cache: the same judge names
    folder.mkdir()
    files = {}
    for name, temperature in (("a", 0.0), ("b", 0.5), ("c", 0.7)):
        config = first.model_copy(update={"temperature": temperature})
        files[name] = folder / f"{name}.yaml"
        files[name].write_text(yaml.safe_dump(config.model_dump(mode="json")), encoding="utf-8")
    jurors = [
        {"name": name, **yaml.safe_load(files[name].read_text(encoding="utf-8"))} for name in ("b", "c")
    ]
    files["jury"] = folder / "jury.yaml"
    files["jury"].write_text(
        yaml.safe_dump({"jury": {"aggregate": "majority", "jurors": jurors}}),
        encoding="utf-8",
    )
    return files


def _spent(out: Path) -> float:
    return sum(
        result.usage.cost or 0.0
        for db in out.glob("**/results.sqlite")
        for result in iter_run_results(db.parent)
    )


def _board(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / "leaderboard.csv").drop(columns=VOLATILE, errors="ignore")


def test_calibrate_stops_at_the_limit_and_resumes_to_the_leaderboard_without_one(claims_server, tmp_path):
    server = claims_server
    task, gold = _claims(tmp_path, 20, split=12)
    reference_files = _files(tmp_path, server, "cache-ref")
    calibrate(task, gold, [reference_files["a"], reference_files["jury"]], out=tmp_path / "ref")
    total = _spent(tmp_path / "ref")
    assert total > 0

    files = _files(tmp_path, server, "cache")
    configs = [files["a"], files["jury"]]
    server.reset_count()
    with pytest.raises(CostLimitReached) as stopped:
        calibrate(task, gold, configs, out=tmp_path / "cal", max_cost=total / 3)
    assert stopped.value.exit_code == ExitCode.COST_LIMIT
    assert stopped.value.spent == pytest.approx(_spent(tmp_path / "cal")) and stopped.value.spent >= total / 3
    assert "run the same command with a higher limit (or none) to resume" in str(stopped.value)
    first_call = server.requests
    assert 0 < first_call < 3 * 20  # 3 single judges (a, jury/b, jury/c) on 20 gold rows
    # Only the runs are written: no leaderboard, no calibration.json.
    assert sorted(p.name for p in (tmp_path / "cal").iterdir()) == ["runs"]

    # The same limit again starts nothing: the spend recorded in every run directory counts.
    server.reset_count()
    with pytest.raises(CostLimitReached):
        calibrate(task, gold, configs, out=tmp_path / "cal", max_cost=total / 3)
    assert server.requests == 0

    # A limit above the whole calibration's cost lets it finish: a juror's run read back for its
    # own leaderboard row is not counted twice.
    calibrate(task, gold, configs, out=tmp_path / "cal", max_cost=total * 1.05)
    assert server.requests == 3 * 20 - first_call  # every call made once over the three calls
    assert _spent(tmp_path / "cal") == pytest.approx(total)
    pd.testing.assert_frame_equal(_board(tmp_path / "cal"), _board(tmp_path / "ref"))


def test_a_limit_with_an_unpriced_judge_is_refused_before_anything_is_judged(server, tmp_path):
    gold = write_jsonl(tmp_path / "g.jsonl", ragbench_rows(4))
    priced = _files(tmp_path, server, "cache")["a"]
    unpriced = loopback_config(server.base_url, tmp_path / "cache")  # openai/loopback-judge: no price
    with pytest.raises(ConfigError, match="no price for model 'openai/loopback-judge'"):
        calibrate("ragbench", [gold], [priced, unpriced], out=tmp_path / "cal", max_cost=1.0)
    assert server.requests == 0 and not (tmp_path / "cal").exists()


def test_cli_calibrate_exits_7_with_the_judge_message_and_shows_the_spend(server, tmp_path, capsys):
    gold = write_jsonl(tmp_path / "g.jsonl", ragbench_rows(12))
    files = _files(tmp_path, server, "cache")
    base = ["calibrate", "ragbench", "--gold", str(gold), "-c", str(files["a"]), "-c", str(files["b"])]
    base += ["--out", str(tmp_path / "cal")]
    code = run_cli([*base, "--max-cost", "0.0005", "--progress"])
    captured = capsys.readouterr()
    assert code == ExitCode.COST_LIMIT == 7
    message = [line for line in captured.err.splitlines() if line.startswith("error: ")]
    assert len(message) == 1 and "cost limit reached" in message[0] and "of the $0.0005 limit" in message[0]
    assert "higher limit (or none) to resume" in message[0]
    assert "spent=$" in captured.err and "/$0.0005" in captured.err  # the runner's progress bar
    assert captured.out == "" and not (tmp_path / "cal" / "leaderboard.md").exists()
    assert run_cli(base) == 0
    assert (tmp_path / "cal" / "leaderboard.md").is_file()


def _claims(tmp_path: Path, rows: int, split: int | None = None) -> tuple[Path, list[Path]]:
    """The claims task and its gold rows: one file, or two (rows before and after ``split``)."""
    task = tmp_path / "claims.yaml"
    task.write_text(CLAIMS_TASK, encoding="utf-8")
    claims = [{"id": f"c{i}", "claim": f"Claim {i}.", "gold": i % 2 == 0} for i in range(rows)]
    parts = [claims] if split is None else [claims[:split], claims[split:]]
    return task, [write_jsonl(tmp_path / f"claims{n}.jsonl", part) for n, part in enumerate(parts)]


def _claim_answer(body: dict) -> str:
    return "[[ ## verdict ## ]]\ntrue\n\n[[ ## confidence ## ]]\n0.6\n\n[[ ## completed ## ]]"


def test_judge_with_a_cascade_stops_at_the_limit_and_resumes(tmp_path):
    task, (data,) = _claims(tmp_path, 16)
    with OpenAICompatibleServer(_claim_answer) as server:

        def cascade(name: str) -> Path:
            stages = [
                {"name": "small", "model": PRICED, "escalate_below": 0.9},
                {"name": "large", "model": "openai/gpt-4o"},
            ]
            for stage in stages:
                stage.update(
                    api_base=server.base_url,
                    api_key_env="JURIST_TEST_API_KEY",
                    cache_dir=str(tmp_path / f"cache-{name}"),
                    concurrency=2,
                )
            path = tmp_path / f"{name}.yaml"
            path.write_text(yaml.safe_dump({"cascade": {"stages": stages}}), encoding="utf-8")
            return path

        reference = judge(task, data, cascade("ref"), out=tmp_path / "ref", progress=False)
        limit = reference.summary["usage"]["cost"] / 4
        server.reset_count()
        with pytest.raises(CostLimitReached):
            judge(task, data, cascade("run"), out=tmp_path / "run", progress=False, max_cost=limit)
        stopped_at = server.requests
        assert 0 < stopped_at < 32
        resumed = judge(task, data, cascade("run"), out=tmp_path / "run", progress=False)
        assert server.requests == 32  # each of 16 items asked of both stages once, in all
    assert resumed.summary["usage"]["cost"] == pytest.approx(reference.summary["usage"]["cost"])
    assert resumed["verdict"].tolist() == reference["verdict"].tolist()


def test_judge_with_repeats_shares_one_limit_over_every_repeat(claims_server, tmp_path):
    task, (data,) = _claims(tmp_path, 12)
    config = loopback_config(claims_server.base_url, tmp_path / "cache", model=PRICED)
    reference = judge(task, data, config, out=tmp_path / "ref", progress=False, repeats=3)
    claims_server.reset_count()
    fresh = loopback_config(claims_server.base_url, tmp_path / "cache-2", model=PRICED)
    limit = reference.summary["usage"]["cost"] / 3
    with pytest.raises(CostLimitReached) as stopped:
        judge(task, data, fresh, out=tmp_path / "run", progress=False, repeats=3, max_cost=limit)
    assert stopped.value.spent == pytest.approx(_spent(tmp_path / "run")) and stopped.value.spent >= limit
    assert claims_server.requests < 36
    resumed = judge(task, data, fresh, out=tmp_path / "run", progress=False, repeats=3)
    assert claims_server.requests == 36
    assert resumed.summary["usage"]["cost"] == pytest.approx(reference.summary["usage"]["cost"])
