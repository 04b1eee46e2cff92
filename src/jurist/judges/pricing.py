"""A model's price per token, read from the same offline price table jurist bills calls with.

A judged call is priced by DSPy's estimate (:mod:`jurist.judges.dspy_seam`), which reads
DSPy's bundled copy of LiteLLM's price map; nothing is fetched from the network. This module
reads the prompt and completion rates of a judge's model from that table, so a cost estimate
(``jurist judge --dry-run``) and a cost limit (``--max-cost``) use the prices the run is
billed at. A model the table does not know has no price: its cost is unknown, never 0. On
DSPy's public call path (:func:`jurist.judges.dspy_seam.fast_path` is false) the table is
not read and no model has a price (:func:`unpriced_reason` says so).

A judge config's ``price:`` (:class:`jurist.judges.config.Price`, carried by the LM as
``lm.price``) wins over the table: it prices a model the table lacks (local, vLLM, proxy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["TokenPrice", "token_price", "unpriced_reason"]


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

    The judge config's ``price:`` (``lm.price``), where given, is the price (its provider is
    ``"config"``). Otherwise the model is resolved as DSPy resolves it when it prices an
    answer (lm15's routing of the model string); a model string lm15 cannot route is looked
    up by its prefix and name.
    """
    configured = getattr(lm, "price", None)
    if configured is not None:
        return TokenPrice(
            provider="config",
            model=str(lm.model),
            prompt=configured.input_per_million / 1e6,
            completion=configured.output_per_million / 1e6,
        )
    from jurist.judges import dspy_seam  # DSPy: only to price a model the config does not

    candidates: list[tuple[str, str]] = []
    try:
        route = dspy_seam.route(lm)
    except Exception:
        route = None
    if route is not None:
        candidates.append((str(route.provider), str(route.model)))
    prefix, sep, name = str(lm.model).partition("/")
    candidates.append((prefix, name) if sep else ("openai", prefix))
    for provider, model in candidates:
        info = dspy_seam.price_info(provider, model)
        prompt, completion = _rate(info, "input_cost_per_token"), _rate(info, "output_cost_per_token")
        if prompt is not None and completion is not None:
            return TokenPrice(provider=provider, model=model, prompt=prompt, completion=completion)
    return None


def unpriced_reason(lm: Any) -> str:
    """Why :func:`token_price` has no price for ``lm``, in words (for a message)."""
    from jurist.judges import dspy_seam

    if not dspy_seam.fast_path():
        return (
            f"no price for model {lm.model!r}: the price table is read only on jurist's fast call path, "
            f"which DSPy {dspy_seam.installed_version()} does not take"
        )
    return (
        f"no price for model {lm.model!r} in the price table "
        "(give it in the judge config: price: {input_per_million: ..., output_per_million: ...})"
    )
