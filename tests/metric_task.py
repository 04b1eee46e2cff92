"""A Python task that declares one custom metric once (``caps_agreement``), for the tests that
follow the metric from ``jurist judge`` to ``score``, the reports, the leaderboard and MLflow."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel

from jurist import Metric
from jurist.judges.judge import BaselineJudge, Judge
from jurist.metrics.gold_agreement import wilson_interval
from jurist.runner import Item
from jurist.tasks import Task

ROWS = [
    {"id": "a", "text": "HELLO", "caps": True},
    {"id": "b", "text": "hello", "caps": False},
    {"id": "c", "text": "STOP", "caps": False},  # the baseline says capitals: disagrees with gold
    {"id": "d", "text": "quiet", "caps": False},
]
"""Gold ``caps`` per text; the baseline (``text.isupper()``) agrees on 3 of 4."""


class Texts:
    """The rows of a JSONL file of ``{"id", "text", "caps"}``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]

    def describe(self) -> dict[str, Any]:
        return {"path": str(self.path), "sha256": "0" * 64, "items": len(self.rows)}


def caps_agreement(items: pd.DataFrame, gold: Texts) -> tuple[float, float, float] | None:
    """Share of judged texts whose verdict is gold's ``caps``, with its Wilson interval."""
    truth = {str(row["id"]): bool(row["caps"]) for row in gold.rows}
    ok = items[(items["status"] == "ok") & items["id"].isin(list(truth))]
    if ok.empty:
        return None
    hits = sum(
        bool(verdict) == truth[str(item)] for item, verdict in zip(ok["id"], ok["verdict"], strict=True)
    )
    low, high = wilson_interval(hits, len(ok), 0.95)
    return hits / len(ok), low, high


class CapsMetricTask(Task):
    """Is the text in capitals? Its one metric is declared once, below, and nowhere else."""

    name = "test-caps-metric"
    description = "Is the text written in capitals?"
    inputs = {"text": "the text"}
    outputs = {"verdict": "true when every letter is a capital"}
    metrics = [
        Metric(
            "caps_agreement",
            caps_agreement,
            "share of texts judged as gold says",
            higher_is_better=True,
            needs_gold=True,
        )
    ]

    def read(self, path: str | Path, options: BaseModel) -> Texts:
        return Texts(Path(path))

    def items(self, dataset: Texts, options: BaseModel) -> list[Item]:
        return [Item(id=str(row["id"]), inputs={"text": row["text"]}) for row in dataset.rows]

    def baseline(self, options: BaseModel) -> Judge:
        return BaselineJudge(lambda text: {"verdict": text.isupper()}, name="caps", version="1")


def write_texts(path: Path) -> Path:
    """:data:`ROWS` as a JSONL file at ``path``."""
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    return path
