"""A model's price per token, read from the same offline price table jurist bills calls with.

A judged call is priced by DSPy's estimate (:mod:`jurist.judges.calls`), which reads DSPy's
bundled copy of LiteLLM's price map; nothing is fetched from the network. This module reads
the prompt and completion rates of a judge's model from that table, so a cost estimate
(``jurist judge --dry-run``) and a cost limit (``--max-cost``) use the prices the run is
billed at. A model the table does not know has no price: its cost is unknown, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dspy.clients.model_metadata import model_info

from jurist.judges import calls

__all__ = ["TokenPrice", "token_price"]


@dataclass(frozen=True)
class TokenPrice:
    """Dollars per prompt token and per completion token of one model.

    Attributes:
        provider: The provider the price table lists the model under.
        model: The model name the provider is asked for.
        prompt: Dollars per prompt (input) token.
        completion: Dollars per completion (output) token.
    """

    provider: str
    model: str
    prompt: float
    completion: float

    def cost(self, prompt_tokens: float, completion_tokens: float) -> float:
        """Dollars for ``prompt_tokens`` and ``completion_tokens``."""
        return prompt_tokens * self.prompt + completion_tokens * self.completion


def _rate(info: dict[str, Any], key: str) -> float | None:
    value = info.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def token_price(lm: Any) -> TokenPrice | None:
    """The price per token of ``lm``'s model (a ``dspy.LM``), or ``None`` if the table has none.

    The model is resolved as DSPy resolves it when it prices an answer (lm15's routing of
    the model string); a model string lm15 cannot route is looked up by its prefix and name.
    """
    candidates: list[tuple[str, str]] = []
    try:
        route = calls._route(lm)
    except Exception:
        route = None
    if route is not None:
        candidates.append((str(route.provider), str(route.model)))
    prefix, sep, name = str(lm.model).partition("/")
    candidates.append((prefix, name) if sep else ("openai", prefix))
    for provider, model in candidates:
        info = model_info(provider, model)
        prompt, completion = _rate(info, "input_cost_per_token"), _rate(info, "output_cost_per_token")
        if prompt is not None and completion is not None:
            return TokenPrice(provider=provider, model=model, prompt=prompt, completion=completion)
    return None
