"""RocksDBSegments: window/session store segments as column families of one RocksDB database.

Owner: one persistent window or session store (one per task and store name), used from the
task's thread. The second of the two modules allowed to import ``rocksdict`` (with
:mod:`.rocksdb_store`, whose shared block cache and write-buffer manager it uses).

Layout: the database lives in ``<state_dir>/<store name>``; segment ``n`` is the column family
``segment-<n>``; the changelog offset lives in the ``changelog_offsets`` column family. A
dropped segment is a dropped column family (cheap, no per-key deletes).

Why one database with column families rather than one database per segment (as Kafka
Streams does): a restore batch may span segments, and RocksDB applies one ``WriteBatch``
atomically across the column families of one database, so the records of the batch and the
batch's changelog offset are stored together or not at all (the ordering argument of
:mod:`.rocksdb_store` holds unchanged: the offset is never ahead of the data).
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from rocksdict import Options, Rdict, WriteBatch

from streams_runtime.errors import CorruptedStoreError, ProcessorStateError
from streams_runtime.state.internals.rocksdb_store import (
    StoreOptions,
    close_database,
    count_open_database,
    decode_offset,
    encode_offset,
    scan_raw_iterator,
    verify_readable,
)

if TYPE_CHECKING:
    from streams_runtime.state.interfaces import StateStoreContext

__all__ = ["RocksDBSegments"]

OFFSETS_COLUMN_FAMILY = "changelog_offsets"
_OFFSET_KEY = b"changelog_offset"
_PREFIX = "segment-"


def _cf_name(segment: int) -> str:
    return f"{_PREFIX}{segment}"


class RocksDBSegments:
    """Segments of one store in one RocksDB database (see the module docstring)."""

    persistent = True

    def __init__(self) -> None:
        self._db: Any = None
        self._path: pathlib.Path | None = None
        self._views: dict[int, Any] = {}
        self._offsets: Any = None
        self._options: StoreOptions | None = None

    @property
    def path(self) -> pathlib.Path | None:
        """The database directory (set by :meth:`open`)."""
        return self._path

    def open(self, context: StateStoreContext, store_name: str) -> None:
        """Open (or create) the database and every segment column family it already has."""
        self._path = pathlib.Path(context.state_dir) / store_name
        # outside the try: a failing setter is the application's error, not a damaged store
        self._options = StoreOptions(store_name, getattr(context, "app_configs", None))
        options = self._options.options
        try:
            self._path.mkdir(parents=True, exist_ok=True)
            existing = (
                [] if not (self._path / "CURRENT").exists() else Rdict.list_cf(str(self._path), options)
            )
            # the segments hold the data: they get the store's options (the shared block cache,
            # bloom filters, the setter's tuning); the offsets family is one key
            families = {
                name: options if name.startswith(_PREFIX) else Options(raw_mode=True)
                for name in existing
                if name != "default"
            }
            families.setdefault(OFFSETS_COLUMN_FAMILY, Options(raw_mode=True))
            self._db = Rdict(str(self._path), options, column_families=families)
            self._offsets = self._db.get_column_family(OFFSETS_COLUMN_FAMILY)
            self._views = {
                int(name[len(_PREFIX) :]): self._db.get_column_family(name)
                for name in families
                if name.startswith(_PREFIX)
            }
            count_open_database(+1)
        except Exception as exc:
            raise CorruptedStoreError(
                f"could not open RocksDB store {store_name} at {self._path}: {exc}"
            ) from exc
        try:
            for view in (self._db, *self._views.values()):
                verify_readable(view, f"{store_name} at {self._path}")
        except CorruptedStoreError:
            self.close()
            raise

    def close(self) -> None:
        views, offsets, db, options = list(self._views.values()), self._offsets, self._db, self._options
        self._views, self._offsets, self._db, self._options = {}, None, None, None
        for view in views:
            view.close()
        if offsets is not None:
            offsets.close()
        close_database(db, options)

    def flush(self) -> None:
        """Hand the WAL to the OS at commit; see RocksDBStore.flush for why memtables stay."""
        try:
            self._db.flush_wal(False)
        except Exception as exc:
            raise ProcessorStateError(f"could not flush RocksDB store at {self._path}: {exc}") from exc

    def segment_ids(self) -> list[int]:
        return sorted(self._views)

    def _segment(self, segment: int) -> Any:
        view = self._views.get(segment)
        if view is None:
            assert self._options is not None  # open
            view = self._views[segment] = self._db.create_column_family(
                _cf_name(segment), self._options.options
            )
        return view

    def get(self, segment: int, key: bytes) -> bytes | None:
        view = self._views.get(segment)
        return None if view is None else view.get(key)

    def write(
        self, entries: list[tuple[int, bytes, bytes | None]], changelog_offset: int | None = None
    ) -> None:
        """Write ``(segment, key, value_or_None)`` and the offset in one atomic ``WriteBatch``."""
        if not entries and changelog_offset is None:
            return
        batch = WriteBatch(raw_mode=True)
        handles: dict[int, Any] = {}
        for segment, key, value in entries:
            if value is None and segment not in self._views:
                continue  # nothing to delete in a segment that does not exist
            handle = handles.get(segment)
            if handle is None:
                self._segment(segment)
                handle = handles[segment] = self._db.get_column_family_handle(_cf_name(segment))
            if value is None:
                batch.delete(key, handle)
            else:
                batch.put(key, value, handle)
        if changelog_offset is not None:
            batch.put(
                _OFFSET_KEY,
                encode_offset(changelog_offset),
                self._db.get_column_family_handle(OFFSETS_COLUMN_FAMILY),
            )
        try:
            if batch.len():
                self._db.write(batch)
        except Exception as exc:
            raise ProcessorStateError(f"could not write to RocksDB store at {self._path}: {exc}") from exc
        finally:
            # Handles keep the database alive; drop them before a later close.
            del batch, handles

    def scan(
        self, segment: int, lower: bytes | None, upper: bytes | None, reverse: bool
    ) -> Iterator[tuple[bytes, bytes]]:
        view = self._views.get(segment)
        if view is None:
            return iter(())
        return scan_raw_iterator(view.iter(), lower, upper, True, reverse)

    def drop_segment(self, segment: int) -> None:
        view = self._views.pop(segment, None)
        if view is None:
            return
        view.close()
        try:
            self._db.drop_column_family(_cf_name(segment))
        except Exception as exc:
            raise ProcessorStateError(f"could not drop segment {segment} of {self._path}: {exc}") from exc

    def commit_offset(self, changelog_offset: int) -> None:
        self.write([], changelog_offset)

    def committed_offset(self) -> int | None:
        return decode_offset(self._offsets.get(_OFFSET_KEY))

    def approximate_num_entries(self) -> int:
        total = 0
        for view in self._views.values():
            total += int(view.property_int_value("rocksdb.estimate-num-keys") or 0)
        return total
