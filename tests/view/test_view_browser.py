"""End to end in a real browser: two judges judge a YAML label task through two loopback
servers, ``jurist view`` serves both runs, a person compares them and labels the items the
judge got wrong, and the labels become the gold file ``jurist calibrate`` reads.

Each item's text carries what each judge answers (``A=neg B=pos``), so which items differ,
which judge is right and the accuracy against the labels are known by hand.
"""

from __future__ import annotations

import io
import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from jurist.testing import OpenAICompatibleServer
from jurist.verbs import judge
from jurist.view.server import ViewServer
from support import loopback_config, prompt_sections, run_cli, write_jsonl

pytestmark = pytest.mark.slow

TASK = """\
name: view-e2e
instructions: Say the sentiment of the text.
inputs: [text]
output:
  kind: label
  labels: [pos, neg, mixed]
  reasoning: false
gold: gold
"""

# gold, judge A's answer, judge B's answer
ITEMS = [
    ("pos", "pos", "pos"),
    ("neg", "neg", "neg"),
    ("pos", "neg", "pos"),  # r2: A wrong, B right
    ("mixed", "mixed", "mixed"),
    ("neg", "neg", "neg"),
    ("mixed", "pos", "neg"),  # r5: both wrong
    ("pos", "pos", "pos"),
    ("neg", "neg", "mixed"),  # r7: A right, B wrong
    ("pos", "pos", "pos"),
    ("mixed", "mixed", "pos"),  # r9: A right, B wrong
    ("neg", "neg", "neg"),
    ("pos", "pos", "pos"),
]
DIFFERING = {"r2": "B", "r5": "neither", "r7": "A", "r9": "A"}
# What a person decides for the items judge A got wrong (r2: A was right after all).
LABELS = {"r2": "neg", "r5": "neg"}


def answering(side: str):
    pattern = re.compile(rf"\b{side}=(\w+)")

    def respond(body: dict[str, Any]) -> str:
        found = pattern.search(prompt_sections(body).get("text", ""))
        return f"[[ ## verdict ## ]]\n{found.group(1) if found else 'pos'}\n\n[[ ## completed ## ]]"

    return respond


def config_file(path: Path, server: OpenAICompatibleServer, model: str, cache: Path) -> Path:
    config = loopback_config(server.base_url, cache, model=model)
    path.write_text(json.dumps(config.model_dump(mode="json")), encoding="utf-8")
    return path


def test_browse_compare_label_export_and_calibrate(tmp_path, page, capsys):
    task = tmp_path / "task.yaml"
    task.write_text(textwrap.dedent(TASK), encoding="utf-8")
    rows = [
        {"id": f"r{i}", "text": f"Review {i}. A={a} B={b}", "gold": gold}
        for i, (gold, a, b) in enumerate(ITEMS)
    ]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    runs = tmp_path / "runs"
    with (
        OpenAICompatibleServer(answering("A")) as server_a,
        OpenAICompatibleServer(answering("B")) as server_b,
    ):
        config_a = config_file(tmp_path / "A.yaml", server_a, "openai/judge-a", tmp_path / "cache")
        config_b = config_file(tmp_path / "B.yaml", server_b, "openai/judge-b", tmp_path / "cache")
        for name, config in (("a", config_a), ("b", config_b)):
            judge(task, data, config, out=runs / name, progress=False)

        with ViewServer(runs) as viewer:
            url = viewer.url
            # The run history lists both runs.
            page.goto(url)
            listed = page.locator("#runs tbody tr").evaluate_all("rows => rows.map(r => r.dataset.run)")
            assert sorted(listed) == ["a", "b"]
            assert page.locator("figure svg").count() == 1

            # The run page loads with its figures, and its items table pages.
            page.click("#runs a:text-is('a')")
            assert page.locator("h1").inner_text().startswith("view-e2e")
            assert page.locator("#summary").count() == 1 and page.locator("figure svg").count() >= 1
            page.goto(f"{url}run?id=a&limit=5")
            first = item_ids(page, "#items")
            page.click("nav.pages >> nth=0 >> a[data-page=next]")
            second = item_ids(page, "#items")
            page.click("nav.pages >> nth=0 >> a[data-page=last]")
            third = item_ids(page, "#items")
            assert [len(first), len(second), len(third)] == [5, 5, 2]
            assert sorted(first + second + third) == sorted(row["id"] for row in rows)
            assert page.locator("[data-role=range]").first.inner_text() == "11–12 of 12"
            page.click("#items th a[data-sort=id]")  # sorted by id, paged from the start
            assert item_ids(page, "#items") == ["r0", "r1", "r10", "r11", "r2"]
            page.click("nav.pages >> nth=0 >> a[data-page=next]")
            assert item_ids(page, "#items") == ["r3", "r4", "r5", "r6", "r7"]

            # Compare: exactly the items whose verdicts differ, and which judge is right.
            page.select_option("form[action='/compare'] select[name=b]", "b")
            page.click("form[action='/compare'] button")
            assert dict(zip(item_ids(page, "#differ"), outcomes(page), strict=True)) == DIFFERING
            assert page.locator("[data-role=differing]").inner_text() == "4"

            # The queue of judge A's disagreements with gold: label them in the browser.
            page.goto(f"{url}queue?run=a")
            assert sorted(item_ids(page, "#queue")) == ["r2", "r5"]  # in the order items finished
            page.fill("#who", "ann")
            page.dispatch_event("#who", "change")
            for item, label in LABELS.items():
                row = page.locator(f"#queue tr[data-item='{item}']")
                row.locator("select[name=label]").select_option(label)
                row.locator("button").click()
                status = row.locator("[data-role=status]")
                status.filter(has_text="saved:").wait_for()
                assert status.inner_text() == f"saved: {label} by ann"
            page.reload()
            assert page.input_value("#who") == "ann"  # remembered in localStorage
            assert page.locator("#queue tr.labelled").count() == 2

        records = [json.loads(line) for line in (runs / "a" / "labels.jsonl").read_text().splitlines()]
        assert {record["item"]: record["label"] for record in records} == LABELS
        assert all(record["who"] == "ann" and record["when"] for record in records)

        gold = tmp_path / "gold.jsonl"
        assert run_cli(["labels", "export", str(runs / "a"), "--out", str(gold)]) == 0
        exported = {row["id"]: row["gold"] for row in map(json.loads, gold.read_text().splitlines())}
        assert exported == {f"r{i}": LABELS.get(f"r{i}", item[0]) for i, item in enumerate(ITEMS)}
        capsys.readouterr()

        # Judge A against the labelled gold: right everywhere but r5 (it said pos, people say neg).
        expected = sum(a == exported[f"r{i}"] for i, (_, a, _) in enumerate(ITEMS)) / len(ITEMS)
        assert expected == pytest.approx(11 / 12)
        calibrate = ["calibrate", str(task), "--gold", str(gold), "-c", str(config_a), "--format", "csv"]
        assert run_cli([*calibrate, "--out", str(tmp_path / "calibration")]) == 0
        leaderboard = pd.read_csv(io.StringIO(capsys.readouterr().out))
        assert leaderboard.loc[0, "accuracy"] == pytest.approx(expected)


def item_ids(page: Any, table: str) -> list[str]:
    return page.locator(f"{table} tbody tr").evaluate_all("rows => rows.map(r => r.dataset.item)")


def outcomes(page: Any) -> list[str]:
    return page.locator("#differ [data-role=outcome]").all_inner_texts()
