"""The jury tests import their simulated jurors (``jury_simulation``) from this folder."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
