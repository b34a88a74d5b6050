"""StateRestoreListener: the public hook that reports the progress of state restoration.

Owner: the application (implements it); called by the StoreChangelogReader of each stream
thread, on that thread. Kept apart from the reader so that importing it needs no client library.

For each changelog partition with records to restore the reader calls, in this order:
``on_restore_start`` once, ``on_batch_restored`` once per applied batch (batch end offsets
strictly increasing), ``on_restore_end`` once. A changelog whose store is already current gets
no call at all. ``tp`` is ``(topic, partition)``; offsets are changelog offsets, ``end_offset``
exclusive (the offset the next record would get).
"""

from __future__ import annotations

__all__ = ["StateRestoreListener"]


class StateRestoreListener:
    """Hears the progress of restoring each changelog partition (Kafka Streams' listener).

    Subclass and override what you need; the defaults do nothing. Exceptions raised here
    propagate to the restoring thread (its uncaught-exception handling applies).
    """

    def on_restore_start(
        self, tp: tuple[str, int], store_name: str, start_offset: int, end_offset: int
    ) -> None:
        """Restore of ``tp`` into ``store_name`` begins at ``start_offset``; ``end_offset`` is exclusive."""

    def on_batch_restored(
        self, tp: tuple[str, int], store_name: str, batch_end_offset: int, num_restored: int
    ) -> None:
        """A batch of ``num_restored`` records, the last at ``batch_end_offset``, was applied."""

    def on_restore_end(self, tp: tuple[str, int], store_name: str, total_restored: int) -> None:
        """Restore of ``tp`` finished after ``total_restored`` records."""
