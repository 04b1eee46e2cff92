"""The heritage task's inputs: the gold standard (``gold``), the knowledge base (``kb``) and
token-tag files (``conll``)."""
