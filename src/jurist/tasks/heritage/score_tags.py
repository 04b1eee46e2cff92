"""Scoring of NER predictions written as a token-tag file (a tagger's CoNLL output) against gold.

``jurist score heritage-ner PREDICTIONS.conll --gold GOLD`` (or ``score heritage``) lands
here when the scored path is a token-tag file (:func:`~jurist.datasets.heritage.conll.is_token_tag_file`)
rather than a run directory: nothing was judged by jurist, the tagger's output is read,
decoded like the gold and scored by the same NER metrics as a run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from jurist.datasets.heritage.conll import (
    TagDecoding,
    TaggedSentence,
    decode_tags,
    detect_scheme,
    read_token_tags,
)
from jurist.datasets.heritage.gold import HeritageGoldEntry, load_heritage_gold
from jurist.errors import InputError
from jurist.tasks.heritage.report import render_report
from jurist.tasks.heritage.scorers import NerScorer
from jurist.tasks.heritage.scoring import HeritageScores, target_rows

__all__ = ["score_tagged_predictions"]


def _char_offsets(sentence: TaggedSentence, entry: HeritageGoldEntry, file: Path) -> list[tuple[int, int]]:
    """Each token's character span in the gold text: tokens must follow one another there,
    separated by nothing but whitespace."""
    offsets: list[tuple[int, int]] = []
    position = 0
    text = entry.text
    for token, line in zip(sentence.tokens, sentence.lines, strict=True):
        while position < len(text) and text[position].isspace():
            position += 1
        if not text.startswith(token, position):
            found = text[position : position + len(token)]
            raise InputError(
                f"token {token!r} does not follow in the gold text of entry {entry.id!r} "
                f"(found {found!r} at character {position})",
                path=file,
                line=line,
                field="token",
            )
        offsets.append((position, position + len(token)))
        position += len(token)
    if text[position:].strip():
        raise InputError(
            f"the sentence ends before the gold text of entry {entry.id!r} does "
            f"({text[position:].strip()[:40]!r} left)",
            path=file,
            line=sentence.lines[-1],
            field="token",
        )
    return offsets


def score_tagged_predictions(
    predictions: str | Path,
    gold: str | Path,
    *,
    tags: TagDecoding | None = None,
    labels: Sequence[str] | None = None,
) -> HeritageScores:
    """Score a token-tag predictions file against heritage gold (a token-tag file or JSONL).

    The ``n``-th sentence of the predictions is the ``n``-th gold entry; its tokens must be
    that entry's text, in order, separated only by whitespace. Predicted tags are decoded
    like the gold: same mode; in strict mode the gold's scheme (given or detected from the
    gold, as seqeval detects it from ``y_true``), or for a JSONL gold the scheme given or
    detected from the predictions.

    Args:
        predictions: The token-tag file of predicted tags.
        gold: The gold file.
        tags: The decoding (default: lenient).
        labels: Only these entity types count (default: the types in gold and predictions).

    Raises:
        InputError: The files do not line up (sentence count, tokens), or a predicted tag is
            not allowed by the scheme; the message names the predictions file and line.
    """
    decoding = tags or TagDecoding()
    gold_set = load_heritage_gold(gold, tags=decoding)
    file = Path(predictions)
    sentences = read_token_tags(file)
    if len(sentences) != len(gold_set.entries):
        raise InputError(
            f"{len(sentences)} sentences, but the gold {gold_set.path} has {len(gold_set.entries)} entries",
            path=file,
            field="sentences",
        )
    scheme = gold_set.tags.scheme if gold_set.tags is not None else decoding.scheme
    if decoding.mode == "strict" and scheme is None:
        try:
            scheme = detect_scheme(sentence.tags for sentence in sentences)
        except ValueError as exc:
            raise InputError(str(exc), path=file, field="tag_scheme") from None
    used = TagDecoding(decoding.mode, scheme if decoding.mode == "strict" else None)
    ner = NerScorer(labels, used.describe())
    rows: list[dict[str, Any]] = []
    for sentence, entry in zip(sentences, gold_set.entries, strict=True):
        offsets = _char_offsets(sentence, entry, file)
        try:
            spans = decode_tags(sentence.tags, used)
        except ValueError as exc:
            raise InputError(str(exc), path=file, line=sentence.line, field="tag") from None
        pred = [(offsets[start][0], offsets[end - 1][1], label) for start, end, label in spans]
        row: dict[str, Any] = {"id": entry.id, "status": "ok", "line": sentence.line, "in_gold": True}
        ner.add_spans(entry, pred, row)
        rows.append(row)
    items = pd.DataFrame(rows) if rows else pd.DataFrame(columns=["id", "status"])
    part, headline = ner.summarize(items)
    summary: dict[str, Any] = {
        "task": "heritage",
        "predictions": str(file),
        "items": len(items),
        "ok": len(items),
        "failed": 0,
        "failed_ids": [],
        "failure_kinds": {},
        "missing": 0,
        "not_in_gold": 0,
        "gold": {"path": str(gold_set.path), "sha256": gold_set.sha256, "entries": len(gold_set)},
    }
    if part is not None:
        summary["ner"] = part
    summary["headline"] = headline
    summary["targets"] = target_rows(headline)
    summary["run"] = {"judge": f"token-tag predictions {file.name}", "model": None}
    report = render_report(summary, None)
    return HeritageScores(
        items=items, summary=summary, report=report, targets=pd.DataFrame(summary["targets"])
    )
