"""Cascades end to end against loopback servers whose every answer is known.

The small judge (a priced model name) is right with confidence 0.95 on easy claims and wrong
with confidence 0.5 on hard ones; the large judge (a pricier model name) is always right. So a
cascade that sends on what the small judge is less than 0.8 sure of sends exactly the hard
claims to the large judge, and every cost is recomputed here from the token counts the
servers reported and LiteLLM's offline prices.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
import yaml
from cascade_simulation import (
    LARGE_MODEL,
    SMALL_MODEL,
    call_costs,
    claim_rows,
    gold_of,
    is_hard,
    judge_line,
    large,
    rule_fires,
    small,
    small_says,
    start,
    write_cascade,
    write_claims,
    write_task,
)

from jurist import verbs
from jurist.errors import RunDirectoryError
from jurist.runner import ResultStore, iter_run_results
from jurist.tasks import run_task
from support import run_cli

ITEMS = 40


@pytest.fixture(scope="module")
def servers():
    started = {"small": start(small), "large": start(large)}
    yield started
    for server in started.values():
        server.stop()


def _reset(servers) -> None:
    for server in servers.values():
        server.reset_count()


def _ids(run_dir) -> set[str]:
    return {result.id for result in iter_run_results(run_dir)}


def _hard(count: int = ITEMS) -> set[str]:
    return {row["id"] for row in claim_rows(count) if is_hard(row["claim"])}


def _two_stages(folder, servers, cache, *, below: float | None = 0.8, name: str = "cascade"):
    extra = {"escalate_below": below} if below is not None else {}
    lines = [
        judge_line("small", SMALL_MODEL, servers["small"], cache, **extra),
        judge_line("large", LARGE_MODEL, servers["large"], cache),
    ]
    return write_cascade(folder / f"{name}.yaml", lines)


@pytest.fixture(scope="module")
def judged(tmp_path_factory, servers):
    """One cascade run of 40 claims, and what each server's answers cost."""
    folder = tmp_path_factory.mktemp("cascade")
    task, data = write_task(folder), write_claims(folder, ITEMS)
    cascade = _two_stages(folder, servers, folder / "cache")
    _reset(servers)
    with pytest.MonkeyPatch.context() as patch:  # the tests' isolated environment, for the module
        for name in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
            patch.delenv(name, raising=False)
        patch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        patch.setenv("JURIST_TEST_API_KEY", "loopback-test-key")
        run = verbs.judge(task, data, cascade, out=folder / "run", progress=False)
    requests = {name: server.requests for name, server in servers.items()}
    costs = {
        "small": call_costs(servers["small"], SMALL_MODEL),
        "large": call_costs(servers["large"], LARGE_MODEL),
    }
    return folder, task, data, cascade, run, requests, costs


def test_the_cascade_sends_exactly_the_unsure_items_on_and_saves_what_the_tokens_say(judged):
    folder, _, _, _, run, requests, costs = judged
    out = folder / "run"
    hard = _hard()
    assert requests == {"small": ITEMS, "large": len(hard)}
    assert _ids(out / "stages" / "small") == {f"c{i}" for i in range(ITEMS)}
    assert _ids(out / "stages" / "large") == hard

    # Per item the deciding stage's verdict: the large judge's on hard claims, so all right.
    table = run.set_index("id")
    gold = {row["id"]: row["gold"] for row in claim_rows(ITEMS)}
    assert {i: bool(table.loc[i, "verdict"]) for i in gold} == gold
    assert run.summary["agreement"]["accuracy"] == 1.0
    assert {i for i in gold if table.loc[i, "cascade_stage"] == "large"} == hard
    assert table.loc["c0", "cascade_path"] == "small > large" and table.loc["c1", "cascade_path"] == "small"

    section = run.summary["cascade"]
    assert section["decided"] == {"small": ITEMS - len(hard), "large": len(hard)}
    small_stage, large_stage = section["stages"]
    assert (small_stage["sent"], small_stage["escalated"], large_stage["sent"]) == (
        ITEMS,
        len(hard),
        len(hard),
    )
    # Agreement on the items each stage judged: the small judge alone is wrong on every hard claim.
    assert small_stage["gold"] == {"n": ITEMS, "stage": (ITEMS - len(hard)) / ITEMS, "cascade": 1.0}
    assert large_stage["gold"] == {"n": len(hard), "stage": 1.0, "cascade": 1.0}

    # Cost from the servers' token counts: what the cascade spent, and everything by the large judge.
    spent_small, spent_large = sum(costs["small"].values()), sum(costs["large"].values())
    assert small_stage["cost"] == pytest.approx(spent_small, rel=1e-9)
    assert large_stage["cost"] == pytest.approx(spent_large, rel=1e-9)
    everything = spent_large / len(hard) * ITEMS
    cost = section["cost"]
    assert cost["total"] == pytest.approx(spent_small + spent_large, rel=1e-9)
    assert cost["all_by_last_stage"] == pytest.approx(everything, rel=1e-9)
    assert cost["saved"] == pytest.approx(everything - spent_small - spent_large, rel=1e-9)
    assert cost["saved"] > 0
    assert run.summary["usage"]["cost"] == pytest.approx(spent_small + spent_large, rel=1e-9)

    # The store keeps, per item, the path, why each stage sent it on, and every LM call on it.
    with ResultStore(out / "results.sqlite") as store:
        detail = store.item_detail("c0")
    assert detail is not None and detail.output is not None and detail.calls is not None
    assert detail.output["cascade"] == {
        "stage": "large",
        "path": ["small", "large"],
        "reasons": {"small": "confidence 0.5 below 0.8"},
    }
    assert len(detail.calls) == 2

    # Each stage is an ordinary run of the task; so is the cascade's, with its own figures.
    for stage, count in (("small", ITEMS), ("large", len(hard))):
        found, _ = run_task(out / "stages" / stage)
        assert found.name == "claim-checker"
        assert json.loads((out / "stages" / stage / "summary.json").read_text())["items"] == count
    titles = [figure["title"] for figure in json.loads((out / "figures.json").read_text())]
    assert "Items decided by each stage" in titles and "verdict: judge vs gold" in titles
    assert {"cascade_stage", "cascade_path"} <= set(json.loads((out / "review.json").read_text())["columns"])
    assert "## cascade: small > large (cascade)" in (out / "report.md").read_text()
    assert json.loads((out / "cascade.json").read_text())["decided"] == section["decided"]


def test_running_a_finished_cascade_again_makes_no_request_and_another_cascade_is_refused(
    judged, servers, capsys
):
    folder, task, data, cascade, _, _, _ = judged
    out = folder / "run"
    _reset(servers)
    capsys.readouterr()
    args = ["judge", str(task), str(data), "--config", str(cascade), "--out", str(out), "--no-progress"]
    assert run_cli([*args, "--concurrency", "2"]) == 0
    assert [server.requests for server in servers.values()] == [0, 0]
    printed = capsys.readouterr().out
    hard = len(_hard())
    assert f"cascade of 2 stages: decided small {ITEMS - hard}, large {hard} (of {ITEMS} items)" in printed
    assert "saved $" in printed

    other = _two_stages(folder, servers, folder / "cache", below=0.6, name="cascade")
    with pytest.raises(RunDirectoryError, match="another cascade"):
        verbs.judge(task, data, other, out=out, progress=False)
    assert [server.requests for server in servers.values()] == [0, 0]


def test_calibrate_chooses_the_cheapest_threshold_that_reaches_the_target(tmp_path, servers, capsys):
    task, data = write_task(tmp_path), write_claims(tmp_path, ITEMS)
    cascade = _two_stages(tmp_path, servers, tmp_path / "cache", below=None, name="tiered")
    out = tmp_path / "calibration"
    _reset(servers)
    args = ["calibrate", str(task), "--gold", str(data), "-c", str(cascade), "--out", str(out)]
    assert run_cli([*args, "--target-agreement", "0.9", "--resamples", "50", "--format", "csv"]) == 0
    # Every stage judged every gold item once; the choice itself made no request.
    assert [server.requests for server in servers.values()] == [ITEMS, ITEMS]

    # The choice, recomputed: candidates 0, each confidence the small judge gave, and 1; the
    # cheapest that reaches 0.9 agreement (equal costs: more agreement, then the lower threshold).
    rows = claim_rows(ITEMS)
    small_cost = call_costs(servers["small"], SMALL_MODEL)
    large_cost = call_costs(servers["large"], LARGE_MODEL)
    sure = {row["claim"]: small_says(row["claim"])[1] for row in rows}
    right = {row["claim"]: small_says(row["claim"])[0] == gold_of(row["claim"]) for row in rows}
    outcomes = []
    for threshold in sorted({0.0, 1.0, *sure.values()}):
        sent = [text for text in sure if sure[text] < threshold]
        agreement = sum(True if text in sent else right[text] for text in sure) / ITEMS
        cost = sum(small_cost.values()) + sum(large_cost[text] for text in sent)
        outcomes.append((agreement < 0.9, cost, -agreement, threshold))
    _, expected_cost, minus_agreement, expected = min(outcomes)
    assert expected == 0.95

    copy = yaml.safe_load((out / "tiered.calibrated.yaml").read_text())
    assert copy["cascade"]["stages"][0]["escalate_below"] == expected
    assert "escalate_below" not in copy["cascade"]["stages"][1]
    assert copy["cascade"]["target_agreement"] == 0.9
    choice = json.loads((out / "calibration.json").read_text())["settings"]["cascades"]["tiered"]
    assert choice["thresholds"] == {"small": expected} and choice["met"] and choice["unit"] == "usd"
    assert choice["cascade"]["agreement"] == -minus_agreement
    assert choice["cascade"]["cost"] == pytest.approx(expected_cost, rel=1e-9)
    everything = sum(large_cost.values())
    assert choice["stages_alone"]["small"]["agreement"] == sum(right.values()) / ITEMS
    assert choice["all_by_last_stage"] == {
        "stage": "large",
        "agreement": 1.0,
        "cost": pytest.approx(everything),
    }
    assert choice["saved"] == pytest.approx(everything - expected_cost, rel=1e-9)
    printed = capsys.readouterr().err
    assert "cascade tiered: escalate_below small 0.95; target agreement 0.900 reached" in printed
    assert f"thresholds written to {out / 'tiered.calibrated.yaml'}" in printed

    # The leaderboard: the cascade with the chosen threshold, each stage alone.
    leaderboard = pd.read_csv(out / "leaderboard.csv").set_index("judge")
    assert leaderboard.loc["tiered", "accuracy"] == 1.0
    assert leaderboard.loc["tiered/small", "accuracy"] == sum(right.values()) / ITEMS
    assert leaderboard.loc["tiered/large", "accuracy"] == 1.0
    assert leaderboard.loc["tiered", "cost_per_judgment"] == pytest.approx(expected_cost / ITEMS, rel=1e-9)

    # The calibrated copy judges as chosen, from the cache of the calibration's runs.
    _reset(servers)
    run = verbs.judge(task, data, out / "tiered.calibrated.yaml", out=tmp_path / "run", progress=False)
    assert [server.requests for server in servers.values()] == [0, 0]
    assert _ids(tmp_path / "run" / "stages" / "large") == _hard()
    assert run.summary["agreement"]["accuracy"] == 1.0


def test_a_baseline_stage_sends_on_exactly_the_items_no_rule_fired_on(tmp_path, servers):
    task = write_task(tmp_path)
    data = write_claims(tmp_path, ITEMS, rules=True, garbled=frozenset({2}))
    lines = [
        "    - {name: rules, config: baseline}",
        judge_line(
            "small", SMALL_MODEL, servers["small"], tmp_path / "cache", escalate_below=0.8, parse_retries=0
        ),
        judge_line("large", LARGE_MODEL, servers["large"], tmp_path / "cache"),
    ]
    cascade = write_cascade(tmp_path / "three.yaml", lines)
    out = tmp_path / "run"
    run = verbs.judge(task, data, cascade, out=out, progress=False)
    rows = claim_rows(ITEMS, rules=True, garbled=frozenset({2}))
    no_rule = {row["id"] for row in rows if not rule_fires(row["claim"])}
    assert _ids(out / "stages" / "rules") == {row["id"] for row in rows}
    assert _ids(out / "stages" / "small") == no_rule
    # The small judge's unparseable answer is a failure, sent on like an unsure one.
    assert _ids(out / "stages" / "large") == (_hard() | {"c2"}) & no_rule

    # The rule judge records which rule fired (1, 2) or none (the default verdict).
    fired = {r.id: r.output["rule"] for r in iter_run_results(out / "stages" / "rules") if r.output}
    assert {i for i, rule in fired.items() if rule is None} == no_rule
    assert {fired[row["id"]] for row in rows if row["id"] not in no_rule} == {1, 2}

    table = run.set_index("id")
    assert {row["id"]: bool(table.loc[row["id"], "verdict"]) for row in rows} == {
        row["id"]: row["gold"] for row in rows
    }
    with ResultStore(out / "results.sqlite") as store:
        detail = store.item_detail("c2")
    assert detail is not None and detail.output is not None
    reasons = detail.output["cascade"]["reasons"]
    assert reasons["rules"] == "no rule fired" and reasons["small"].startswith("failed")
    section = run.summary["cascade"]
    assert section["stages"][0]["cost"] == 0.0 and section["stages"][0]["usage"]["calls"] == 0
    assert section["decided"]["rules"] == ITEMS - len(no_rule)

    # --retry-failed does not ask the small judge again what the large one answered since.
    _reset(servers)
    again = verbs.judge(task, data, cascade, out=out, progress=False, retry_failed=True)
    assert [server.requests for server in servers.values()] == [0, 0]
    assert again.set_index("id").loc["c2", "cascade_path"] == "rules > small > large"


def test_a_jury_stage_sends_on_the_items_its_jurors_disagree_on(tmp_path, servers):
    task, data = write_task(tmp_path), write_claims(tmp_path, 20)
    jurors = [
        judge_line("small", SMALL_MODEL, servers["small"], tmp_path / "cache"),
        judge_line("large", LARGE_MODEL, servers["large"], tmp_path / "cache"),
    ]
    (tmp_path / "panel.yaml").write_text("jury:\n  jurors:\n" + "\n".join(jurors) + "\n", encoding="utf-8")
    lines = [
        "    - {name: panel, jury: panel.yaml}",
        judge_line("last", LARGE_MODEL, servers["large"], tmp_path / "cache", temperature=0.5),
    ]
    cascade = write_cascade(tmp_path / "with-jury.yaml", lines)
    out = tmp_path / "run"
    run = verbs.judge(task, data, cascade, out=out, progress=False)
    hard = _hard(20)
    assert _ids(out / "stages" / "last") == hard  # the small juror is wrong exactly on the hard claims
    assert _ids(out / "stages" / "panel" / "jurors" / "small") == {f"c{i}" for i in range(20)}
    assert run.summary["agreement"]["accuracy"] == 1.0
    assert run.summary["cascade"]["stages"][0]["sends_on"] == "jurors not unanimous"


def test_the_cascade_report_opens_in_a_browser_with_its_figures(page, judged):
    folder = judged[0]
    out = folder / "run"
    page.goto((out / "report.html").as_uri())
    figures = json.loads((out / "figures.json").read_text())
    assert page.locator("figure.plot svg").count() == len(figures)
    for title in (
        "Items decided by each stage",
        "Cost: each stage, the cascade, and everything by the last stage",
    ):
        assert page.get_by_text(title, exact=True).count() >= 1
    assert page.locator("#items-table tbody tr.item").count() == ITEMS


def test_a_cascade_run_again_reads_its_figures_from_the_figure_cache(judged, monkeypatch):
    from jurist.report import plots

    folder, task, data, cascade, *_ = judged
    assert (folder / "cache" / "figures.sqlite").is_file()
    # The first run's costs were spent; a cached run costs nothing: its cost figure is another.
    verbs.judge(task, data, cascade, out=folder / "cached", progress=False)
    drawn: list[object] = []
    real = plots.drawn_svgs
    monkeypatch.setattr(plots, "drawn_svgs", lambda figures: drawn.extend(figures) or real(figures))
    verbs.judge(task, data, cascade, out=folder / "again", progress=False)
    assert drawn == []
    pages = [(folder / out / "report.html").read_text(encoding="utf-8") for out in ("cached", "again")]
    svgs = [re.findall(r"<svg .*?</svg>", page, re.S) for page in pages]
    assert svgs[0] and svgs[1] == svgs[0]
