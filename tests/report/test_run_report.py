"""The HTML report of a run: what ``jurist.judge`` writes, what ``jurist report`` writes, and
what the page holds (header, summary with intervals, figures, items, prompts, Markdown)."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import pandas as pd
from markupsafe import escape
from report_runs import BOOL_ROWS, HOSTILE, LoopbackRun

import jurist
from jurist.errors import ExitCode
from jurist.redaction import shape_token
from jurist.report.figures import Figure, figures_from_json
from jurist.report.html import render_run_html, script_json, summary_rows
from jurist.report.review import Review
from jurist.tasks import NoOptions, Scores, Task, run_task
from jurist.tasks._contract import write_views
from support import run_cli


def data_block(page: str) -> dict:
    """The JSON the page embeds for its items (prompts, replies)."""
    found = re.search(r'<script type="application/json" id="jurist-data">(.*?)</script>', page, re.S)
    assert found is not None
    return json.loads(found.group(1))


def item_rows(page: str) -> list[str]:
    return re.findall(r'<tr class="item[^"]*"[^>]* data-id="([^"]*)"', page)


def test_judge_writes_figures_review_and_the_html_report(ragbench_run: Path):
    for name in ("report.html", "figures.json", "review.json", "report.md"):
        assert (ragbench_run / name).is_file(), name
    task, options = run_task(ragbench_run)
    figures = figures_from_json(json.loads((ragbench_run / "figures.json").read_text()))
    assert figures, "the task has figures for its sample"
    assert Review.from_json(json.loads((ragbench_run / "review.json").read_text())) == task.review(options)
    page = (ragbench_run / "report.html").read_text(encoding="utf-8")
    assert page.count("<svg ") == len(figures)
    for figure in figures:
        assert html.escape(figure.title, quote=False) in page
        if figure.caption:
            assert f"<figcaption>{escape(figure.caption)}</figcaption>" in page
    assert len(item_rows(page)) == 60
    assert "This page holds 60 of 60 items" in page


def test_the_header_and_summary_say_what_judged_what(ragbench_run: Path):
    page = (ragbench_run / "report.html").read_text(encoding="utf-8")
    summary = json.loads((ragbench_run / "summary.json").read_text())
    manifest = json.loads((ragbench_run / "manifest.json").read_text())
    assert "<dt>task</dt><dd>ragbench</dd>" in page
    assert "<dt>judge</dt><dd>baseline</dd>" in page
    assert f"<dt>fingerprint</dt><dd>{manifest['judge_fingerprint']}</dd>" in page
    assert "<dt>items</dt><dd>60: 60 scored, 0 failed</dd>" in page
    mean = summary["trace"]["context_relevance"]["mean"]
    assert f'<td>trace.context_relevance.mean</td><td class="num">{mean:.3f}</td>' in page
    report_md = (ragbench_run / "report.md").read_text(encoding="utf-8")
    assert html.escape(report_md.strip().splitlines()[0], quote=False) in page
    assert "<details>\n<summary>report.md" in page


def test_a_yaml_task_report_shows_intervals_and_the_review_columns(mt_bench_run: Path):
    page = (mt_bench_run / "report.html").read_text(encoding="utf-8")
    agreement = json.loads((mt_bench_run / "summary.json").read_text())["agreement"]
    qwk, low, high = agreement["qwk"], agreement["qwk_low"], agreement["qwk_high"]
    assert f'<td>agreement.qwk</td><td class="num">{qwk:.3f} [{low:.3f}, {high:.3f}]</td>' in page
    assert "<td>agreement.qwk_low</td>" not in page  # shown as the interval, not apart
    review = json.loads((mt_bench_run / "review.json").read_text())
    headers = re.findall(r'<th scope="col" data-key="([^"]+)"', page)
    expected = ["id", "status", review["verdict"], review["gold"], review["agrees"], *review["columns"]]
    expected.insert(1, "__judged_text__")  # the judged inputs come right after the id
    assert headers[: len(expected)] == expected
    assert 'id="filter-agreement"' in page
    items = pd.read_parquet(mt_bench_run / "items.parquet")
    disagreeing = set(items.loc[~items[review["agrees"]].astype(bool), "id"])
    marked = set(re.findall(r'data-id="([^"]+)" data-status="ok" data-agrees="false"', page))
    assert marked == disagreeing and disagreeing


def test_summary_rows_join_intervals_of_both_shapes():
    summary = {
        "items": 3,
        "usage": {"calls": 2},
        "agreement": {"kappa": 0.5, "kappa_low": 0.25, "kappa_high": 0.75, "n": 12, "note": "text"},
        "rate": {"value": 0.125, "low": 0.0625, "high": 0.25, "n": 8},
        "auroc": None,
        "labels": [1, 2],
    }
    assert summary_rows(summary) == [
        ("agreement.kappa", "0.500 [0.250, 0.750]"),
        ("agreement.n", "12"),
        ("rate.value", "0.125 [0.062, 0.250]"),
        ("rate.n", "8"),
        ("auroc", "n/a"),
    ]
    assert summary_rows([{"file": "a.json", "accuracy": 1.0}]) == [("a.json: accuracy", "1")]


def test_script_json_cannot_close_its_script_element():
    text = script_json({"text": HOSTILE + " <!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(str(text)) == {"text": HOSTILE + " <!-- & \u2028"}


def test_the_prompts_and_replies_are_embedded_once_per_text(loopback_run: LoopbackRun):
    page = (loopback_run.run_dir / "report.html").read_text(encoding="utf-8")
    data = data_block(page)
    system = loopback_run.bodies[0]["messages"][0]["content"]
    assert list(data["messages"].values()).count(system) == 1  # shared by every item, kept once
    ok_items = [row_id for row_id, *_ in BOOL_ROWS if row_id != "r6"]
    for item_id in ok_items:
        (call,) = data["details"][item_id]["calls"]
        roles = [role for role, _ in call["messages"]]
        assert roles == ["system", "user"]
        assert data["messages"][call["messages"][1][1]] == loopback_run.user_message(item_id)
        assert data["details"][item_id]["raw"] == [loopback_run.replies[item_id]]
    failed = data["details"]["r6"]
    assert failed["status"] == "failed" and failed["error"]
    assert failed["raw"] and all("maybe" in reply for reply in failed["raw"])


def test_judged_script_text_stays_text(loopback_run: LoopbackRun):
    page = (loopback_run.run_dir / "report.html").read_text(encoding="utf-8")
    # Two script elements (the data and the page's own code), and no judged text closes one.
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert "alert(1)" in page and HOSTILE not in page
    assert HOSTILE in json.dumps(data_block(page), ensure_ascii=False)


def test_max_items_embeds_the_first_items_and_says_so(ragbench_run: Path):
    page = render_run_html(ragbench_run, max_items=5)
    items = pd.read_parquet(ragbench_run / "items.parquet")
    assert item_rows(page) == [str(i) for i in items["id"][:5]]
    assert "This page holds 5 of 60 items (the first 5)" in page
    assert f"<code>jurist view {ragbench_run}</code>" in page
    assert set(data_block(page)["details"]) == set(item_rows(page))


def test_score_with_write_writes_the_views_again(mt_bench_run: Path, tmp_path: Path):
    run = tmp_path / "run"
    shutil.copytree(mt_bench_run, run)
    for name in ("report.html", "figures.json", "review.json"):
        (run / name).unlink()
    task, options = run_task(run)
    jurist.score(task, run, options=options, write=True)
    assert (
        (run / "report.html").is_file()
        and (run / "figures.json").is_file()
        and (run / "review.json").is_file()
    )


def test_cli_report_writes_a_file_and_computes_views_of_an_older_run(mt_bench_run, tmp_path, capsys):
    run = tmp_path / "old-run"
    shutil.copytree(mt_bench_run, run)
    (run / "figures.json").unlink()
    (run / "review.json").unlink()
    out = tmp_path / "pages" / "mt.html"
    assert run_cli(["report", str(run), "--html", str(out), "--max-items", "3"]) == 0
    assert capsys.readouterr().out.strip() == f"html report: {out}"
    page = out.read_text(encoding="utf-8")
    expected = json.loads((mt_bench_run / "figures.json").read_text())
    assert page.count("<svg ") == len(expected) and len(item_rows(page)) == 3
    assert not (run / "figures.json").exists()  # the run directory is only read

    assert run_cli(["report", str(run)]) == 0
    assert (run / "report.html").is_file()


def test_cli_report_errors_are_one_line_exit_2(tmp_path, capsys):
    assert run_cli(["report", str(tmp_path)]) == ExitCode.BAD_INPUT
    error = capsys.readouterr().err.strip()
    assert error.startswith("error: ") and "not a run directory" in error and "\n" not in error


def test_a_run_without_files_still_renders(tmp_path: Path):
    run = tmp_path / "bare"
    run.mkdir()
    page = render_run_html(run, figures=[Figure("roc", "Nothing yet", {})])
    assert "no per-item table" in page and "no data" in page and "Nothing yet" in page


KEY = "sk" + "-proj-Zx81LmQ2vR7tYp4sW9nB3cK6"
"""A key-shaped string (an OpenAI project key's form)."""


class KeyInFigures(Task):
    """A task whose figure and review texts carry a key, as a careless task could."""

    name = "key-in-figures"

    def figures(self, scores: Scores, options: object) -> list[Figure]:
        return [Figure("bars", f"Made with {KEY}", {"bars": [{"label": KEY, "value": 1.0}]}, caption=KEY)]


def test_views_are_redacted(mt_bench_run: Path, tmp_path: Path):
    run = tmp_path / "run"
    shutil.copytree(mt_bench_run, run)
    items = pd.read_parquet(run / "items.parquet")
    path = write_views(KeyInFigures(), run, Scores(items=items, summary={}), NoOptions())
    assert path == run / "report.html"
    for name in ("report.html", "figures.json", "review.json"):
        text = (run / name).read_text(encoding="utf-8")
        assert KEY not in text and KEY[:12] not in text, name
    assert shape_token(KEY) in (run / "figures.json").read_text(encoding="utf-8")
    assert shape_token(KEY) in path.read_text(encoding="utf-8")
