"""Juries end to end against loopback servers: three simulated jurors on a labelled set.

Each juror server is right 70%, 70% or 60% of the time, independently, deciding per item from
a seeded random number (``jury_simulation.juror_says``), so every vote, the majority, its
accuracy and the agreement among jurors are computed here from the simulated answers and
compared with what jurist reports.
"""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from jury_simulation import (
    BOOL_TASK,
    Juror,
    claim_rows,
    fleiss_kappa,
    juror_line,
    juror_says,
    pairwise_agreement,
    task_file,
    write_claims,
    write_jury,
)

from jurist import verbs
from jurist.errors import FatalProviderError
from jurist.jury.calibrate import log_odds_weight
from jurist.jury.config import load_jury
from jurist.jury.panel import jury_panel
from jurist.jury.run import run_panel
from jurist.metrics.annotators import krippendorff_alpha_nominal
from jurist.runner import ResultStore, iter_run_results
from jurist.tasks import get_task, run_task
from jurist.testing import Fault, OpenAICompatibleServer
from support import run_cli

JURORS = (("small-a", 0.7), ("small-b", 0.7), ("small-c", 0.6))
ITEMS = 200


@pytest.fixture(scope="module")
def servers():
    started = {name: OpenAICompatibleServer(Juror(name, p)).start() for name, p in JURORS}
    yield started
    for server in started.values():
        server.stop()


@pytest.fixture(scope="module")
def setup(tmp_path_factory, servers):
    folder = tmp_path_factory.mktemp("jury")
    task = task_file(folder, BOOL_TASK, "claims")
    data = write_claims(folder, ITEMS)
    lines = [juror_line(name, servers[name].base_url, folder / "cache") for name, _ in JURORS]
    jury = write_jury(folder / "panel.yaml", lines)
    return folder, task, data, jury


def simulated(count: int = ITEMS) -> tuple[list[bool], list[list[bool]]]:
    """Gold, and each item's votes in juror order."""
    rows = claim_rows(count)
    return [row["gold"] for row in rows], [
        [juror_says(n, p, row["claim"]) for n, p in JURORS] for row in rows
    ]


def test_a_majority_jury_reports_what_its_simulated_jurors_said(setup, servers, capsys):
    folder, task, data, jury = setup
    run = verbs.judge(task, data, jury, out=folder / "run", progress=False)
    gold, votes = simulated()
    majority = [sum(row) >= 2 for row in votes]
    summary = run.summary

    # The jury's verdicts and accuracy, by the task's own scoring.
    verdicts = run.set_index("id")["verdict"]
    assert [bool(verdicts[f"c{i}"]) for i in range(ITEMS)] == majority
    accuracy = sum(m == g for m, g in zip(majority, gold, strict=True)) / ITEMS
    assert summary["agreement"]["accuracy"] == pytest.approx(accuracy)
    assert summary["items"] == summary["ok"] == ITEMS

    section = summary["jury"]
    for index, member in enumerate(section["members"]):
        said = [row[index] for row in votes]
        rate = sum(s == g for s, g in zip(said, gold, strict=True)) / ITEMS
        assert member["gold"]["rate"] == pytest.approx(rate)
        assert member["figures"]["agreement.accuracy"] == pytest.approx(rate)
        assert member["gold"]["low"] < rate < member["gold"]["high"]
    assert section["aggregated"]["gold"]["rate"] == pytest.approx(accuracy)

    agreement = section["agreement"]
    assert agreement["scale"] == "nominal" and agreement["items"] == ITEMS
    assert agreement["fleiss_kappa"] == pytest.approx(fleiss_kappa(votes))
    assert agreement["fleiss_kappa_low"] < agreement["fleiss_kappa"] < agreement["fleiss_kappa_high"]
    assert agreement["pairwise_agreement"] == pytest.approx(pairwise_agreement(votes))
    assert agreement["krippendorff_alpha"] == pytest.approx(krippendorff_alpha_nominal(votes))
    pair = next(p for p in section["pairs"] if (p["a"], p["b"]) == ("small-a", "small-c"))
    assert pair["agreement"] == pytest.approx(sum(r[0] == r[2] for r in votes) / ITEMS)
    unanimous = sum(len(set(row)) == 1 for row in votes)
    assert section["votes"] == {
        "items": ITEMS,
        "unanimous": unanimous,
        "split": ITEMS - unanimous,
        "decided_by_order": 0,
        "partial": 0,
        "no_votes": 0,
    }

    # Every juror is an ordinary run directory; the jury's store keeps the votes and each call.
    out = folder / "run"
    for name, _ in JURORS:
        juror = pd.read_parquet(out / "jurors" / name / "items.parquet")
        assert len(juror) == ITEMS
        assert json.loads((out / "jurors" / name / "summary.json").read_text())["ok"] == ITEMS
    assert run_cli(["report", str(out / "jurors" / "small-a")]) == 0
    assert (out / "jurors" / "small-a" / "report.html").is_file()
    with ResultStore(out / "results.sqlite") as store:
        detail = store.item_detail("c5")
    assert detail is not None and detail.output is not None
    assert detail.output["jury"]["votes"] == dict(zip([n for n, _ in JURORS], votes[5], strict=True))
    assert detail.output["jury"]["voters"] == 3 and detail.calls is not None and len(detail.calls) == 3
    items = pd.read_parquet(out / "items.parquet").set_index("id")
    assert json.loads(items.loc["c5", "jury_votes"]) == detail.output["jury"]["votes"]
    titles = [figure["title"] for figure in json.loads((out / "figures.json").read_text())]
    assert "Agreement with gold: each juror and the jury" in titles
    assert "Agreement among jurors" in titles
    assert "jury_votes" in json.loads((out / "review.json").read_text())["columns"]
    report = (out / "report.md").read_text()
    assert "## jury: majority of 3 jurors (panel)" in report and "Fleiss' κ" in report
    assert json.loads((out / "jury.json").read_text())["agreement"]["items"] == ITEMS
    # The jury's run is an ordinary run of the task: found from its manifest, scored as is.
    found, _ = run_task(out)
    assert found.name == "claim-checker"
    assert verbs.score(found, out, gold=data).summary["agreement"]["accuracy"] == pytest.approx(accuracy)

    # A finished jury, run again from the command line: every juror resumes, no request is made.
    for server in servers.values():
        server.reset_count()
    capsys.readouterr()
    args = ["judge", str(task), str(data), "--config", str(jury), "--out", str(out), "--no-progress"]
    assert run_cli([*args, "--concurrency", "2"]) == 0  # a command-line override reaches every juror
    assert [server.requests for server in servers.values()] == [0, 0, 0]
    printed = capsys.readouterr().out
    assert "jury of 3 (majority): agreement among jurors: pairwise agreement" in printed
    assert f"agreement with gold: small-a {section['members'][0]['gold']['rate']:.3f}" in printed


def test_a_panel_given_some_items_judges_and_votes_on_those_alone(setup):
    folder, task, data, jury = setup
    found = get_task(str(task))
    some = ["c3", "c17", "c42"]
    out = folder / "some"
    run = run_panel(found, jury_panel(load_jury(jury)), data, out, found.options(), progress=False, only=some)
    # Each juror judged those items only (asked, or answered from the cache), into its own run.
    for name, _ in JURORS:
        assert {r.id for r in iter_run_results(out / "jurors" / name)} == set(some)
    for member in run.summary["jury"]["members"]:
        assert member["usage"]["calls"] + member["usage"]["cache_hits"] == len(some)
    # The panel's run holds those items, voted as the simulated jurors said.
    assert {r.id for r in iter_run_results(out)} == set(some)
    rows = {row["id"]: row for row in claim_rows(ITEMS)}
    verdicts = run.items.set_index("id")["verdict"]
    for item_id in some:
        said = [juror_says(name, p, rows[item_id]["claim"]) for name, p in JURORS]
        assert bool(verdicts[item_id]) == (sum(said) >= 2)
    assert run.summary["items"] == 3 and run.summary["jury"]["votes"]["items"] == 3


def test_calibrate_puts_the_jury_and_each_juror_on_the_leaderboard_and_writes_weights(setup, capsys):
    folder, task, data, jury = setup
    out = folder / "calibration"
    args = ["calibrate", str(task), "--gold", str(data), "-c", str(jury), "--out", str(out)]
    code = run_cli([*args, "--resamples", "50", "--write-weights", "--format", "csv"])
    assert code == 0
    leaderboard = pd.read_csv(out / "leaderboard.csv").set_index("judge")
    gold, votes = simulated()
    majority = [sum(row) >= 2 for row in votes]
    assert leaderboard.loc["panel", "accuracy"] == pytest.approx(
        sum(m == g for m, g in zip(majority, gold, strict=True)) / ITEMS
    )
    accuracies = {}
    for index, (name, _) in enumerate(JURORS):
        accuracies[name] = sum(row[index] == g for row, g in zip(votes, gold, strict=True)) / ITEMS
        assert leaderboard.loc[f"panel/{name}", "accuracy"] == pytest.approx(accuracies[name])
    assert leaderboard.loc["panel", "calls"] == sum(leaderboard.loc[f"panel/{n}", "calls"] for n, _ in JURORS)
    assert "written to" in capsys.readouterr().err

    weighted = out / "panel.weighted.yaml"
    copy = weighted.read_text()
    for name, accuracy in accuracies.items():
        assert f"{name}: {round(log_odds_weight(accuracy), 4)}" in copy
    # The weighted copy runs the same jurors (from its own folder) with weighted votes.
    run = verbs.judge(task, data, weighted, out=folder / "weighted", progress=False)
    section = run.summary["jury"]
    assert section["weights"] == {name: round(log_odds_weight(a), 4) for name, a in accuracies.items()}
    weights = [section["weights"][name] for name, _ in JURORS]
    expected = [sum(w for w, v in zip(weights, row, strict=True) if v) > sum(weights) / 2 for row in votes]
    verdicts = run.set_index("id")["verdict"]
    assert [bool(verdicts[f"c{i}"]) for i in range(ITEMS)] == expected


def test_a_failed_juror_is_left_out_of_its_items_and_a_stopped_one_resumes(tmp_path):
    count = 30
    jurors = {name: Juror(name, p) for name, p in JURORS}
    jurors["small-c"].garbage = {"number 4.", "number 9."}
    for juror in jurors.values():
        juror.garbage.add("number 29.")  # nobody answers this one
    started = {name: OpenAICompatibleServer(juror).start() for name, juror in jurors.items()}
    try:
        task = task_file(tmp_path, BOOL_TASK, "claims")
        data = write_claims(tmp_path, count)
        lines = [juror_line(n, s.base_url, tmp_path / "cache", parse_retries=0) for n, s in started.items()]
        jury = write_jury(tmp_path / "panel.yaml", lines)
        out = tmp_path / "run"

        started["small-c"].fail_always(Fault.unauthorized())
        with pytest.raises(FatalProviderError):
            verbs.judge(task, data, jury, out=out, progress=False)
        assert not (out / "results.sqlite").exists()  # the jury stopped before aggregating

        started["small-c"].fail_always(None)
        for server in started.values():
            server.reset_count()
        run = verbs.judge(task, data, jury, out=out, progress=False)
        assert [s.requests for s in started.values()][:2] == [0, 0]  # the finished jurors resumed
        _, votes = simulated(count)
        detail = run.set_index("id")
        for item in ("c4", "c9"):
            row = votes[int(item[1:])]
            # Two votes: their majority, or the first juror's vote when they split.
            assert detail.loc[item, "jury_voters"] == 2
            assert bool(detail.loc[item, "verdict"]) == row[0]
        assert detail.loc["c29", "status"] == "failed" and detail.loc["c29", "jury_voters"] == 0
        assert "every juror failed" in detail.loc["c29", "error"]
        assert run.summary["failed"] == 1 and run.summary["jury"]["votes"]["partial"] == 2

        # The juror answers again; --retry-failed asks it only what it failed, and the jury follows.
        jurors["small-c"].garbage = {"number 29."}
        for server in started.values():
            server.reset_count()
        run = verbs.judge(task, data, jury, out=out, progress=False, retry_failed=True)
        # An unparseable reply is asked twice (the chat format, then its JSON fallback): c29 costs
        # each juror 2 requests, and small-c answers c4 and c9 once each.
        assert [s.requests for s in started.values()] == [2, 2, 4]
        detail = run.set_index("id")
        assert detail.loc["c4", "jury_voters"] == 3 and bool(detail.loc["c4", "verdict"]) == (
            sum(votes[4]) >= 2
        )
        assert run.summary["jury"]["votes"]["partial"] == 0
        assert math.isclose(
            run.summary["agreement"]["accuracy"],
            sum(
                (sum(v) >= 2) == g
                for v, g in zip(votes[:29], [r["gold"] for r in claim_rows(29)], strict=True)
            )
            / 29,
        )
    finally:
        for server in started.values():
            server.stop()


def test_the_jury_report_opens_in_a_browser_with_the_jury_figures(page, setup):
    folder, task, data, jury = setup
    out = folder / "run"  # resumed when the first test made it: every juror is read back
    verbs.judge(task, data, jury, out=out, progress=False)
    page.goto((out / "report.html").as_uri())
    figures = json.loads((out / "figures.json").read_text())
    assert page.locator("figure.plot svg").count() == len(figures)
    for title in ("Agreement with gold: each juror and the jury", "Agreement among jurors"):
        assert page.get_by_text(title, exact=True).count() >= 1
    assert page.locator("#items-table tbody tr.item").count() == ITEMS
