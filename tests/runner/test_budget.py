"""The cost limit (``--max-cost``, ``max_cost=``) and the progress bar's spend figures, end to end
against the loopback server with a model that has a price (``openai/gpt-4o-mini``)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from jurist.errors import ConfigError, CostLimitReached, ExitCode
from jurist.runner import RESULTS_DB, ResultStore
from jurist.runner.budget import Budget, CostLimit, spending_limit
from jurist.schemas import ItemResult, Usage
from jurist.testing import OpenAICompatibleServer
from jurist.verbs import judge
from support import loopback_config, ragbench_answer, ragbench_rows, run_cli, write_jsonl

PRICED = "openai/gpt-4o-mini"
ITEMS = 24


def _results(run_dir: Path) -> dict[str, ItemResult]:
    with ResultStore(run_dir / RESULTS_DB) as store:
        return {result.id: result for result in store.iter_results()}


def _manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))


@pytest.fixture
def priced_server():
    with OpenAICompatibleServer(ragbench_answer) as server:
        yield server


def test_max_cost_stops_within_one_batch_and_resumes_to_the_result_of_an_unlimited_run(
    priced_server, tmp_path
):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(ITEMS))
    reference_config = loopback_config(priced_server.base_url, tmp_path / "cache-ref", model=PRICED)
    reference = judge("ragbench", data, reference_config, out=tmp_path / "ref", progress=False)
    costs = {result.id: result.usage.cost for result in _results(tmp_path / "ref").values()}
    assert all(cost is not None and cost > 0 for cost in costs.values())
    assert reference.summary["usage"]["cost"] == pytest.approx(sum(costs.values()))

    config = loopback_config(priced_server.base_url, tmp_path / "cache", model=PRICED)
    limit = 8 * sum(costs.values()) / ITEMS  # about eight items' worth
    priced_server.reset_count()
    with pytest.raises(CostLimitReached) as stopped:
        judge("ragbench", data, config, out=tmp_path / "run", progress=False, max_cost=limit)

    recorded = _results(tmp_path / "run")
    spent = sum(result.usage.cost or 0.0 for result in recorded.values())
    assert stopped.value.spent == pytest.approx(spent) and spent >= limit
    assert stopped.value.exit_code == ExitCode.COST_LIMIT == 7
    # Within one batch: once the items recorded reached the limit, at most `concurrency`
    # more (those in flight) finished; every request the server got belongs to a recorded item.
    cheapest = min(costs.values())
    assert len(recorded) <= math.ceil(limit / cheapest) + config.concurrency
    assert len(recorded) < ITEMS
    assert priced_server.requests == len(recorded)
    manifest = _manifest(tmp_path / "run")
    assert manifest["status"] == "stopped" and "cost limit" in manifest["stopped_by"]
    assert manifest["counts"]["ok"] == len(recorded)
    assert "run the same command with a higher limit" in str(stopped.value)

    # The same limit again starts nothing: the spend recorded in the directory counts.
    priced_server.reset_count()
    with pytest.raises(CostLimitReached):
        judge("ragbench", data, config, out=tmp_path / "run", progress=False, max_cost=limit)
    assert priced_server.requests == 0

    # Without the limit the run resumes and ends where an unlimited run ends.
    resumed = judge("ragbench", data, config, out=tmp_path / "run", progress=False)
    assert priced_server.requests == ITEMS - len(recorded)
    assert resumed.summary["ok"] == ITEMS and resumed.summary["failed"] == 0
    final = _results(tmp_path / "run")
    assert {key: value.output for key, value in final.items()} == {
        key: value.output for key, value in _results(tmp_path / "ref").items()
    }
    assert resumed.summary["usage"]["cost"] == pytest.approx(reference.summary["usage"]["cost"])
    assert _manifest(tmp_path / "run")["status"] == "finished"


def test_cached_answers_cost_nothing_under_a_limit(priced_server, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(6))
    config = loopback_config(priced_server.base_url, tmp_path / "cache", model=PRICED)
    judge("ragbench", data, config, out=tmp_path / "first", progress=False)
    priced_server.reset_count()
    # A new directory answered from the cache spends nothing, so a tiny limit is never reached.
    again = judge("ragbench", data, config, out=tmp_path / "second", progress=False, max_cost=1e-9)
    assert priced_server.requests == 0
    assert again.summary["ok"] == 6 and again.summary["usage"]["cache_hits"] == 6


def test_a_limit_on_a_model_without_a_price_is_refused_before_anything_is_written(priced_server, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(3))
    config = loopback_config(priced_server.base_url, tmp_path / "cache")  # openai/loopback-judge: no price
    with pytest.raises(ConfigError, match="no price for model 'openai/loopback-judge'"):
        judge("ragbench", data, config, out=tmp_path / "run", progress=False, max_cost=1.0)
    assert priced_server.requests == 0
    assert not (tmp_path / "run" / "manifest.json").exists()


def test_a_negative_limit_is_bad_input():
    with pytest.raises(ConfigError, match="max_cost"), spending_limit(-1.0):
        pass


def test_cli_exits_7_with_the_spend_and_how_to_resume(priced_server, tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(12))
    config = loopback_config(priced_server.base_url, tmp_path / "cache", model=PRICED)
    config_file = tmp_path / "judge.yaml"
    config_file.write_text(yaml.safe_dump(config.model_dump(mode="json")), encoding="utf-8")
    base = ["judge", "ragbench", str(data), "--out", str(tmp_path / "run"), "--config", str(config_file)]

    code = run_cli([*base, "--max-cost", "0.0005"])
    err = capsys.readouterr().err
    assert code == ExitCode.COST_LIMIT
    message = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(message) == 1 and "cost limit reached" in message[0] and "of the $0.0005 limit" in message[0]
    assert "higher limit (or none) to resume" in message[0]
    # The progress bar shows the spend against the limit, and how many items were cached.
    assert "spent=$" in err and "/$0.0005" in err and "cached=0" in err

    assert run_cli([*base, "--no-progress"]) == 0
    assert _manifest(tmp_path / "run")["counts"] == {"ok": 12, "failed": 0}


def test_budget_counts_cached_and_failed_items_and_unknown_costs():
    budget = Budget(CostLimit(limit=0.01))
    budget.start(Path("run"), 0.004)
    budget.add(ItemResult(id="a", status="ok", usage=Usage(calls=1, cost=0.002)))
    budget.add(ItemResult(id="b", status="ok", usage=Usage(cache_hits=1)))
    budget.add(ItemResult(id="c", status="failed", usage=Usage(calls=2)))
    assert (budget.failed, budget.cached, budget.unpriced) == (1, 1, 1)
    assert budget.spent == pytest.approx(0.002) and not budget.exhausted
    assert budget.postfix() == {"failed": 1, "cached": 1, "spent": "$0.0020+? (run $0.0060/$0.0100)"}
    budget.add(ItemResult(id="d", status="ok", usage=Usage(calls=1, cost=0.004)))
    assert budget.exhausted


def test_a_limit_reached_by_the_last_items_finishes_the_run(priced_server, tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(3))
    config = loopback_config(priced_server.base_url, tmp_path / "cache", model=PRICED)  # 4 at once
    run = judge("ragbench", data, config, out=tmp_path / "run", progress=False, max_cost=1e-9)
    assert run.summary["ok"] == 3 and run.summary["usage"]["cost"] > 1e-9
    assert _manifest(tmp_path / "run")["status"] == "finished"


def test_a_limit_holds_when_the_run_is_spread_over_worker_processes(priced_server, tmp_path):
    from jurist.runner.scale import Scale, scaling

    data = write_jsonl(tmp_path / "in.jsonl", ragbench_rows(40))
    config = loopback_config(priced_server.base_url, tmp_path / "cache", model=PRICED)
    with scaling(Scale(workers=2)):
        with pytest.raises(CostLimitReached):
            judge("ragbench", data, config, out=tmp_path / "run", progress=False, max_cost=0.002)
        assert 0 < len(_results(tmp_path / "run")) < 40
        resumed = judge("ragbench", data, config, out=tmp_path / "run", progress=False)
    assert resumed.summary["ok"] == 40 and priced_server.requests == 40
