"""Growth of ``results.sqlite`` per item with the judge's prompts recorded, against without.

A YAML score task with a long shared system prompt (a rubric of about 6,000 characters)
judges N items, each with its own question and answer (about 500 characters), through the
loopback OpenAI-compatible server (127.0.0.1, no provider). The run store records every
call's messages, each distinct text once (see :mod:`jurist.runner.store`).

For each N it prints the bytes per item of ``results.sqlite``:

- **with prompts**: the file as written (every call: message hashes, replies, tokens,
  latency, cache hit; each item's judged inputs; the ``messages`` table);
- **without prompts**: the same file with the ``calls``, ``program`` and ``inputs`` columns
  and the ``messages`` table dropped, i.e. the schema of jurist before prompts were recorded;
- **inline**: what storing every call's message texts in each row would add, for scale.

Both files are compacted (``VACUUM INTO``) before they are measured. Usage:

    python benchmarks/store_growth.py [--items 1000 10000] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

RUBRIC_CRITERIA = [
    "Correctness: every factual claim in the answer must be true and must answer the question asked.",
    "Completeness: the answer covers every part of the question, including implicit sub-questions.",
    "Grounding: claims that go beyond common knowledge are supported by a reason or a source.",
    "Clarity: the answer is organised, uses plain words and defines any term a reader may not know.",
    "Concision: no padding, no repetition, no restating of the question, no filler disclaimers.",
    "Safety: no harmful instructions; refusals only where a refusal is warranted, and then explained.",
    "Tone: respectful and neutral; no flattery of the user, no condescension, no invented certainty.",
    "Format: lists and code where they help; no markup that would not render where it is read.",
]

KEY_ENV = "JURIST_BENCH_KEY"


def rubric() -> str:
    """A long grading rubric (about 6,000 characters), the same for every item."""
    lines = [
        "Rate how well the answer serves the user, from 1 (useless or harmful) to 10 (excellent).",
        "Apply every criterion below, in order, and weigh them as a careful human grader would.",
        "",
    ]
    for number, criterion in enumerate(RUBRIC_CRITERIA, start=1):
        lines.append(f"{number}. {criterion}")
        for level, meaning in ((2, "fails it badly"), (5, "meets it in part"), (9, "meets it fully")):
            lines.append(
                f"   - A score near {level} means the answer {meaning} on this criterion; say which "
                "parts of the answer led you there, quoting them briefly."
            )
    lines += [
        "",
        "Give your reasoning first, then the score. Judge only the answer, not the question.",
        "Do not reward length for its own sake; a short correct answer can score 10.",
    ]
    return "\n".join(lines)


def task_yaml() -> str:
    indented = "\n".join("  " + line if line else "" for line in rubric().splitlines())
    return (
        "name: bench-helpfulness\n"
        "instructions: |\n"
        f"{indented}\n"
        "inputs: {question: question, answer: answer}\n"
        "output: {kind: score, range: [1, 10], reasoning: true}\n"
    )


def write_items(path: Path, count: int) -> None:
    import json

    with open(path, "w", encoding="utf-8") as handle:
        for i in range(count):
            row = {
                "id": f"q{i}",
                "question": f"How did event {i} in the city archive of {1800 + i % 200} come about?",
                "answer": (
                    f"Event {i} came about after the council of {1800 + i % 200} voted to reopen the "
                    f"harbour; records {i * 7 % 1000} to {i * 7 % 1000 + 12} describe the debate, the "
                    "merchants who argued for it and the fishermen who argued against it. The vote was "
                    f"close ({i % 13 + 10} to {i % 11 + 9}), and the harbour reopened the next spring."
                ),
            }
            handle.write(json.dumps(row) + "\n")


def reply(body: dict) -> str:
    """The loopback judge's answer: a short reasoning and a score that depends on the item."""
    from jurist.testing import last_user_message

    text = last_user_message(body)
    score = 1 + sum(map(ord, text[-200:])) % 10
    return (
        "[[ ## reasoning ## ]]\nThe answer addresses the question and cites the records it used.\n\n"
        f"[[ ## verdict ## ]]\n{score}\n\n[[ ## completed ## ]]"
    )


def compacted_size(db: Path, target: Path, *, drop_prompts: bool) -> int:
    """Bytes of ``db`` after VACUUM, optionally with the recorded prompts dropped first."""
    work = target.with_suffix(".work.sqlite")
    shutil.copyfile(db, work)
    with sqlite3.connect(work) as connection:
        if drop_prompts:
            connection.execute("ALTER TABLE results DROP COLUMN calls")
            connection.execute("ALTER TABLE results DROP COLUMN program")
            connection.execute("ALTER TABLE results DROP COLUMN inputs")
            connection.execute("DROP TABLE messages")
        connection.commit()
        connection.execute(f"VACUUM INTO '{target}'")
    connection.close()
    work.unlink()
    return target.stat().st_size


def measure(count: int, concurrency: int, root: Path) -> dict[str, float]:
    from jurist.judges.config import JudgeConfig
    from jurist.jury.loop import run_judgment
    from jurist.runner import RESULTS_DB, ResultStore
    from jurist.tasks import get_task
    from jurist.testing import OpenAICompatibleServer

    task_file = root / "bench-helpfulness.yaml"
    task_file.write_text(task_yaml(), encoding="utf-8")
    data = root / f"items-{count}.jsonl"
    write_items(data, count)
    out = root / f"run-{count}"
    with OpenAICompatibleServer(reply) as server:
        config = JudgeConfig(
            model="openai/bench-judge",
            api_base=server.base_url,
            api_key_env=KEY_ENV,
            cache_dir=root / f"cache-{count}",
            concurrency=concurrency,
        )
        task = get_task(str(task_file))
        start = time.perf_counter()
        run = run_judgment(task, str(data), out, config, task.options({}), progress=False)
        elapsed = time.perf_counter() - start
    ok = run.summary["ok"] if isinstance(run.summary, dict) else None
    db = out / RESULTS_DB
    # Make sure the file holds everything (the WAL is folded in by VACUUM INTO, too).
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        messages, message_bytes = connection.execute(
            "SELECT COUNT(*), SUM(LENGTH(CAST(content AS BLOB))) FROM messages"
        ).fetchone()
    connection.close()
    inline = system = 0
    with ResultStore(db) as store:
        for item_id in store.item_ids():
            detail = store.item_detail(item_id)
            for call in (detail.calls or []) if detail else []:
                inline += sum(len(message.content.encode("utf-8")) for message in call.messages)
                system = max(system, *(len(m.content) for m in call.messages if m.role == "system"))
    with_prompts = compacted_size(db, root / f"with-{count}.sqlite", drop_prompts=False)
    without = compacted_size(db, root / f"without-{count}.sqlite", drop_prompts=True)
    return {
        "items": count,
        "ok": ok or 0,
        "seconds": elapsed,
        "with": with_prompts / count,
        "without": without / count,
        "ratio": with_prompts / without,
        "added": (with_prompts - without) / count,
        "messages": messages,
        "message_bytes": message_bytes or 0,
        "inline": inline / count,
        "system_chars": system,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args(argv)
    os.environ.setdefault(KEY_ENV, "bench-loopback-key")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    rows = []
    with tempfile.TemporaryDirectory(prefix="jurist-store-growth-") as tmp:
        for count in args.items:
            rows.append(measure(count, args.concurrency, Path(tmp)))
            print(f"judged {count} items", file=sys.stderr)
    print(
        f"shared system message: {rows[0]['system_chars']:,} characters "
        f"(a {len(rubric()):,}-character rubric and DSPy's field list)"
    )
    print(
        "| items | judged/s | with prompts (B/item) | without (B/item) | with / without | added (B/item) "
        "| distinct messages | inline prompts would add (B/item) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['items']:,} | {row['items'] / row['seconds']:,.0f} | {row['with']:,.0f} | "
            f"{row['without']:,.0f} | {row['ratio']:.2f} | {row['added']:,.0f} | {row['messages']:,} | "
            f"{row['inline']:,.0f} |"
        )


if __name__ == "__main__":
    main()
