"""A run's total usage is the sum of its rows' usages, however many of them are alike."""

from __future__ import annotations

from jurist.runner import ResultStore
from jurist.runner.store import _KNOWN_USAGES
from jurist.schemas import ItemResult, Usage


def test_the_total_is_the_sum_of_every_row_in_order(tmp_path):
    usages = [Usage(cache_hits=1)] * 50 + [
        Usage(calls=1, prompt_tokens=n, completion_tokens=2, cost=0.1 * n if n % 3 else None)
        for n in range(_KNOWN_USAGES + 20)  # more distinct usages than are kept parsed
    ]
    results = [ItemResult(id=f"item-{n}", status="ok", usage=usage) for n, usage in enumerate(usages)]
    expected = Usage()
    for usage in usages:
        expected = expected.add(usage)
    with ResultStore(tmp_path / "results.sqlite") as store:
        store.put_many(results)
        assert store.total_usage() == expected
