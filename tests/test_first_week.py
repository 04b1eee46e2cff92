"""A data scientist's first week, end to end through the ``jurist`` command, on a messy CSV
of their own: a 1-5 score judge written as a YAML file, judged offline, then by an LLM (a
loopback server whose verdict is a known function of the prompt), scored, two judges
calibrated, the prompt optimized, the artifact judged, the disagreements labelled in the
viewer's queue (a real browser, with the judged text on screen), the labels exported as gold
and the judge calibrated on it. Each step's console output is checked for its headline.

The CSV is messy the way real ones are: a blank gold cell, a gold written ``" 4 "``, accents,
CJK and emoji, one 9 kB answer, columns the task does not use, and a gold column whose name
has a space the first task file misspells.
"""

from __future__ import annotations

import csv
import json
import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from jurist.testing import OpenAICompatibleServer
from support import prompt_sections, run_cli

pytestmark = pytest.mark.slow

WAIT_S = 120  # for the viewer to start; generous for a loaded machine, never a timed assertion

LONG = ("Open Settings > Billing > Invoices, pick the month and download the PDF. " * 130)[:9000]
HEADER = ["ticket", "question", "answer", "human score", "channel", "notes"]
# ticket, question, answer, gold ("human score"), and two columns the task does not use.
ROWS = [
    ["t01", "How do I reset my password?", "Settings > Security: « Réinitialiser ».", "5", "e-mail", "VIP"],
    ["t02", "How do I reset my password?", "Please contact support.", "1", "chat", ""],
    ["t03", "Où est ma facture ?", "Settings > Facturation : le PDF 🧾", "5", "e-mail", "fr"],
    ["t04", "請問如何取消訂閱？", "Please contact support about that.", "1", "phone", "zh"],
    ["t05", "Why was I charged twice?", "One is a hold your bank releases in 3-5 days.", " 4 ", "chat", ""],
    ["t06", "Can I export my data?", "Yes: Settings > Export, as CSV or JSON.", "", "e-mail", "no score yet"],
    ["t07", "Where are my invoices?", LONG, "4", "e-mail", "long"],
    ["t08", "Is there a mobile app?", "Sorry, please contact support.", "2", "chat", "😕"],
    ["t09", "Can I change my plan?", "Pick one in Settings > Plan; it starts next month.", "4", "e-mail", ""],
    ["t10", "Do you ship to Canada?", "Yes, in 5-7 days; we pay the duties. 🇨🇦", "4", "chat", ""],
]
TRAIN, DEV = ROWS[:6], ROWS[6:]
TASK = """\
name: support-score
instructions: Rate how well the answer resolves the customer's question, from 1 to 5.
inputs: [question, answer]
id: ticket
output: {{kind: score, range: [1, 5], reasoning: true}}
gold: {gold}
baseline:
  rules:
    - {{pattern: "(?i)please contact", value: 1}}
  default: 4
"""


def _llm_score(answer: str, *, demos: bool) -> int:
    """The loopback judge: 5 for an answer that names a place in the product, 1 for a brush-off,
    else 3 — or 4 once the prompt carries few-shot demos (an optimized program)."""
    if "Settings" in answer:
        return 5
    if "contact support" in answer:
        return 1
    return 4 if demos else 3


def _reply(body: dict[str, Any]) -> str:
    # DSPy's chat adapter sends each few-shot demo as a user message and an assistant reply.
    demos = any(message.get("role") == "assistant" for message in body.get("messages", []))
    score = _llm_score(prompt_sections(body).get("answer", ""), demos=demos)
    return f"[[ ## reasoning ## ]]\nRead it.\n\n[[ ## verdict ## ]]\n{score}\n\n[[ ## completed ## ]]"


def _rules_score(answer: str) -> int:
    return 1 if "please contact" in answer.lower() else 4


def _gold(rows: list[list[str]], labels: dict[str, int] | None = None) -> dict[str, int]:
    found = {row[0]: int(row[3]) for row in rows if row[3].strip()}
    return {**found, **(labels or {})}


def _write_csv(path: Path, rows: list[list[str]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(HEADER)
        writer.writerows(rows)
    return path


def _figures(gold: dict[str, int], verdicts: dict[str, int]) -> dict[str, str]:
    """The headline figures as printed (three decimals), computed here without jurist."""
    from sklearn.metrics import cohen_kappa_score

    ids = sorted(gold)
    g, v = [gold[i] for i in ids], [verdicts[i] for i in ids]
    qwk = cohen_kappa_score(g, v, weights="quadratic", labels=[1, 2, 3, 4, 5])
    return {
        "QWK": f"{qwk:.3f}",
        "MAE": f"{sum(abs(a - b) for a, b in zip(g, v, strict=True)) / len(ids):.3f}",
        "exact": f"{sum(a == b for a, b in zip(g, v, strict=True)) / len(ids):.3f}",
    }


def _closeness(rows: list[list[str]], *, demos: bool) -> str:
    """``score_closeness`` on ``rows`` (1 - |verdict - gold| / 4, averaged), as printed."""
    gold = _gold(rows)
    verdicts = {row[0]: _llm_score(row[2], demos=demos) for row in rows}
    return f"{sum(1 - abs(verdicts[i] - gold[i]) / 4 for i in gold) / len(gold):.3f}"


INTERVAL = r"\[\d\.\d{3}, \d\.\d{3}\]"


def _headline_line(figures: dict[str, str]) -> str:
    qwk, mae = re.escape(figures["QWK"]), re.escape(figures["MAE"])
    return rf"agreement with gold: QWK {qwk} {INTERVAL} · MAE {mae} {INTERVAL}"


def _jurist(capsys: pytest.CaptureFixture[str], *args: str | Path) -> list[str]:
    """``jurist ARGS`` in-process, which must succeed; the lines it printed on stdout."""
    assert run_cli([str(arg) for arg in args]) == 0
    return capsys.readouterr().out.splitlines()


def _leaderboard(text: str, dataset: str) -> dict[str, list[str]]:
    """The calibration leaderboard's rows of ``dataset`` by judge: the Markdown table's cells."""
    section = text.split("## Leaderboard", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith(f"| {dataset} | ")]
    rows = [line.strip("|").split(" | ") for line in lines]
    return {cells[1].strip(): [cell.strip() for cell in cells] for cells in rows}


def _check_row(cells: list[str], items: int, figures: dict[str, str]) -> None:
    # dataset | judge | model | items | failed | exact agreement | QWK | ...
    assert cells[3] == str(items) and cells[4] == "0 (0.0%)", cells
    assert re.fullmatch(rf"{re.escape(figures['exact'])} {INTERVAL}", cells[5]), cells
    assert re.fullmatch(rf"{re.escape(figures['QWK'])} {INTERVAL}", cells[6]), cells


def _lines(process: subprocess.Popen[str]) -> queue.Queue[str | None]:
    """The process's output lines as they come (``None`` at its end)."""
    found: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            found.put(line.rstrip("\n"))
        found.put(None)

    threading.Thread(target=read, daemon=True).start()
    return found


@pytest.fixture
def loopback() -> Iterator[OpenAICompatibleServer]:
    with OpenAICompatibleServer(_reply) as server:
        yield server


@contextmanager
def _view(runs: Path) -> Iterator[str]:
    """``jurist view RUNS`` in its own process; yields the address it says it serves."""
    command = [sys.executable, "-m", "jurist", "view", str(runs), "--port", "0"]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ)
    )
    try:
        first = _lines(process).get(timeout=WAIT_S)
        address = re.search(r"^jurist view: serving .* at (http://127\.0\.0\.1:\d+/)", first or "")
        assert address is not None, first
        yield address.group(1)
    finally:
        process.terminate()
        try:
            process.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_the_first_week_journey(tmp_path: Path, capsys, page, loopback: OpenAICompatibleServer) -> None:
    data = _write_csv(tmp_path / "answers.csv", ROWS)
    task, runs, config = tmp_path / "task.yaml", tmp_path / "runs", tmp_path / "judge.yaml"
    gold, llm = _gold(ROWS), {row[0]: _llm_score(row[2], demos=False) for row in ROWS}
    rules = {row[0]: _rules_score(row[2]) for row in ROWS}

    # 1. Judge offline: a misspelt gold column is an error listing the columns; no run is left.
    task.write_text(TASK.format(gold="human_score"), encoding="utf-8")
    offline = ["judge", str(task), str(data), "-c", "baseline", "--out", str(runs / "rules"), "--no-progress"]
    assert run_cli(offline) == 2
    error = capsys.readouterr().err
    assert "no row has the gold column 'human_score'" in error
    assert "the data's columns: ticket, question, answer, human score, channel, notes" in error
    assert "--no-gold" in error
    assert not (runs / "rules").exists()
    task.write_text(TASK.format(gold='"human score"'), encoding="utf-8")
    printed = _jurist(capsys, *offline)
    assert printed[0] == "10 items: 10 scored, 0 failed; judged now 10: 0 provider calls, 0 cache hits"
    assert re.fullmatch(_headline_line(_figures(gold, rules)), printed[1]), printed

    # 2. Judge with an LLM (the loopback server) from a judge config file.
    config.write_text(
        f"model: openai/loopback-judge\napi_base: {loopback.base_url}\n"
        f"api_key_env: JURIST_TEST_API_KEY\ncache_dir: {tmp_path / 'cache'}\n"
        "temperature: 0\nconcurrency: 4\nretry_max_wait: 0.2\ntimeout: 30\n",
        encoding="utf-8",
    )
    printed = _jurist(capsys, "judge", task, data, "-c", config, "--out", runs / "llm", "--no-progress")
    assert printed[0] == "10 items: 10 scored, 0 failed; judged now 10: 10 provider calls, 0 cache hits"
    llm_figures = _figures(gold, llm)
    assert re.fullmatch(_headline_line(llm_figures), printed[1]), printed
    results = (runs / "llm" / "results.jsonl").read_text("utf-8").splitlines()
    assert {row["id"]: row["output"]["verdict"] for row in map(json.loads, results)} == llm

    # 3. Score: the compact table, headline first; the blank gold is left out, " 4 " counted.
    lines = _jurist(capsys, "score", task, runs / "llm", "--gold", data)
    assert lines[:2] == ["support-score", "headline:"]
    assert re.fullmatch(rf" +QWK +{re.escape(llm_figures['QWK'])} {INTERVAL}", lines[2]), lines
    assert re.fullmatch(rf" +MAE +{re.escape(llm_figures['MAE'])} {INTERVAL}", lines[3]), lines
    table = "\n".join(lines)
    assert re.search(r"\n  column +human score\n  rows +9\n  scored +9\n", table), table
    assert re.search(rf"\n  exact agreement +{re.escape(llm_figures['exact'])} {INTERVAL}\n", table)

    # 4. Calibrate two judges on the gold: one leaderboard row each.
    printed = _jurist(
        capsys, "calibrate", task, "--gold", data, "-c", "baseline", "-c", config, "--out", tmp_path / "cal"
    )
    board = _leaderboard("\n".join(printed), "answers")
    assert sorted(board) == ["baseline", "judge"]
    _check_row(board["baseline"], 9, _figures(gold, rules))
    _check_row(board["judge"], 9, llm_figures)
    assert (tmp_path / "cal" / "leaderboard.html").is_file()

    # 5. Optimize (bootstrap few-shot) on a train/dev split of the same messy file.
    train, dev = _write_csv(tmp_path / "train.csv", TRAIN), _write_csv(tmp_path / "dev.csv", DEV)
    artifact = tmp_path / "support-judge.json"
    lines = _jurist(capsys, "optimize", task, "--train", train, "--dev", dev, "-c", config, "--out", artifact)
    assert lines[0] == "support-score · bootstrap · openai/loopback-judge"
    before, after = _closeness(DEV, demos=False), _closeness(DEV, demos=True)
    assert float(before) < float(after)
    assert lines[1] == f"  score_closeness on dev:  before {before} (4/4 scored)  after {after} (4/4 scored)"
    # The blank gold of the train split is not an example: 5 of its 6 rows are.
    assert lines[2].startswith("  compiled on 5 train examples"), lines
    assert lines[-1] == f"artifact: {artifact}"

    # 6. Judge with the artifact: the demos change the verdicts, and the headline says so.
    printed = _jurist(
        capsys,
        "judge",
        task,
        data,
        "-c",
        config,
        "--program",
        artifact,
        "--out",
        runs / "optimized",
        "--no-progress",
    )
    assert printed[0].startswith("10 items: 10 scored, 0 failed"), printed
    optimized = {row[0]: _llm_score(row[2], demos=True) for row in ROWS}
    assert re.fullmatch(_headline_line(_figures(gold, optimized)), printed[1]), printed

    # 7. View the runs and label two disagreements in the LLM run's queue, text on screen.
    relabelled = {"t07": 5, "t09": 5}  # a person who reads these answers agrees with the judge
    with _view(runs) as url:
        page.goto(f"{url}queue?run=llm")
        queued = page.locator("#queue tbody tr").evaluate_all("rows => rows.map(r => r.dataset.item)")
        assert sorted(queued) == sorted(i for i in gold if gold[i] != llm[i])
        for item, label in relabelled.items():
            row = page.locator(f"#queue tbody tr[data-item={item}]")
            question, answer = row.locator("pre[data-field=question]"), row.locator("pre[data-field=answer]")
            assert question.is_visible() and answer.is_visible()
            source = next(r for r in ROWS if r[0] == item)
            assert (question.inner_text(), answer.inner_text()) == (source[1], source[2])
            row.locator("input[name=label]").fill(str(label))
            row.locator("button").click()
            row.locator("[data-role=status]").filter(has_text="saved:").wait_for()
        page.reload()
        assert page.locator("#queue tr.labelled").count() == 2
        page.goto(f"{url}item?run=llm&id=t04")  # CJK as written
        assert page.locator("pre[data-field=question]").inner_text() == "請問如何取消訂閱？"

    # 8. Export the labels as gold: the data's rows with gold, the labels in the gold column.
    exported = tmp_path / "more-gold.jsonl"
    printed = _jurist(capsys, "labels", "export", runs / "llm", "--out", exported)
    assert printed == [f"wrote 9 gold rows (2 labelled items) to {exported}"]
    by_id = {row["ticket"]: row for row in map(json.loads, exported.read_text("utf-8").splitlines())}
    assert "t06" not in by_id  # no gold and no label: not a gold row
    assert by_id["t07"]["human score"] == 5 and by_id["t07"]["answer"] == LONG
    assert by_id["t03"]["answer"] == ROWS[2][2] and by_id["t05"]["human score"] == 4

    # 9. Calibrate on the exported gold: the relabelled items now agree with the LLM judge.
    new_gold = _gold(ROWS, relabelled)
    printed = _jurist(
        capsys,
        "calibrate",
        task,
        "--gold",
        exported,
        "-c",
        "baseline",
        "-c",
        config,
        "--out",
        tmp_path / "cal-2",
    )
    board = _leaderboard("\n".join(printed), "more-gold")
    _check_row(board["judge"], 9, _figures(new_gold, llm))
    _check_row(board["baseline"], 9, _figures(new_gold, rules))
    assert float(_figures(new_gold, llm)["exact"]) > float(llm_figures["exact"])
