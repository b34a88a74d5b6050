"""The payments backfill: per-user windowed spend recomputed from the payments topic.

``transform`` holds the pure DataFrame functions, ``expectations`` the Great Expectations suite,
``publish`` the transactional publish step and its marker, ``main`` the entry point
:func:`run_backfill` (and ``python -m spark_jobs.payments_backfill.main``).
"""

from spark_jobs.payments_backfill.main import BackfillValidationError, run_backfill
from spark_jobs.payments_backfill.publish import PublishError, PublishFencedError

__all__ = ["BackfillValidationError", "PublishError", "PublishFencedError", "run_backfill"]
