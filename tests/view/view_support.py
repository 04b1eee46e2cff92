"""Run directories for the viewer's tests, written through jurist's own store and files."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from jurist.report.review import LabelSpec, Review
from jurist.runner import ResultStore
from jurist.schemas import ItemResult, LMCall, Message, Usage

LABEL_REVIEW = Review(
    verdict="verdict",
    gold="gold",
    agrees="correct",
    confidence="confidence",
    label=LabelSpec(kind="choice", choices=("pos", "neg", "mixed")),
    columns=("reasoning",),
)


def write_table(path: Path, rows: Sequence[dict[str, Any]], *, row_group_size: int | None = None) -> Path:
    """``rows`` as a Parquet file with row groups of ``row_group_size`` rows."""
    pq.write_table(pa.Table.from_pylist(list(rows)), path, row_group_size=row_group_size)
    return path


def write_run(
    run_dir: Path,
    rows: Sequence[dict[str, Any]],
    *,
    review: Review | None = LABEL_REVIEW,
    judge: str = "judge-a",
    model: str = "openai/a",
    created: str = "2026-01-05T10:00:00+00:00",
    status: str = "finished",
    summary: dict[str, Any] | None = None,
    task: str = "toy",
    row_group_size: int | None = None,
    calls: bool = True,
) -> Path:
    """A run directory as ``jurist judge`` leaves it: manifest, store, items table, summary, review."""
    run_dir.mkdir(parents=True, exist_ok=True)
    manifest = {
        "task": task,
        "judge": judge,
        "judge_fingerprint": f"fp-{judge}",
        "task_source": "built-in",
        "task_options": {},
        "program": None,
        "dataset": {"path": str(run_dir / "data.jsonl"), "sha256": "0" * 64, "items": len(rows)},
        "config": {"model": model},
        "created_at": created,
        "status": status,
    }
    (run_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with ResultStore(run_dir / "results.sqlite", judge_fingerprint=f"fp-{judge}") as store:
        for row in rows:
            ok = row.get("status", "ok") == "ok"
            reply = f"[[ ## verdict ## ]]\n{row.get('verdict')}"
            store.put(
                ItemResult(
                    id=str(row["id"]),
                    status="ok" if ok else "failed",
                    output={"verdict": row.get("verdict"), "reasoning": row.get("reasoning")} if ok else None,
                    error=None if ok else "no verdict",
                    error_type=None if ok else "unparseable_output",
                    raw=[reply],
                    usage=Usage(calls=1, prompt_tokens=12, completion_tokens=3, cost=0.001),
                    calls=[
                        LMCall(
                            messages=[
                                Message(role="system", content="Judge the text."),
                                Message(role="user", content=str(row.get("text", row["id"]))),
                            ],
                            replies=[reply],
                            prompt_tokens=12,
                            completion_tokens=3,
                            cost=0.001,
                            latency_s=0.01,
                        )
                    ]
                    if calls
                    else [],
                )
            )
    write_table(run_dir / "items.parquet", rows, row_group_size=row_group_size)
    ok_count = sum(1 for row in rows if row.get("status", "ok") == "ok")
    found = summary if summary is not None else {}
    (run_dir / "summary.json").write_text(
        json.dumps({"items": len(rows), "ok": ok_count, "failed": len(rows) - ok_count, **found}),
        encoding="utf-8",
    )
    if review is not None:
        (run_dir / "review.json").write_text(json.dumps(review.to_json()), encoding="utf-8")
    return run_dir


def label_rows(verdicts: Sequence[str], golds: Sequence[str], *, prefix: str = "r") -> list[dict[str, Any]]:
    """Items of a label task: verdict, gold, agreement, a confidence, a rationale."""
    return [
        {
            "id": f"{prefix}{index}",
            "status": "ok",
            "verdict": verdict,
            "gold": gold,
            "correct": verdict == gold,
            "confidence": round(0.5 + 0.04 * index, 2),
            "reasoning": f"because {index}",
            "cost": 0.001 * (index + 1),
            "latency_s": 0.1,
        }
        for index, (verdict, gold) in enumerate(zip(verdicts, golds, strict=True))
    ]
