"""The HTML reports in a real browser (headless Chromium), opened from disk with the network off.

The ``page`` fixture fails a test on any console error or uncaught exception in the page.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from report_runs import BOOL_ROWS, DISAGREEMENTS, FAILED, HOSTILE, MT_BENCH, LoopbackRun

from jurist.report.calibrate import calibration_figures
from jurist.verbs import calibrate

VISIBLE_IDS = "rows => rows.filter(row => !row.hidden).map(row => row.dataset.id)"


def open_offline(page: Any, path: Path) -> list[str]:
    """Open ``path`` from disk with the network off; returns the list of URLs the page asks for."""
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.context.set_offline(True)
    page.route(
        "**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort()
    )
    page.goto(path.as_uri())
    return requested


def visible_ids(page: Any) -> list[str]:
    return page.eval_on_selector_all("#items-table tbody tr.item", VISIBLE_IDS)


def test_the_ragbench_report_loads_offline_with_every_figure_and_item(page, ragbench_run: Path):
    requested = open_offline(page, ragbench_run / "report.html")
    figures = json.loads((ragbench_run / "figures.json").read_text())
    svgs = page.locator("figure.plot svg")
    assert svgs.count() == len(figures) > 0
    for index in range(svgs.count()):
        box = svgs.nth(index).bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 50
    assert page.locator("#items-table tbody tr.item").count() == 60
    assert page.locator("#shown-count").inner_text() == "60 of 60 shown"
    assert all(url.startswith("file:") for url in requested)


def test_text_status_and_agreement_filters_narrow_the_rows(page, loopback_run: LoopbackRun):
    open_offline(page, loopback_run.run_dir / "report.html")
    everything = {row_id for row_id, *_ in BOOL_ROWS}
    assert set(visible_ids(page)) == everything

    page.select_option("#filter-agreement", "false")
    assert set(visible_ids(page)) == DISAGREEMENTS
    assert page.locator("#shown-count").inner_text() == f"{len(DISAGREEMENTS)} of {len(everything)} shown"

    page.fill("#filter-text", "0.55")  # the confidence of one disagreement only
    assert visible_ids(page) == ["r8"]

    page.fill("#filter-text", "")
    page.select_option("#filter-agreement", "")
    page.select_option("#filter-status", "failed")
    assert set(visible_ids(page)) == FAILED
    page.select_option("#filter-agreement", "na")
    assert set(visible_ids(page)) == FAILED  # a failed item was never compared with gold

    page.select_option("#filter-status", "")
    page.select_option("#filter-agreement", "")
    page.fill("#filter-text", "R4")  # case-insensitive, on any column (here the id)
    assert visible_ids(page) == ["r4"]


def test_clicking_a_header_sorts_the_rows(page, loopback_run: LoopbackRun):
    open_offline(page, loopback_run.run_dir / "report.html")
    items = pd.read_parquet(loopback_run.run_dir / "items.parquet")
    confidence = {
        str(row.id): float(row.confidence) for row in items.itertuples() if not math.isnan(row.confidence)
    }
    unanswered = [str(i) for i in items["id"] if str(i) not in confidence]
    assert unanswered == sorted(FAILED)

    header = page.locator('#items-table th[data-key="confidence"] button')
    header.click()
    assert visible_ids(page) == sorted(confidence, key=confidence.get) + unanswered  # missing last
    assert page.locator('#items-table th[data-key="confidence"]').get_attribute("aria-sort") == "ascending"
    header.click()
    assert visible_ids(page) == sorted(confidence, key=confidence.get, reverse=True) + unanswered

    page.locator('#items-table th[data-key="id"] button').click()
    assert visible_ids(page) == [row_id for row_id, *_ in BOOL_ROWS]


def test_clicking_a_row_shows_its_prompt_and_raw_reply_as_text(page, loopback_run: LoopbackRun):
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    open_offline(page, loopback_run.run_dir / "report.html")
    row = page.locator('#items-table tr.item[data-id="r3"]')
    row.click()
    assert row.get_attribute("aria-expanded") == "true"
    detail = page.locator("#items-table tr.detail")
    assert detail.count() == 1
    blocks = detail.locator(".block pre").all_inner_texts()
    system = loopback_run.bodies[0]["messages"][0]["content"]
    assert system.strip() in [text.strip() for text in blocks]
    user = loopback_run.user_message("r3")
    assert user.strip() in [text.strip() for text in blocks]
    assert HOSTILE in detail.inner_text()  # shown as the text it is ...
    assert dialogs == []  # ... and never run
    assert loopback_run.replies["r3"].strip() in [text.strip() for text in blocks]
    assert "raw replies (1)" in detail.inner_text()

    # The detail follows its row when the table is sorted, and a second click closes it.
    page.locator('#items-table th[data-key="confidence"] button').click()
    assert page.eval_on_selector(
        '#items-table tr.item[data-id="r3"]', "row => row.nextElementSibling.className"
    ) == ("detail")
    row.click()
    assert page.locator("#items-table tr.detail").count() == 0


def test_a_failed_item_shows_its_error_and_a_baseline_item_says_it_has_no_prompt(
    page, loopback_run: LoopbackRun, ragbench_run: Path
):
    open_offline(page, loopback_run.run_dir / "report.html")
    page.locator('#items-table tr.item[data-id="r6"]').click()
    detail = page.locator("#items-table tr.detail").inner_text()
    assert "ERROR" in detail.upper() and "maybe" in detail

    page.goto((ragbench_run / "report.html").as_uri())
    page.locator("#items-table tr.item").first.click()
    assert "Baseline judge: no prompt" in page.locator("#items-table tr.detail").inner_text()


@pytest.fixture
def calibration_dir(tmp_path: Path) -> Path:
    out = tmp_path / "calibration"
    result = calibrate(
        MT_BENCH / "task.yaml",
        [MT_BENCH / "answers.jsonl"],
        ["baseline", "baseline"],
        out=out,
        n_resamples=50,
    )
    (out / "expected_figures.json").write_text(
        json.dumps([figure.title for figure in calibration_figures(result)]), encoding="utf-8"
    )
    return out


def test_the_calibration_page_shows_agreement_bars_and_both_tables(page, calibration_dir: Path):
    assert (calibration_dir / "leaderboard.md").is_file()
    requested = open_offline(page, calibration_dir / "leaderboard.html")
    titles = json.loads((calibration_dir / "expected_figures.json").read_text())
    # mt-bench is a score task: its accuracy is the exact agreement, its kappa the QWK
    assert {"Exact agreement with gold", "QWK (quadratic-weighted kappa) against gold"} <= set(titles)
    assert page.locator("figure.plot svg").count() == len(titles)
    for title in titles:
        assert page.locator(f'figure.plot svg[aria-label="{title}"]').count() == 1
    assert page.locator("#leaderboard-table tbody tr").count() == 2
    judges = page.eval_on_selector_all(
        "#leaderboard-table tbody tr", "rows => rows.map(r => r.cells[1].textContent)"
    )
    assert judges == ["baseline", "baseline-2"]
    by_label = pd.read_csv(calibration_dir / "by_label.csv")
    pairs = by_label.groupby(["judge"])["label"].nunique().sum()
    assert page.locator("#classes-table tbody tr").count() == pairs
    page.locator("#leaderboard-table th button", has_text="judge").click()
    page.locator("#leaderboard-table th button", has_text="judge").click()
    judges = page.eval_on_selector_all(
        "#leaderboard-table tbody tr", "rows => rows.map(r => r.cells[1].textContent)"
    )
    assert judges == ["baseline-2", "baseline"]
    assert all(url.startswith("file:") for url in requested)


def test_the_judged_text_is_in_the_rows_the_details_and_the_filter(page, mt_bench_run: Path):
    open_offline(page, mt_bench_run / "report.html")
    rows = [
        json.loads(line) for line in (MT_BENCH / "answers.jsonl").read_text().splitlines() if line.strip()
    ]
    first = rows[0]
    shown = page.locator("#items-table tr.item[data-id='q01'] td.text").inner_text()
    assert shown.startswith(f"question: {first['question']}")
    # A word only in one answer's tail (past what the row shows) still filters to its item.
    word = "purpose-built"
    page.fill("#filter-text", word)
    assert visible_ids(page) == [row["id"] for row in rows if word in row["answer"]]
    page.fill("#filter-text", "")
    page.click("#items-table tr.item[data-id='q01']")
    detail = page.locator("tr.detail .item-detail")
    labels = detail.locator(".block .label").all_inner_texts()
    assert [label.lower() for label in labels[:3]] == ["question", "answer", "verdict"]  # text first
    assert detail.locator(".block.input pre").nth(1).inner_text() == first["answer"]
