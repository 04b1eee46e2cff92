"""``jurist show RUN ITEM``: one judged item in full, in the terminal or as JSON.

It prints what the run store holds about the item (:meth:`jurist.runner.ResultStore.item_detail`):
the judged text (the item's inputs: question, answer, context...; for a run written before
jurist recorded them, read again from the run's data file when it is unchanged), status, the
parsed verdict, the rationale, every LM call with the messages it sent (role by
role, in full), its replies, cache hit or not, tokens, cost and latency, the attempts, the
error of a failed item, and the judge, model and compiled program of the run (from its
``manifest.json``). Nothing is called and nothing in the run directory is changed.

Rich, the run store and the record types are imported when the command runs, not when the
command line is built.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from jurist.cli import app
from jurist.errors import InputError
from jurist.redaction import redact, redact_value
from jurist.report.inputs import input_text
from jurist.report.jsonout import dumps

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from jurist.schemas import ItemDetail, LMCall

KNOWN_IDS_SHOWN = 5
"""How many recorded ids an unknown-id error lists."""

NOT_RECORDED = "no messages recorded: the item was recorded without its LM calls"
BASELINE_NO_PROMPT = "baseline judge: no prompt (an offline rule-based judge calls no model)"
NO_CALLS = "no LM calls recorded for this item"


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """The run's manifest, or ``{}`` when it is missing or unreadable (the item still shows)."""
    from jurist.runner import MANIFEST

    try:
        manifest = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def load_item(run: Path, item_id: str) -> tuple[ItemDetail, dict[str, Any]]:
    """The recorded item ``item_id`` of the run directory ``run``, and the run's manifest.

    Raises:
        InputError: ``run`` is not a run directory, or it holds no item with this id (the
            message lists a few ids it does hold).
        RunDirectoryError: Its ``results.sqlite`` is damaged.
    """
    from jurist.runner import RESULTS_DB, ResultStore

    if not run.is_dir() or not (run / RESULTS_DB).is_file():
        raise InputError(f"not a run directory (no {RESULTS_DB})", path=run)
    with ResultStore(run / RESULTS_DB) as store:
        detail = store.item_detail(item_id)
        if detail is None:
            known = store.item_ids(limit=KNOWN_IDS_SHOWN + 1)
            listed = ", ".join(repr(found) for found in known[:KNOWN_IDS_SHOWN])
            more = ", ..." if len(known) > KNOWN_IDS_SHOWN else ""
            hint = f"; recorded ids include {listed}{more}" if known else "; the run holds no items yet"
            raise InputError(f"no item with id {item_id!r}{hint}", path=run)
    if detail.inputs is None:
        from jurist.tasks import run_task
        from jurist.tasks.run_inputs import RunInputs

        found = RunInputs(run, lambda: run_task(run)).of([detail.id]).get(detail.id)
        if found is not None:
            detail = detail.model_copy(update={"inputs": found})
    return detail, read_manifest(run)


def run_info(manifest: dict[str, Any]) -> dict[str, Any]:
    """What judged the run: task, judge, model, fingerprint, compiled program, versions."""
    found_config, found_versions = manifest.get("config"), manifest.get("versions")
    config: dict[str, Any] = found_config if isinstance(found_config, dict) else {}
    versions: dict[str, Any] = found_versions if isinstance(found_versions, dict) else {}
    return {
        "task": manifest.get("task"),
        "judge": manifest.get("judge"),
        "model": config.get("model"),
        "judge_fingerprint": manifest.get("judge_fingerprint"),
        "program": manifest.get("program") or config.get("program"),
        "created_at": manifest.get("created_at"),
        "versions": versions,
    }


def calls_note(detail: ItemDetail, info: dict[str, Any]) -> str | None:
    """Why an item has no messages to show, or ``None`` when it has some."""
    from jurist.judges.config import BASELINE

    if detail.calls is None:
        return NOT_RECORDED
    if detail.calls:
        return None
    return BASELINE_NO_PROMPT if info.get("model") in (BASELINE, None) else NO_CALLS


def as_json(detail: ItemDetail, manifest: dict[str, Any]) -> str:
    """The item and its run as strict JSON (``null`` for unknowns, never ``NaN``)."""
    info = run_info(manifest)
    record = {**detail.model_dump(mode="json"), "run": info, "note": calls_note(detail, info)}
    return redact(dumps(redact_value(record), ensure_ascii=False))


def _key_values(rows: list[tuple[str, Any]]) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for name, value in rows:
        if value not in (None, "", {}):
            table.add_row(name, Text(str(value)))
    return table


def _cost(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.6f}"


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f} s"


def _call_facts(call: LMCall) -> str:
    source = "failed" if call.error else "cache hit" if call.cache_hit else "provider"
    parts = [source]
    if not call.cache_hit and call.error is None:
        parts.append(f"{call.prompt_tokens} prompt + {call.completion_tokens} completion tokens")
        parts.append(f"cost {_cost(call.cost)}")
    parts.append(f"latency {_seconds(call.latency_s)}")
    return " · ".join(parts)


def render(console: Console, detail: ItemDetail, manifest: dict[str, Any]) -> None:
    """Print the item in full with Rich: header, judged text, verdict, rationale, usage, calls,
    raw replies."""
    from rich.console import Group, RenderableType
    from rich.json import JSON
    from rich.panel import Panel
    from rich.rule import Rule
    from rich.text import Text

    info = run_info(manifest)
    program = info["program"]
    program_text = (
        f"{program.get('path')} (sha256 {program.get('sha256')})" if isinstance(program, dict) else program
    )
    versions = info["versions"]
    header = _key_values(
        [
            ("item", detail.id),
            ("status", detail.status),
            ("task", info["task"]),
            ("judge", info["judge"]),
            ("model", info["model"]),
            ("fingerprint", detail.judge_fingerprint or info["judge_fingerprint"]),
            ("program", program_text or "none (the task's own program)"),
            ("jurist", versions.get("jurist")),
            ("dspy", versions.get("dspy")),
        ]
    )
    style = "green" if detail.status == "ok" else "red"
    console.print(Panel(header, title=f"[bold]{detail.id}[/] · {detail.status}", border_style=style))

    console.print(Rule("judged text"))
    if detail.inputs is None:
        console.print(Text("not recorded in this run, and its data file is gone or changed since the run"))
    for name, value in (detail.inputs or {}).items():
        console.print(Rule(str(name), style="green", align="left"))
        console.print(Text(input_text(value)), soft_wrap=True)

    if detail.status == "failed":
        console.print(Rule("error", style="red"))
        console.print(Text(f"{detail.error_type or 'error'}: {detail.error or ''}"), soft_wrap=True)
    console.print(Rule("verdict"))
    if detail.output is None:
        console.print(Text("no verdict (the item failed)"))
    else:
        console.print(JSON(dumps(detail.output, ensure_ascii=False)), soft_wrap=True)
    if detail.rationale:
        console.print(Rule("rationale"))
        console.print(Text(detail.rationale), soft_wrap=True)

    usage = detail.usage
    console.print(Rule("usage"))
    console.print(
        _key_values(
            [
                ("attempts", detail.attempts),
                ("latency", _seconds(detail.latency_s)),
                ("provider calls", usage.calls),
                ("cache hits", usage.cache_hits),
                ("prompt tokens", usage.prompt_tokens),
                ("completion tokens", usage.completion_tokens),
                ("cost", _cost(usage.cost)),
            ]
        )
    )

    console.print(Rule("calls"))
    note = calls_note(detail, info)
    if note:
        console.print(Text(note))
    for number, call in enumerate(detail.calls or [], start=1):
        blocks: list[RenderableType] = []
        for message in call.messages:
            blocks.append(Rule(message.role or "message", style="cyan", align="left"))
            blocks.append(Text(message.content))
        if not call.messages:
            blocks.append(Text("(no messages recorded for this call)"))
        for reply in call.replies:
            blocks.append(Rule("reply", style="magenta", align="left"))
            blocks.append(Text(reply))
        if call.error:
            blocks.append(Rule("error", style="red", align="left"))
            blocks.append(Text(call.error))
        console.print(Rule(f"call {number} · attempt {call.attempt}", style="bold"))
        console.print(Text(_call_facts(call), style="bold"), soft_wrap=True)
        console.print(Group(*blocks), soft_wrap=True)

    console.print(Rule(f"raw replies ({len(detail.raw)})"))
    if not detail.raw:
        console.print(Text("none"))
    for index, text in enumerate(detail.raw, start=1):
        console.print(Rule(f"raw {index}", style="magenta", align="left"))
        console.print(Text(text), soft_wrap=True)


@app.command("show")
def show_command(
    run: Annotated[Path, typer.Argument(help="A run directory (from `jurist judge --out`).")],
    item: Annotated[str, typer.Argument(help="The id of the item to show.")],
    json_output: Annotated[bool, typer.Option("--json", help="Print the item as JSON.")] = False,
) -> None:
    """Print one judged item in full: judged text, verdict, rationale, every message sent, raw replies, usage.

    Reads the run directory only: nothing is called and nothing is changed.
    """
    detail, manifest = load_item(run, item)
    if json_output:
        typer.echo(as_json(detail, manifest))
        return
    from rich.console import Console

    render(Console(highlight=False), detail, manifest)
