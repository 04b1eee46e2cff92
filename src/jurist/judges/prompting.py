"""The messages a judge program would send, captured without calling any model.

``jurist prompt`` shows a user exactly what the model sees. The program runs as in a real
judgment, with the config's adapter, but its LM is a recorder: the first call's messages
are kept and the run stops there, before anything leaves the machine.
"""

from __future__ import annotations

from typing import Any

import dspy

from jurist.judges.adapters import make_adapter
from jurist.judges.config import JudgeConfig


class _Captured(BaseException):
    """Stops the program at its first LM call (a BaseException, so DSPy's fallbacks let it through)."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        super().__init__("captured")
        self.messages = messages


class _RecordingLM(dspy.BaseLM):
    def __init__(self, model: str) -> None:
        super().__init__(model=model, model_type="chat", cache=False)

    def __call__(
        self, prompt: str | None = None, *, messages: list[dict[str, Any]] | None = None, **_: Any
    ) -> Any:
        raise _Captured(list(messages or [{"role": "user", "content": prompt or ""}]))

    async def acall(
        self, prompt: str | None = None, *, messages: list[dict[str, Any]] | None = None, **kwargs: Any
    ) -> Any:
        return self(prompt, messages=messages, **kwargs)


def capture_messages(
    program: dspy.Module, config: JudgeConfig, inputs: dict[str, Any]
) -> list[dict[str, Any]]:
    """The chat messages ``program`` would send first for ``inputs`` under ``config``'s adapter.

    Raises:
        RuntimeError: The program finished without calling an LM (nothing to show).
    """
    with dspy.context(lm=_RecordingLM(config.model), adapter=make_adapter(config.adapter), trace=None):
        try:
            program(**inputs)
        except _Captured as captured:
            return [
                {"role": m.get("role", "user"), "content": _text(m.get("content"))} for m in captured.messages
            ]
    raise RuntimeError("the program answered without calling a model; there is no prompt to show")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
    return str(content)
