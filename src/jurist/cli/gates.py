"""``jurist gate GOLD TRACES``: score RAG traces, print the report, exit 1 when a gate fails.

The command of the ``gates`` task (:mod:`jurist.tasks.gates`); ``run_gate`` does the work.
It loads neither DSPy nor pandas unless ``--judge`` asks for the claim judge.

Exit codes: 0 every gate passes; 1 a gate fails (or no trace matched a gold question);
2 bad input (printed as one line by ``jurist.cli.main``) or a bad command-line option.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from jurist.cli import app
from jurist.datasets.gates import load_thresholds
from jurist.metrics.gates import DEFAULT_REFUSAL_TOKEN, GateThresholds
from jurist.tasks.gates.gate import run_gate

if TYPE_CHECKING:
    from jurist.tasks.gates.records import GateReport

__all__ = ["DEFAULT_RUNS", "gate", "judged_report", "run_gate"]

DEFAULT_RUNS = Path(".jurist_cache") / "gate-judge"
"""Where ``jurist gate --judge`` keeps the claim judge's runs when ``--judge-out`` is not given."""


def judged_report(
    thresholds: GateThresholds | None,
    refusal_token: str,
    *,
    gold: str | Path,
    traces: str | Path,
    judge: str | Path,
    judge_out: str | Path | None = None,
) -> GateReport:
    """The report with the claim check: an ordinary run of the ``gates`` task by the claim
    judge (the judging loop, :func:`jurist.jury.loop.run_judgment`) into ``judge_out`` (by
    default ``.jurist_cache/gate-judge/`` named after the inputs' hash and the judge), whose
    scores carry the report. Loads DSPy and pandas, so only when a judge is asked."""
    from dataclasses import asdict

    from jurist.judges.config import load_config
    from jurist.jury.loop import run_judgment
    from jurist.tasks.gates.claims import files_hash
    from jurist.tasks.gates.options import GatesOptions
    from jurist.tasks.gates.task import GatesTask

    task = GatesTask()
    given = asdict(thresholds if thresholds is not None else GateThresholds())
    options = task.options(GatesOptions(gold=Path(gold), refusal_token=refusal_token, **given))
    config = load_config(judge)
    if judge_out is None:
        fingerprint = task.make_judge(config, options).fingerprint()
        judge_out = DEFAULT_RUNS / f"{files_hash(gold, traces)[:12]}-{fingerprint}"
    run = run_judgment(task, traces, judge_out, config, options, progress=False)
    report: GateReport = run.scores.extra["report"]
    return report


@app.command("gate")
def gate(
    gold: Annotated[
        Path, typer.Argument(help="Gold QA set: JSON list or JSONL (qid, q, answerable, gold_ids).")
    ],
    traces: Annotated[Path, typer.Argument(help="Trace file: JSONL (q, answer, optional citations, qid).")],
    thresholds: Annotated[
        Path | None, typer.Option("--thresholds", help="YAML file of gate thresholds.", show_default=False)
    ] = None,
    precision_min: Annotated[
        float | None,
        typer.Option(
            "--precision-min", min=0.0, max=1.0, help="G1: answer precision ≥ (0.80).", show_default=False
        ),
    ] = None,
    under_refusal_max: Annotated[
        float | None,
        typer.Option(
            "--under-refusal-max", min=0.0, max=1.0, help="G2: under-refusal ≤ (0.05).", show_default=False
        ),
    ] = None,
    over_refusal_max: Annotated[
        float | None,
        typer.Option(
            "--over-refusal-max", min=0.0, max=1.0, help="G3: over-refusal ≤ (0.25).", show_default=False
        ),
    ] = None,
    citation_hit_rate_min: Annotated[
        float | None,
        typer.Option(
            "--citation-hit-rate-min",
            min=0.0,
            max=1.0,
            help="G4: citation hit rate ≥ (0.75).",
            show_default=False,
        ),
    ] = None,
    compliance_min: Annotated[
        float | None,
        typer.Option(
            "--compliance-min", min=0.0, max=1.0, help="G5: compliance ≥ (0.98).", show_default=False
        ),
    ] = None,
    fail_on_na: Annotated[
        bool | None,
        typer.Option(
            "--fail-on-na/--skip-na",
            help="Fail a gate whose metric is n/a (default: skip).",
            show_default=False,
        ),
    ] = None,
    refusal_token: Annotated[
        str, typer.Option("--refusal-token", help="Answer text that means 'refused' (case-insensitive).")
    ] = DEFAULT_REFUSAL_TOKEN,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of Markdown.")] = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the report to this file.", show_default=False)
    ] = None,
    judge: Annotated[
        Path | None,
        typer.Option(
            "--judge",
            help="Judge config (YAML): also ask a judge whether each answer states the gold claim.",
            show_default=False,
        ),
    ] = None,
    judge_out: Annotated[
        Path | None,
        typer.Option("--judge-out", help="Run directory of the claim judge (resumable).", show_default=False),
    ] = None,
) -> None:
    """Score RAG traces against a gold QA set with no model; exit 1 when a gate fails.

    Thresholds: defaults, then the --thresholds file, then the options.

    Exit status: 0 all gates pass, 1 a gate fails, 2 bad input.
    """
    # What the task's ``thresholds_of`` does with the same options (an option not given is
    # None here), without building its pydantic model on `jurist gate`'s path.
    given = load_thresholds(
        thresholds,
        precision_min=precision_min,
        under_refusal_max=under_refusal_max,
        over_refusal_max=over_refusal_max,
        citation_hit_rate_min=citation_hit_rate_min,
        compliance_min=compliance_min,
        fail_on_na=fail_on_na,
    )
    code = run_gate(
        gold,
        traces,
        thresholds=given,
        refusal_token=refusal_token,
        as_json=as_json,
        out=out,
        judged=None
        if judge is None
        else partial(judged_report, gold=gold, traces=traces, judge=judge, judge_out=judge_out),
    )
    if code:
        raise typer.Exit(code)
