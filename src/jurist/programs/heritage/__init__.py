"""The heritage task's judges: the LLM program (``program``) and the offline baseline
with the same output (``baseline``)."""
