"""The figures of the ``alpaca-eval`` package itself on the annotations in this folder.

Run with a Python where ``alpaca-eval`` is installed (``python reference.py [OUT]``); it writes
``reference.json`` (or OUT). alpaca_eval's download of ``df_gamed.csv`` is pointed at the
copy in this folder, and no weights are saved. ``tests/pairwise/test_alpaca_eval.py`` checks
jurist's figures against that file, and runs this script again when the environment variable
``JURIST_ALPACA_EVAL_PYTHON`` names such a Python.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

import pandas as pd
from alpaca_eval.metrics import get_winrate, glm_winrate

HERE = Path(__file__).parent
FILES = [
    "av1-annotations.json",
    "results/model-long/weighted_alpaca_eval_gpt4_turbo/annotations.json",
    "results/model-short/weighted_alpaca_eval_gpt4_turbo/annotations.json",
    "results/gpt4_1106_preview/weighted_alpaca_eval_gpt4_turbo/annotations.json",
]


def _local_download(*, filename: str, **_: object) -> str:
    return str(HERE / filename)


def _plain(value: object) -> object:
    return None if value != value else float(value)  # NaN -> null


def main() -> None:
    glm_winrate.hf_hub_download = _local_download
    figures: dict[str, dict[str, object]] = {}
    for name in FILES:
        annotations = pd.read_json(HERE / name)
        entry = {key: _plain(value) for key, value in get_winrate(annotations).items()}
        if "weighted" in name:
            lc = glm_winrate.get_length_controlled_winrate(
                annotations, save_weights_dir=None, is_warn_extreme_changes=False
            )
            entry["length_controlled_winrate"] = _plain(lc["length_controlled_winrate"])
            entry["lc_standard_error"] = _plain(lc["lc_standard_error"])
        entry["avg_length"] = int(annotations["output_2"].str.len().mean())
        figures[name] = entry
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "reference.json"
    versions = {package: version(package) for package in ("alpaca-eval", "scikit-learn", "pandas", "numpy")}
    out.write_text(json.dumps({"versions": versions, "figures": figures}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
