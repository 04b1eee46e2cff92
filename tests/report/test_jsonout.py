"""Strict JSON: every leaf of a nested value is made JSON-ready, whatever its container."""

from __future__ import annotations

import json
import math

import numpy as np

from jurist.report.jsonout import dumps, json_ready


def test_nested_leaves_are_strict_json_in_every_container():
    value = {
        "a": [1.5, math.nan, {"b": (math.inf, np.int64(3), np.float64(0.25), "x", None, True)}],
        2: {"c": [np.bool_(True), -math.inf, [math.nan]]},
        None: "kept",
    }
    assert json_ready(value) == {
        "a": [1.5, None, {"b": [None, 3, 0.25, "x", None, True]}],
        "2": {"c": [True, None, [None]]},
        "None": "kept",
    }
    assert json.loads(dumps(value)) == json_ready(value)
    assert type(json_ready({"n": np.int64(2)})["n"]) is int
