"""The payments backfill: per-user windowed spend recomputed from the payments topic (issue 7).

``transform`` holds the pure DataFrame functions, ``expectations`` the Great Expectations suite,
``main`` the entry point :func:`run_backfill` (and ``python -m spark_jobs.payments_backfill.main``).
"""

from spark_jobs.payments_backfill.main import BackfillValidationError, run_backfill

__all__ = ["BackfillValidationError", "run_backfill"]
