"""How the heritage LLM programs are optimized: one task per program.

Each program of :mod:`jurist.programs.heritage.program` is compiled on its own (the sub-task's
:meth:`~jurist.tasks.Task.optimization_program`: the part of the heritage judge, with the
output check of its answers), against the gold of a heritage gold file
(:func:`~jurist.datasets.heritage.load_heritage_gold`), and its artifact loads into that
part of the heritage judge (``jurist judge heritage --program``; :data:`PROGRAM_PARTS`):

=========================== ============================ ============================= ===========
task                        program                       one example                   metric
=========================== ============================ ============================= ===========
``heritage-ner``            ``HeritageEntityExtractor``   a text and its gold spans     ``entity_f1``
``heritage-classification`` ``HeritageTypeClassifier``    a text with a gold type       ``type_score``
``heritage-linking``        ``HeritageEntityLinker``      a linked mention, or NIL      ``reciprocal_rank``
``heritage-qa``             ``HeritageQuestionAnswerer``  a question with a gold answer ``rouge_l``
=========================== ============================ ============================= ===========

Scores of one example, from the pure metrics (the answer first goes through the program's
output check, as in ``jurist judge heritage``):

- ``entity_f1``: :func:`~jurist.metrics.heritage.ner.entity_example_f1`, strict:
  ``F1 = 2·TP / (|gold| + |pred|)`` over the spans kept by
  :func:`~jurist.programs.heritage.anchor_entities` (1 when both are empty).
- ``type_score``: :func:`~jurist.metrics.heritage.classification.classification_example_score`:
  1 for the gold primary type, ``category_credit`` (default 0.5) for another type of the
  same category (e.g. L for M, both CULTURAL), else 0.
- ``reciprocal_rank``: :func:`~jurist.metrics.heritage.linking.linking_example_score`:
  gold NIL: 1 if the linker answers NIL, else 0; gold id ``g``: ``1/rank(g)`` among the
  ranked candidates, 0 when absent or when the linker answers NIL.
- ``rouge_l``: :func:`~jurist.metrics.heritage.qa.qa_example_score`, ROUGE-L F of the
  answer against the gold answer: ``F = 2PR/(P+R)``, ``P = LCS/|answer|``, ``R = LCS/|gold|``.

Demos (bootstrap, MIPRO) are traces scoring at least 0.8, 1, 1 and 0.5 respectively
(each sub-task's ``demo_threshold``). The
GEPA feedback names what to fix: missed, spurious, mis-typed and mis-bounded spans
and the spans the anchoring check flagged; gold and predicted type with their names and
categories; the gold KB entry, its rank, whether it was offered at all, NIL mistakes; the
gold answer, ROUGE-L precision and recall, gold words missing, quotes not in the text.

Task options (``jurist optimize TASK ... --labels TOP,TMP``, or ``options={...}`` in Python):
``heritage-ner`` takes ``labels`` (the entity types; an artifact compiled with non-default
labels loads only into a judge run with the same ``--labels``), ``heritage-classification``
takes ``category_credit`` and ``heritage-linking`` takes ``kb`` (a knowledge-base TSV;
default: the bundled subset); only ``labels`` changes the program.

``jurist optimize`` needs disjoint train and dev files: :func:`write_heritage_splits`
writes the stratified splits of :func:`~jurist.datasets.heritage.split_gold` as gold files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jurist.atomic import atomic_write_text
from jurist.datasets.heritage.conll import TagDecoding
from jurist.datasets.heritage.gold import DEFAULT_SPLITS, HeritageGoldEntry, load_heritage_gold, split_gold
from jurist.errors import InputError
from jurist.metrics.heritage.taxonomy import ENTITY_LABELS

__all__ = [
    "PROGRAM_PARTS",
    "Span",
    "gold_entries",
    "listing",
    "none_found",
    "part_options",
    "span_text",
    "write_heritage_splits",
]

Span = tuple[int, int, str]

PROGRAM_PARTS: dict[str, str] = {
    "heritage-ner": "extractor",
    "heritage-classification": "classifier",
    "heritage-linking": "linker",
    "heritage-qa": "answerer",
}
"""The heritage optimization tasks, and the attribute of
:class:`~jurist.programs.heritage.HeritageProgram` each one's artifact loads into."""


def part_options(task: str, labels: Sequence[str] = ENTITY_LABELS) -> dict[str, Any]:
    """The program options of a heritage task's artifact for a judge run with ``labels``: the
    entity types of ``heritage-ner`` when they are not the default ones, else none."""
    if task == "heritage-ner" and tuple(labels) != ENTITY_LABELS:
        return {"labels": list(labels)}
    return {}


def gold_entries(path: str | Path, tags: TagDecoding | None) -> tuple[list[HeritageGoldEntry], Path | None]:
    """The entries of a heritage gold file and its path (token-tag files decoded with ``tags``)."""
    gold = load_heritage_gold(path, tags=tags)
    return gold.entries, gold.path


def none_found(path: Path | None, what: str, field: str) -> InputError:
    """The error of a gold file that holds no example of a sub-task."""
    return InputError(f"no entry carries {what}", path=path, field=field)


def listing(items: Sequence[str], limit: int = 8) -> str:
    """Up to ``limit`` items joined by ``; ``, with how many more were left out."""
    shown = "; ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def span_text(text: str, span: Span) -> str:
    """A span as ``'text' (TYPE) at [start, end)``."""
    start, end, label = span
    return f"{text[start:end]!r} ({label}) at [{start}, {end})"


def write_heritage_splits(
    gold: str | Path,
    out_dir: str | Path,
    *,
    ratios: Mapping[str, float] = DEFAULT_SPLITS,
    stratify: Sequence[str] = ("custodian_type",),
    seed: int = 0,
) -> dict[str, Path]:
    """Write the stratified splits of a heritage gold file as gold files ``{out_dir}/{part}.jsonl``.

    The split is :func:`~jurist.datasets.heritage.split_gold` (70/15/15 by default), so
    ``jurist judge heritage --split dev`` judges the same texts as ``dev.jsonl``.

    Returns:
        ``{part: path}`` (``train``, ``dev``, ``test`` by default).
    """
    entries = load_heritage_gold(gold).entries
    parts = split_gold(entries, ratios=ratios, stratify=stratify, seed=seed)
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, members in parts.items():
        path = folder / f"{name}.jsonl"
        lines = [
            json.dumps(e.model_dump(mode="json", exclude_none=True), ensure_ascii=False) for e in members
        ]
        atomic_write_text(path, "".join(line + "\n" for line in lines))
        written[name] = path
    return written
