"""RGB's evaluation protocol as published (Chen et al., arXiv 2309.01431): its four test sets,
the noise rates of its tables, the passages per question and the seed.

Plain values with no imports, so ``jurist rgb run --help`` shows them as defaults without
loading the loaders; :mod:`jurist.datasets.rgb.loader` and :mod:`jurist.tasks.rgb` use the same ones.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["INTEGRATION_NOISE_RATES", "NOISE_RATES", "PASSAGE_NUM", "RGB_SEED", "SETS", "SetName"]

SetName = Literal["noise", "rejection", "integration", "counterfactual"]
SETS: tuple[SetName, ...] = ("noise", "rejection", "integration", "counterfactual")
"""RGB's four test sets, in the order the suite runs them."""
NOISE_RATES = (0.0, 0.2, 0.4, 0.6, 0.8)
"""The noise rates of RGB's noise-robustness table."""
INTEGRATION_NOISE_RATES = (0.0, 0.2, 0.4)
"""The noise rates of RGB's information-integration table."""
PASSAGE_NUM = 5
"""Passages per question in RGB's tables."""
RGB_SEED = 2333
"""The seed RGB's evaluation sets before preparing every instance."""
