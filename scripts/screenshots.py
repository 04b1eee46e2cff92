"""Regenerate the screenshots of the HTML report and of ``jurist view`` in ``docs/img/``.

Everything is made here, offline: the bundled RAGBench sample judged by the offline
baseline (its HTML report), and a small sentiment task judged by two simulated judges on
loopback servers (``jurist.testing.OpenAICompatibleServer``), so that the viewer has two runs
to compare and disagreements to label. The pages are captured in the system Chromium
(headless, through Playwright; nothing is downloaded)::

    pip install ".[view,test]"
    python scripts/screenshots.py [--out docs/img] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

TASK = """\
name: review-sentiment
description: The sentiment of a product review.
instructions: Say the sentiment of the review.
inputs: [text]
output:
  kind: label
  labels: [pos, neg, mixed]
  reasoning: true
gold: gold
"""

REVIEWS = [
    ("Works perfectly, I use it every day.", "pos", "pos", "pos"),
    ("Broke after two days. Returned it.", "neg", "neg", "neg"),
    ("Great sound, but the battery dies by noon.", "mixed", "pos", "mixed"),
    ("Not what the pictures show.", "neg", "neg", "neg"),
    ("Cheap, and it feels cheap.", "neg", "mixed", "neg"),
    ("Exactly as described, fast delivery.", "pos", "pos", "pos"),
    ("The app is fine; the hardware is not.", "mixed", "neg", "neg"),
    ("I would buy it again.", "pos", "pos", "pos"),
    ("Stopped charging within a week.", "neg", "neg", "neg"),
    ("Nice design, awkward buttons.", "mixed", "mixed", "pos"),
    ("Best purchase this year.", "pos", "pos", "pos"),
    ("Arrived late and scratched.", "neg", "neg", "mixed"),
]
"""(review, gold, judge A's answer, judge B's answer)"""

_TEXT = re.compile(r"\[\[ ## text ## \]\]\n(.*?)(?=\n\n\[\[ ## |\n\nRespond with |\Z)", re.S)


def _answering(column: int) -> Any:
    """A judge that answers the verdict in ``column`` of :data:`REVIEWS` for each review."""
    answers = {review[0]: review[column] for review in REVIEWS}

    def respond(body: dict[str, Any]) -> str:
        user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
        found = _TEXT.search(user)
        verdict = answers.get(found.group(1).strip() if found else "", "pos")
        return (
            f"[[ ## reasoning ## ]]\nThe review reads as {verdict}.\n\n"
            f"[[ ## verdict ## ]]\n{verdict}\n\n[[ ## completed ## ]]"
        )

    return respond


def make_runs(work: Path) -> tuple[Path, Path]:
    """The run directories: ``runs/ragbench/baseline`` and two runs of the sentiment task."""
    from jurist.judges.config import JudgeConfig
    from jurist.testing import OpenAICompatibleServer
    from jurist.verbs import judge

    runs = work / "runs"
    judge("ragbench", "sample:ragbench", None, out=runs / "ragbench" / "baseline", progress=False)
    task = work / "task.yaml"
    task.write_text(TASK, encoding="utf-8")
    data = work / "reviews.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": f"r{index}", "text": text, "gold": gold}) + "\n"
            for index, (text, gold, _, _) in enumerate(REVIEWS)
        ),
        encoding="utf-8",
    )
    os.environ.setdefault("SCREENSHOT_JUDGE_KEY", "not-a-real-key")
    for name, column in (("small-judge", 2), ("large-judge", 3)):
        with OpenAICompatibleServer(_answering(column)) as server:
            config = JudgeConfig(
                model=f"openai/{name}",
                api_base=server.base_url,
                api_key_env="SCREENSHOT_JUDGE_KEY",
                cache_dir=work / "cache",
                concurrency=4,
            )
            judge(task, data, config, out=runs / "review-sentiment" / name, progress=False)
    return runs, runs / "ragbench" / "baseline"


def capture(runs: Path, report_run: Path, out: Path, chromium: str) -> list[Path]:
    """Screenshots of the report and of the viewer's pages."""
    from playwright.sync_api import sync_playwright

    from jurist.testing.browser import CHROMIUM_FLAGS
    from jurist.view.server import ViewServer

    out.mkdir(parents=True, exist_ok=True)
    shots: list[Path] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto((report_run / "report.html").as_uri())
        page.locator("#figures").scroll_into_view_if_needed()
        shots.append(out / "report.png")
        page.screenshot(path=shots[-1])
        with ViewServer(runs.relative_to(Path.cwd())) as viewer:
            pages = {
                "viewer-history.png": "",
                "viewer-compare.png": "compare?a=review-sentiment/small-judge&b=review-sentiment/large-judge",
                "viewer-queue.png": "queue?run=review-sentiment/small-judge",
                "viewer-item.png": "item?run=review-sentiment/small-judge&id=r2",
            }
            for name, path in pages.items():
                page.goto(viewer.url + path)
                shots.append(out / name)
                page.screenshot(path=shots[-1])
        browser.close()
    return shots


def main() -> int:
    from jurist.testing.browser import chromium_path

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--chromium", default=chromium_path() or "/usr/bin/chromium")
    args = parser.parse_args()
    out = args.out.resolve()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cwd = Path.cwd()
        os.chdir(work)
        try:
            runs, report_run = make_runs(work)
            shots = capture(runs, report_run, out, args.chromium)
        finally:
            os.chdir(cwd)
    for shot in shots:
        print(shot.relative_to(ROOT) if shot.is_relative_to(ROOT) else shot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
