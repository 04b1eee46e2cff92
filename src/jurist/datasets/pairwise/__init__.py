"""The pairwise task's inputs: SubEval tables, plain pairs and judged record tables
(``tables``), and preference data in the shapes people publish (``shapes``)."""
