"""The batch runner: concurrent, durable, resumable judging of a dataset.

:func:`run_items` judges a stream of items into a run directory, in this process, in several
local processes or on Ray (:func:`scaling` sets which); :func:`run_lock` is the run
directory's one-writer lock, for anything else that writes into it (exports).
"""

from jurist.runner.blocking import call_blocking
from jurist.runner.engine import Item, RunSummary, run_items, versions
from jurist.runner.lock import LOCK_FILE, run_lock
from jurist.runner.scale import JudgeRecipe, Scale, current_scale, scaling
from jurist.runner.store import MANIFEST, RESULTS_DB, ResultStore, iter_run_results

__all__ = [
    "LOCK_FILE",
    "MANIFEST",
    "RESULTS_DB",
    "Item",
    "JudgeRecipe",
    "Scale",
    "call_blocking",
    "current_scale",
    "ResultStore",
    "RunSummary",
    "run_items",
    "run_lock",
    "scaling",
    "versions",
    "iter_run_results",
]
