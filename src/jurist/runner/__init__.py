"""The batch runner: concurrent, durable, resumable judging of a dataset."""

from jurist.runner.blocking import call_blocking
from jurist.runner.engine import MANIFEST, Item, RunSummary, run_items, versions
from jurist.runner.store import RESULTS_DB, ResultStore, iter_run_results

__all__ = [
    "MANIFEST",
    "RESULTS_DB",
    "Item",
    "call_blocking",
    "ResultStore",
    "RunSummary",
    "run_items",
    "versions",
    "iter_run_results",
]
