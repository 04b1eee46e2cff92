"""The heritage custodian evaluation's formulas, one module per sub-task.

``ner`` (token and entity P/R/F1, strict and partial), ``classification`` (accuracy,
macro/weighted F1, confusion, hierarchy over ``taxonomy``'s GLAMORCUBESFIXPHDNT types),
``linking`` (accuracy, Hits@K, MRR, NIL F1), ``retrieval`` (NDCG/P/R@K) and ``qa``
(ROUGE, factual accuracy, faithfulness). Pure functions over plain values, like every
module of :mod:`jurist.metrics`; the heritage task applies them to its gold and outputs.
"""
