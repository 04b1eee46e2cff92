"""The pairwise task's formulas, one module per concern.

``subeval`` (SubEval's figures over judged records in both orders: extraction,
consistency, win rates, length statistics and bias, and agreement of the two-order
verdict with gold), ``choice_readings`` (reading ``Choice: X`` from a judge's text by
SubEval's rule or the strict one) and ``alpaca_eval`` (AlpacaEval's leaderboard figures
from its preferences, its length-controlled win rate included). Pure functions over plain
values, like every module of :mod:`jurist.metrics`; the pairwise task applies them to its
records (:mod:`jurist.tasks.pairwise`). The two-order figures of a YAML task's pairwise
kind are task-neutral and live in :mod:`jurist.metrics.preference`.
"""
