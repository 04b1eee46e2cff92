"""The heritage LLM programs as optimization targets: one task per program.

Each program of :mod:`jurist.programs.heritage` is compiled on its own, against the gold
of a heritage gold file (:func:`~jurist.datasets.heritage.load_heritage_gold`), and its
artifact loads into that part of the heritage judge (``jurist judge heritage --program``):

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

- ``entity_f1``: :func:`~jurist.metrics.heritage_ner.entity_example_f1`, strict:
  ``F1 = 2·TP / (|gold| + |pred|)`` over the spans kept by
  :func:`~jurist.programs.heritage.anchor_entities` (1 when both are empty).
- ``type_score``: :func:`~jurist.metrics.heritage_classification.classification_example_score`:
  1 for the gold primary type, ``category_credit`` (default 0.5) for another type of the
  same category (e.g. L for M, both CULTURAL), else 0.
- ``reciprocal_rank``: :func:`~jurist.metrics.heritage_linking.linking_example_score`:
  gold NIL: 1 if the linker answers NIL, else 0; gold id ``g``: ``1/rank(g)`` among the
  ranked candidates, 0 when absent or when the linker answers NIL.
- ``rouge_l``: :func:`~jurist.metrics.heritage_qa.qa_example_score`, ROUGE-L F of the
  answer against the gold answer: ``F = 2PR/(P+R)``, ``P = LCS/|answer|``, ``R = LCS/|gold|``.

Demos (bootstrap, MIPRO) are traces scoring at least 0.8, 1, 1 and 0.5 respectively. The
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

from jurist.tasks.heritage.adapter_base import HeritageAdapter, write_heritage_splits
from jurist.tasks.heritage.adapters_linking_qa import HeritageLinkingAdapter, HeritageQAAdapter
from jurist.tasks.heritage.adapters_text import HeritageClassificationAdapter, HeritageNerAdapter

__all__ = [
    "HERITAGE_ADAPTERS",
    "HeritageAdapter",
    "HeritageClassificationAdapter",
    "HeritageLinkingAdapter",
    "HeritageNerAdapter",
    "HeritageQAAdapter",
    "write_heritage_splits",
]


HERITAGE_ADAPTERS: dict[str, type[HeritageAdapter]] = {
    adapter.task: adapter
    for adapter in (
        HeritageNerAdapter,
        HeritageClassificationAdapter,
        HeritageLinkingAdapter,
        HeritageQAAdapter,
    )
}
"""The heritage optimization tasks and their adapters (each fills one part of the judge)."""
