"""The product's evaluation harness (``sunar eval``): questions with gold answers in, predictions,
metrics, a report and plots out (:mod:`~sunar.evals.run`, :mod:`~sunar.evals.report`,
:mod:`~sunar.evals.metrics`, :mod:`~sunar.evals.data`). Measurement scripts live in ``benchmarks/``."""
