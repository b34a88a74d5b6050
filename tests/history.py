"""Topics the tests fill with records of fixed past timestamps (2024-01-01 and the like).

Apache Kafka deletes a segment once its newest record is older than the topic's ``retention.ms``
(7 days by default), at its next retention check (every 5 minutes): records stamped 2024 can be
gone before a test reads them back, and a backfill then finds nothing to read. A topic meant to
hold history says so, as a real backfill source would: ``KEEP_HISTORY`` as its config.
"""

from __future__ import annotations

#: topic config of a topic whose records keep their old timestamps and must not expire
KEEP_HISTORY = {"retention.ms": "-1"}
