"""The judged text of a run's items: what the pages show before the prompt.

A run records each item's inputs (the question, answer, context... the judge was given) in
its store (:meth:`jurist.runner.ResultStore.item_inputs`), for a baseline run as for an LLM
run. A run written before jurist recorded them (or a jury's derived run, whose items only
point at the runs it read) has none there: :class:`RunInputs` then reads them from the data
file the manifest names, with the task and options that judged it, once the file is checked
to be the one judged (same SHA-256). Every value is redacted as the run store would have it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from jurist.errors import JuristError
from jurist.redaction import redact_value
from jurist.report.inputs import input_text

__all__ = ["RunInputs", "TaskOfRun", "dataset_inputs"]


TaskOfRun = Callable[[], tuple[Any, Any]]
"""The task that judged a run and its options (e.g. ``lambda: run_task(run_dir)``), asked for
only when the run's data must be read."""


def dataset_inputs(run_dir: Path, task_of: TaskOfRun) -> tuple[dict[str, dict[str, Any]], str | None]:
    """Every item's inputs read again from the data file the run's manifest names, with the
    task and options ``task_of`` gives.

    Returns:
        The inputs by item id (redacted), and a note saying why there are none (the data file
        is gone, changed since the run, or cannot be read), else ``None``.
    """
    from jurist.datasets.io import sha256_file
    from jurist.datasets.samples import resolve_input
    from jurist.runner import MANIFEST

    try:
        manifest = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
        dataset = manifest.get("dataset") or {}
        named = dataset.get("path")
        if not named:
            return {}, "the run's manifest names no data file to read the judged text from"
        path = resolve_input(named)
        if not path.is_file():
            return {}, f"the judged text is not recorded in this run, and its data file {named} is not found"
        recorded = dataset.get("sha256")
        if recorded and sha256_file(path) != recorded:
            return {}, f"the judged text is not recorded in this run, and its data file {named} changed since"
        task, options = task_of()
        found: dict[str, dict[str, Any]] = {}
        for item in task.items(task.read(path, options), options):
            found[str(item.id)] = redact_value(dict(item.inputs))
        return found, None
    except (JuristError, OSError, ValueError, KeyError, TypeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return {}, f"the judged text is not recorded in this run and cannot be read from its data ({reason})"


class RunInputs:
    """The judged inputs of one run's items: from its store, else from its data file.

    The data file is read once, on the first item the store does not hold.

    Args:
        run_dir: The run directory.
        task_of: The task that judged it and its options, for reading its data.
    """

    def __init__(self, run_dir: Path, task_of: TaskOfRun) -> None:
        self.run_dir = Path(run_dir)
        self._task_of = task_of
        self.note: str | None = None
        """Why some items have no inputs, once :meth:`of` met one; else ``None``."""
        self._from_data: dict[str, dict[str, Any]] | None = None

    def of(self, item_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The inputs of ``item_ids`` (field -> value), for those whose inputs are known."""
        from jurist.runner import RESULTS_DB, ResultStore

        wanted = list(dict.fromkeys(item_ids))
        found: dict[str, dict[str, Any]] = {}
        database = self.run_dir / RESULTS_DB
        if database.is_file():
            try:
                with ResultStore(database, read_only=True) as store:
                    found = store.item_inputs(wanted)
            except JuristError as exc:
                self.note = str(exc)
        missing = [item_id for item_id in wanted if item_id not in found]
        if missing:
            if self._from_data is None:
                self._from_data, note = dataset_inputs(self.run_dir, self._task_of)
                self.note = self.note or note
            found.update(
                (item_id, self._from_data[item_id]) for item_id in missing if item_id in self._from_data
            )
        return found

    def search(self, text: str) -> set[str]:
        """The ids of the items one of whose inputs contains ``text`` (ASCII letters in any case)."""
        from jurist.runner import RESULTS_DB, ResultStore

        database = self.run_dir / RESULTS_DB
        if database.is_file():
            try:
                with ResultStore(database, read_only=True) as store:
                    found = store.items_with_input(text)
            except JuristError:
                found = None
            if found is not None:
                return found
        if self._from_data is None:
            self._from_data, note = dataset_inputs(self.run_dir, self._task_of)
            self.note = self.note or note
        needle = text.lower()
        return {
            item_id
            for item_id, inputs in self._from_data.items()
            if any(needle in input_text(value).lower() for value in inputs.values())
        }
