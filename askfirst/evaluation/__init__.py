"""Evaluation in one place: metrics, the MTRAGEval and ambiguity judges, per-question scoring, the eval runner,
paired confidence intervals, and the files other tools read."""
