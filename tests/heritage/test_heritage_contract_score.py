"""A heritage run is scored by the contract's one ``score``: its parts read the run's
manifest (gold, entity types, tag decoding) for a run directory and its ``results.jsonl``
alike, and ``mentions.csv`` and ``targets.csv`` are its own export tables."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import jurist
from jurist.tasks import Task
from jurist.tasks.heritage import HeritageNerTask, HeritageTask
from jurist.tasks.heritage.rescoring import score_heritage

DATA = Path(__file__).parent.parent / "data" / "heritage"
LABELS = ["GRP.HER.MUS", "GRP.HER.ARC", "GRP.HER.LIB", "GRP.HER.SOC", "TOP", "TMP", "IDENTIFIER"]


def test_no_heritage_task_overrides_score() -> None:
    assert HeritageTask.score is Task.score and HeritageNerTask.score is Task.score


def test_a_run_and_its_results_file_score_alike_from_the_manifest(tmp_path: Path) -> None:
    out = tmp_path / "run"
    options = {"labels": LABELS, "tag_scheme": "IOB2"}
    run = jurist.judge("heritage-ner", DATA / "heritage_ner.conll", out=out, options=options, progress=False)
    targets = [row for row in csv.DictReader((out / "targets.csv").open(encoding="utf-8"))]
    assert [row["key"] for row in targets][:2] == ["ner_strict_f1", "ner_partial_f1"]
    assert float(targets[0]["value"]) == run.summary["ner"]["strict"]["f1"]
    assert (out / "mentions.csv").is_file()  # written, empty: no sub-task linked
    from_file = jurist.score("heritage-ner", out / "results.jsonl").summary
    assert from_file["ner"] == run.summary["ner"] and from_file["targets"] == run.summary["targets"]
    assert from_file["ner"]["tags"] == {"mode": "strict", "scheme": "IOB2"}  # as the run recorded
    assert from_file["run"]["dataset"]["heritage"]["labels"] == LABELS
    written = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert written["task"] == "heritage-ner" and written["gold"] == run.summary["gold"]
    scored = score_heritage(out)  # the Python function is the task's score
    assert scored.summary["ner"] == run.summary["ner"] and list(scored.targets["key"]) == [
        row["key"] for row in targets
    ]
