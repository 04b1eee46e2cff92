"""The RGB task's inputs: its files, rows and passage mixing (``loader``) and its published
protocol as plain values (``protocol``, importable without loading the loaders)."""
