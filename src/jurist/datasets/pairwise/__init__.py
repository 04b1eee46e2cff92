"""The pairwise task's inputs: SubEval tables, plain pairs and judged record tables
(``tables``), preference data in the shapes people publish (``shapes``), and AlpacaEval's
judged runs as it publishes them with the data its length-controlled win rate reads
(``alpaca_eval``)."""
