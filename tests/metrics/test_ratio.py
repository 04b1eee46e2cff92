"""The one element-wise ratio the arrays-in metrics share (``jurist.metrics._arrays.ratio``)."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import numpy as np

import jurist.metrics
from jurist.metrics._arrays import ratio


def test_ratio_is_nan_where_nothing_is_counted_and_warns_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = ratio(np.array([1.0, 0.0, 2.0, 3.0]), np.array([4.0, 0.0, 0.0, -1.0]))
    assert got[0] == 0.25
    assert np.isnan(got[1:]).all()


def test_ratio_keeps_leading_axes() -> None:
    got = ratio(np.array([[1.0, 2.0], [3.0, 0.0]]), np.array([[2.0, 4.0], [0.0, 0.0]]))
    np.testing.assert_array_equal(got, [[0.5, 0.5], [np.nan, np.nan]])


def test_no_metrics_module_defines_its_own_array_ratio() -> None:
    folder = Path(jurist.metrics.__file__).parent
    own = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.FunctionDef) or node.name.lstrip("_") != "ratio":
                continue
            returns = ast.unparse(node.returns) if node.returns else ""
            if path.name != "_arrays.py" and "ndarray" in returns:
                own.append(f"{path.name}:{node.lineno}")
    assert own == []
