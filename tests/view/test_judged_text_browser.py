"""What a person needs on the viewer's pages, in a real browser: the judged text (the item's
inputs) on the item page and in the labelling queue, for a baseline run and for an LLM run;
search over that text; an all-failed run that does not look finished; the two runs of one
task preselected to compare; and a run table that fits a 1,400-pixel window.

The runs (made once for the module): the support-answers example judged by its offline rules
and by a loopback LLM, the same task judged by a loopback LLM that never answers usably, and
a newer run of another task.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import jurist
from jurist.testing import OpenAICompatibleServer
from jurist.view.server import ViewServer
from support import loopback_config, prompt_sections, write_jsonl

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support-answers"
OTHER_TASK = """\
name: tone-check
instructions: Say the tone of the text.
inputs: [text]
output: {kind: label, labels: [calm, angry]}
gold: gold
baseline:
  rules:
    - {pattern: "!", value: angry}
  default: calm
"""
CREATED = {
    "support/rules": "2026-03-01T10:00:00+00:00",
    "support/llm": "2026-03-01T11:00:00+00:00",
    "support/broken": "2026-03-01T12:00:00+00:00",
    "tone/rules": "2026-03-01T13:00:00+00:00",
}


def _score_reply(body: dict[str, Any]) -> str:
    """5 for an answer that names a place in the product (``Settings``), else 2."""
    score = 5 if "Settings" in prompt_sections(body).get("answer", "") else 2
    return f"[[ ## reasoning ## ]]\nJudged.\n\n[[ ## verdict ## ]]\n{score}\n\n[[ ## completed ## ]]"


def _useless_reply(body: dict[str, Any]) -> str:
    return "I would rather not say."


def _set_created(run_dir: Path, when: str) -> None:
    manifest = run_dir / "manifest.json"
    found = json.loads(manifest.read_text(encoding="utf-8"))
    found["created_at"] = when
    manifest.write_text(json.dumps(found), encoding="utf-8")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("judged-text")
    root = folder / "runs"
    task, data = EXAMPLE / "task.yaml", EXAMPLE / "answers.csv"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JURIST_TEST_API_KEY", "loopback-test-key")
        patch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        jurist.judge(task, data, out=root / "support" / "rules", progress=False)
        for name, reply in (("llm", _score_reply), ("broken", _useless_reply)):
            with OpenAICompatibleServer(reply) as server:
                config = loopback_config(server.base_url, folder / f"cache-{name}", model=f"openai/{name}")
                config = config.model_copy(update={"parse_retries": 0})
                jurist.judge(task, data, config, out=root / "support" / name, progress=False)
        other = folder / "tone.yaml"
        other.write_text(textwrap.dedent(OTHER_TASK), encoding="utf-8")
        rows = [
            {"id": "x1", "text": "Fine, thanks.", "gold": "calm"},
            {"id": "x2", "text": "No!", "gold": "angry"},
        ]
        jurist.judge(
            other, write_jsonl(folder / "tone.jsonl", rows), out=root / "tone" / "rules", progress=False
        )
    for run_id, when in CREATED.items():
        _set_created(root / run_id, when)
    yield root


@pytest.fixture(scope="module")
def viewer(runs: Path) -> Iterator[str]:
    with ViewServer(runs) as server:
        yield server.url


def _question_of(item: str) -> str:
    import csv

    with open(EXAMPLE / "answers.csv", encoding="utf-8") as handle:
        return next(row["question"] for row in csv.DictReader(handle) if row["ticket"] == item)


@pytest.mark.parametrize("run", ["support/rules", "support/llm"])
def test_the_item_page_and_the_queue_show_the_judged_text(page, viewer: str, run: str):
    page.goto(f"{viewer}item?run={run}&id=t02")
    inputs = page.locator("[data-role=inputs]")
    assert inputs.locator("pre[data-field=question]").inner_text() == _question_of("t02")
    assert inputs.locator("pre[data-field=answer]").inner_text() == "Please contact support."
    # The judged text comes before the prompt (an LLM run's calls) and the raw replies.
    order = page.locator("h2").all_inner_texts()
    assert order.index("Judged text") < order.index("Calls (the prompt sent)")

    page.goto(f"{viewer}queue?run={run}")
    rows = page.locator("#queue tbody tr")
    assert rows.count() >= 2
    first = rows.first
    item = first.get_attribute("data-item")
    assert first.locator("pre[data-field=question]").inner_text() == _question_of(str(item))
    assert first.locator("pre[data-field=answer]").is_visible()
    # Label two items with the judged text on screen.
    for index in range(2):
        row = rows.nth(index)
        row.locator("input[name=label]").fill("3")
        row.locator("button").click()
        row.locator("[data-role=status]").filter(has_text="saved:").wait_for()
    page.reload()
    assert page.locator("#queue tr.labelled").count() == 2


def test_search_finds_a_word_of_the_judged_text(page, viewer: str):
    page.goto(f"{viewer}run?id=support/rules")
    page.fill("input[name=q]", "Canada")  # in questions and answers only, never in an id or verdict
    page.click("form[action='/run'] button")
    found = page.locator("#items tbody tr").evaluate_all("rows => rows.map(r => r.dataset.item)")
    assert sorted(found) == ["t06", "t07"]
    assert all("Canada" in text for text in page.locator("#items [data-role=text]").all_inner_texts())


def test_an_all_failed_run_is_not_shown_as_finished(page, viewer: str):
    page.goto(viewer)
    status = page.locator("#runs tr[data-run='support/broken'] [data-role=status]")
    assert status.inner_text() == "all failed"
    colour = status.evaluate("cell => getComputedStyle(cell).color")
    assert colour == "rgb(207, 34, 46)"  # the colour of failure, not of a finished run
    finished = page.locator("#runs tr[data-run='support/rules'] [data-role=status]")
    assert finished.inner_text() == "finished"
    page.goto(f"{viewer}run?id=support/broken")
    assert page.locator("table.facts [data-role=status]").inner_text() == "all failed"


def test_the_run_list_shows_headlines_and_preselects_two_runs_of_one_task(page, viewer: str, runs: Path):
    page.set_viewport_size({"width": 1400, "height": 900})
    page.goto(viewer)
    qwk = json.loads((runs / "support" / "rules" / "summary.json").read_text())["agreement"]["qwk"]
    headline = page.locator("#runs tr[data-run='support/rules'] [data-role=headline]").inner_text()
    assert headline == f"qwk {qwk:.4g}"
    assert "support/rules" in page.locator("#history-figure figcaption").inner_text()
    # The newest run is another task's: the preselected pair is the two newest of one task.
    assert page.input_value("#compare-form select[name=a]") == "support/broken"
    assert page.input_value("#compare-form select[name=b]") == "support/llm"
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400
    # From a run's compare page, the first choice is a run of the same task.
    page.goto(f"{viewer}compare?a=support/rules")
    assert page.input_value("select[name=b]") == "support/broken"


def test_an_older_run_reads_its_judged_text_from_its_data(page, viewer: str, runs: Path):
    import shutil
    import sqlite3

    older = runs / "support" / "older"
    shutil.copytree(runs / "support" / "rules", older)
    with sqlite3.connect(older / "results.sqlite") as db:
        db.execute("UPDATE results SET inputs = NULL")
    page.goto(f"{viewer}item?run=support/older&id=t05")
    assert page.locator("pre[data-field=question]").inner_text() == _question_of("t05")
    assert page.locator("pre[data-field=answer]").inner_text() == "Sorry about that."
