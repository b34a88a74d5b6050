"""RocksDBStore: the persistent bytes -> bytes store. The ONLY module importing ``rocksdict``.

Owner: one StreamTask (one instance per task and store name), used from the task's thread. The
database lives in ``<context.state_dir>/<store name>``; the task directory is locked by the
runtime's state directory, so no two processes open the same database.

Memory is bounded per process, not per store: every store shares one block cache, and the
memtables of every store are charged to that same cache through one write-buffer manager (the
config's ``rocksdb_block_cache_bytes`` and ``rocksdb_write_buffer_bytes``, applied by
:class:`StoreOptions` as each store opens, or :func:`configure_shared_memory`; defaults 64 MiB
cache, 32 MiB of it for memtables). Per store, the application's ``rocksdb_config_setter`` tunes
the options before the database opens (:class:`StoreOptions`). The budget grows with the number of
databases open in the process: each open database adds :data:`WRITE_BUFFER_BYTES_PER_STORE` to the
memtable budget (and as much to the cache) beyond the configured figures. A fixed budget shared by
many stores gives each only a sliver, and RocksDB then flushes tiny memtables continuously (with
64 stores on 32 MiB that cost several times the rest of the per-record work). Each database's
memtable is capped at the same figure, so a store flushes when its own memtable fills, not because
others are busy. Memtables hold only what was written, so the extra budget is a ceiling, not
memory taken up front.

Data and changelog offset
-------------------------
The store keeps the changelog offset its data reflects in a second column family
(``changelog_offsets``). The two commit paths:

1. Restore (:meth:`restore_batch` with ``changelog_offset``): the records of a changelog batch
   and the batch's last offset go into ONE ``WriteBatch``; RocksDB applies a batch atomically
   (in the WAL and in the memtables, and ``atomic_flush`` flushes both column families
   together), so after a crash the data and the offset are from the same batch.
2. Processing (:meth:`commit_offset`): records put while processing (directly or when the record
   cache flushes) are buffered in the store (:attr:`RocksDBStore.pending`, read through by
   ``get``, so a task reads its own writes) and written as ONE ``WriteBatch`` at commit, or
   earlier when :data:`MAX_PENDING_KEYS` keys are buffered or before a scan, a restore or a
   close; at commit the runtime first flushes the stores and the producer, then calls
   ``commit_offset`` with the changelog offset those writes reached. One batch per commit
   instead of one write (and write-ahead-log append) per ``put`` is most of the store's cost.

Why this order is safe: the offset is only ever written together with, or after, the data it
describes, so the stored offset is never ahead of the stored data. A crash can leave the offset
behind the data; restore then replays changelog records the store already holds, and replaying
is idempotent (each record sets a key to its latest value; the last write wins), so the store
converges to the same state.
"""

from __future__ import annotations

import pathlib
import threading
from collections.abc import Iterator
from typing import Any

from rocksdict import (
    BlockBasedOptions,
    Cache,
    Options,
    Rdict,
    ReadOptions,
    WriteBatch,
    WriteBufferManager,
)

from streams_runtime.config import rocksdb_config_setter
from streams_runtime.errors import CorruptedStoreError, ProcessorStateError
from streams_runtime.state.internals.bytes_store import AbstractBytesStore

__all__ = [
    "RocksDBStore",
    "configure_shared_memory",
    "verify_readable",
    "close_database",
    "count_open_database",
    "StoreOptions",
    "decode_offset",
    "encode_offset",
    "scan_raw_iterator",
    "shared_block_cache",
    "shared_db_options",
    "shared_memory_figures",
    "shared_memory_usage",
]

OFFSETS_COLUMN_FAMILY = "changelog_offsets"
_OFFSET_KEY = b"changelog_offset"

#: Puts buffered in a store before they are written as one batch without waiting for the commit.
MAX_PENDING_KEYS = 10_000
_ABSENT = object()

DEFAULT_BLOCK_CACHE_BYTES = 64 * 1024 * 1024
DEFAULT_WRITE_BUFFER_BYTES = 32 * 1024 * 1024
#: Memtable budget added per open database (and the memtable size of each database).
WRITE_BUFFER_BYTES_PER_STORE = 8 * 1024 * 1024


class _SharedMemory:
    """The process-wide block cache and write-buffer manager (created on first use)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.block_cache_bytes = DEFAULT_BLOCK_CACHE_BYTES
        self.write_buffer_bytes = DEFAULT_WRITE_BUFFER_BYTES
        self.cache: Any = None
        self.write_buffer_manager: Any = None
        self.open_databases = 0

    def get(self) -> tuple[Any, Any]:
        with self.lock:
            if self.cache is None:
                cache_bytes, buffer_bytes = self._budget()
                self.cache = Cache(cache_bytes)
                self.write_buffer_manager = WriteBufferManager.new_write_buffer_manager_with_cache(
                    buffer_bytes, False, self.cache
                )
            return self.cache, self.write_buffer_manager

    def _budget(self) -> tuple[int, int]:
        """(cache, memtable) bytes for the databases open now: the configured ones plus a share each."""
        extra = self.open_databases * WRITE_BUFFER_BYTES_PER_STORE
        return self.block_cache_bytes + extra, self.write_buffer_bytes + extra

    def figures(self) -> dict[str, int] | None:
        """See :func:`shared_memory_figures`."""
        with self.lock:
            if self.cache is None:
                return None
            cache_bytes, buffer_bytes = self._budget()
            return {
                "block_cache_capacity": cache_bytes,
                "block_cache_usage": int(self.cache.get_usage()),
                "block_cache_pinned_usage": int(self.cache.get_pinned_usage()),
                "memtable_budget": buffer_bytes,
                "open_databases": self.open_databases,
            }

    def budget(self, block_cache_bytes: int, write_buffer_bytes: int) -> None:
        """Set the configured budget when it differs (see :func:`configure_shared_memory`)."""
        if (block_cache_bytes, write_buffer_bytes) != (self.block_cache_bytes, self.write_buffer_bytes):
            configure_shared_memory(
                block_cache_bytes=block_cache_bytes, write_buffer_bytes=write_buffer_bytes
            )

    def resize(self, opened: int) -> None:
        """Count ``opened`` (+1 or -1) databases and resize the shared budget; holds the lock."""
        with self.lock:
            self.open_databases = max(0, self.open_databases + opened)
            self.apply()

    def apply(self) -> None:
        """Set the cache and memtable budget for the databases open now; caller holds the lock."""
        if self.cache is not None:
            cache_bytes, buffer_bytes = self._budget()
            if buffer_bytes > self.write_buffer_manager.get_buffer_size():  # grow the cache first
                self.cache.set_capacity(cache_bytes)
                self.write_buffer_manager.set_buffer_size(buffer_bytes)
            else:
                self.write_buffer_manager.set_buffer_size(buffer_bytes)
                self.cache.set_capacity(cache_bytes)


_SHARED = _SharedMemory()


def configure_shared_memory(*, block_cache_bytes: int, write_buffer_bytes: int) -> None:
    """Set the process-wide RocksDB memory budget (block cache, memtables charged to it).

    Takes effect immediately for stores already open, and for every store opened later.

    :param block_cache_bytes: capacity of the shared block cache.
    :param write_buffer_bytes: the part of it memtables may use; must not exceed the cache.
    """
    if block_cache_bytes <= 0 or not 0 < write_buffer_bytes <= block_cache_bytes:
        raise ValueError("need 0 < write_buffer_bytes <= block_cache_bytes")
    with _SHARED.lock:
        _SHARED.block_cache_bytes = block_cache_bytes
        _SHARED.write_buffer_bytes = write_buffer_bytes
        _SHARED.apply()


def shared_block_cache() -> Any:
    """The process-wide block cache every RocksDB store of this process uses."""
    cache, _ = _SHARED.get()
    return cache


def shared_memory_usage() -> int:
    """Bytes currently used in the shared block cache (memtables included)."""
    cache, _ = _SHARED.get()
    return int(cache.get_usage())


def shared_memory_figures() -> dict[str, int] | None:
    """The process-wide budget and its use, in bytes (``open_databases`` a count); ``None`` while no
    RocksDB store has opened in this process (nothing is created to answer)."""
    return _SHARED.figures()


def shared_db_options() -> Any:
    """Database options using the process-wide block cache and write-buffer manager.

    For the other rocksdict-facing module (:mod:`.rocksdb_segments`), so every RocksDB database
    of the process shares one memory budget. Pair the open with :func:`count_open_database`
    (+1 after opening, -1 after closing) so the budget follows the number of databases.
    """
    return _options(*_SHARED.get())


def count_open_database(opened: int) -> None:
    """Count a database opened (+1) or closed (-1) in this process; the shared budget follows."""
    _SHARED.resize(opened)


def close_database(db: Any, options: Any) -> None:
    """Close a database opened with :func:`shared_db_options` (counted by
    :func:`count_open_database`), then its options; either may be None (not opened)."""
    if db is not None:
        db.close()
        count_open_database(-1)
    if options is not None:
        options.close()


def _options(cache: Any, write_buffer_manager: Any) -> Any:
    options = Options(raw_mode=True)
    options.create_if_missing(True)
    options.create_missing_column_families(True)
    options.set_atomic_flush(True)
    table = BlockBasedOptions()
    table.set_block_cache(cache)
    table.set_bloom_filter(10, False)
    options.set_block_based_table_factory(table)
    options.set_write_buffer_manager(write_buffer_manager)
    options.set_write_buffer_size(WRITE_BUFFER_BYTES_PER_STORE)
    return options


class StoreOptions:
    """The options of one store's database: the runtime's defaults (:func:`shared_db_options`),
    then the application's ``rocksdb_config_setter``, if any, which sees them before the open;
    :meth:`close` gives the setter its ``close(store_name, options)`` after the database closed.

    :param store_name: the store (Kafka Streams' setters are told which store they tune).
    :param configs: the application's config (``context.app_configs``); ``None`` for none.
    """

    def __init__(self, store_name: str, configs: Any) -> None:
        self.store_name = store_name
        if configs is not None and "rocksdb_block_cache_bytes" in configs:
            _SHARED.budget(configs["rocksdb_block_cache_bytes"], configs["rocksdb_write_buffer_bytes"])
        self.options = shared_db_options()
        chosen = None if configs is None else configs.get("rocksdb_config_setter")
        setter = rocksdb_config_setter("rocksdb_config_setter", chosen)
        self._setter = setter() if isinstance(setter, type) else setter
        if self._setter is not None:
            try:
                self._setter.set_config(store_name, self.options, configs)
            except Exception as exc:
                raise ProcessorStateError(
                    f"rocksdb_config_setter {self._setter!r} failed for store {store_name}: {exc}"
                ) from exc

    def close(self) -> None:
        closer = getattr(self._setter, "close", None)
        if callable(closer):
            closer(self.store_name, self.options)


def verify_readable(db: Any, what: str) -> None:
    """Read every block of ``db`` once (checksums checked) and raise :class:`CorruptedStoreError`
    when one fails. RocksDB opens a database whose SST data blocks are damaged and checks them
    only when read; its iterators then stop early without raising, so a damaged block would go
    unnoticed (missing keys) until a point lookup hits it. One scan at open costs about 0.35 s
    per million keys on this machine, against a restore of ~1.5 s for the same keys."""
    iterator = db.iter(_SCAN_OPTIONS)
    try:
        iterator.seek_to_first()
        while iterator.valid():
            iterator.next()
        iterator.status()
    except Exception as exc:
        raise CorruptedStoreError(f"RocksDB store {what} is damaged: {exc}") from exc
    finally:
        del iterator


def _scan_options() -> Any:
    options = ReadOptions()
    # a verification scan must not evict the working set (the stub omits the flag the binding takes)
    options.fill_cache(False)  # type: ignore[call-arg]
    options.set_verify_checksums(True)
    return options


_SCAN_OPTIONS = _scan_options()


class RocksDBStore(AbstractBytesStore):
    """A persistent key-value store of bytes on RocksDB.

    :param name: the store name; the database directory is ``<state_dir>/<name>``.
    """

    persistent = True

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._db: Any = None
        self._offsets: Any = None
        self._offsets_view: Any = None
        self._path: pathlib.Path | None = None
        self._options: StoreOptions | None = None
        #: key -> value (``None``: delete) put since the last write to RocksDB.
        self.pending: dict[bytes, bytes | None] = {}

    @property
    def path(self) -> pathlib.Path | None:
        """The database directory (set by ``init``)."""
        return self._path

    def _open_store(self, context: Any) -> None:
        self._path = pathlib.Path(context.state_dir) / self.name
        self._options = StoreOptions(self.name, getattr(context, "app_configs", None))
        try:
            self._path.mkdir(parents=True, exist_ok=True)
            self._db = Rdict(
                str(self._path),
                self._options.options,
                column_families={OFFSETS_COLUMN_FAMILY: Options(raw_mode=True)},
            )
            count_open_database(+1)  # paired with the -1 of _close_store, whatever fails next
            self._offsets = self._db.get_column_family_handle(OFFSETS_COLUMN_FAMILY)
            self._offsets_view = self._db.get_column_family(OFFSETS_COLUMN_FAMILY)
        except Exception as exc:
            if self._db is not None:
                self._close_store()
            raise CorruptedStoreError(
                f"could not open RocksDB store {self.name} at {self._path}: {exc}"
            ) from exc
        try:
            verify_readable(self._db, f"{self.name} at {self._path}")
        except CorruptedStoreError:
            self._close_store()
            raise

    def _close_store(self) -> None:
        if self._db is not None:
            self._write_pending()
        db, view, options = self._db, self._offsets_view, self._options
        self._db = self._offsets = self._offsets_view = self._options = None
        if view is not None:
            view.close()
        close_database(db, options)

    def flush(self) -> None:
        """Hand the write-ahead log to the OS; called at every commit.

        Every write already goes through the WAL, and RocksDB recovers a consistent prefix of it
        after a crash, so the stored offset is never ahead of the stored data (see the module
        docstring). Memtables are flushed by RocksDB itself as they fill, and on close. Flushing
        them here, as Kafka Streams does (it runs with the WAL off), costs ~3 ms per commit
        and buys nothing with the WAL on.
        """
        self._check_open()
        self._write_pending()
        try:
            self._db.flush_wal(False)
        except Exception as exc:
            raise ProcessorStateError(f"could not flush RocksDB store {self.name}: {exc}") from exc

    # get/put: AbstractBytesStore's checks and _get/_put in one frame (the hot path of every
    # store read and write); anything unusual takes the general path.
    def get(self, key: bytes) -> bytes | None:
        if not self._open or type(key) is not bytes:
            return super().get(key)
        value = self.pending.get(key, _ABSENT)
        if value is _ABSENT:
            found: bytes | None = self._db.get(key)
            return found
        return value  # type: ignore[return-value]

    def put(self, key: bytes, value: bytes | None) -> None:
        if not self._open or type(key) is not bytes or (value is not None and type(value) is not bytes):
            super().put(key, value)
            return
        pending = self.pending
        pending[key] = value
        if len(pending) >= MAX_PENDING_KEYS:
            self._write_pending()

    # the engine hooks are get/put themselves: AbstractBytesStore calls them with keys and values
    # checked (exactly bytes: check_key and check_value copy a subclass), which take the fast path
    _get = get
    _put = put

    def _write_pending(self) -> None:
        if self.pending:
            self._write_all([])

    def _write_all(
        self, entries: list[tuple[bytes, bytes | None]], changelog_offset: int | None = None
    ) -> None:
        batch = WriteBatch(raw_mode=True)
        pending = self.pending
        if pending:
            for key, value in pending.items():
                if value is None:
                    batch.delete(key)
                else:
                    batch.put(key, value)
        for key, value in entries:
            if value is None:
                batch.delete(key)
            else:
                batch.put(key, value)
        if changelog_offset is not None:
            batch.put(_OFFSET_KEY, _encode_offset(changelog_offset), self._offsets)
        if batch.len() == 0:
            return
        try:
            self._db.write(batch)
        except Exception as exc:
            raise ProcessorStateError(f"could not write to RocksDB store {self.name}: {exc}") from exc
        pending.clear()

    def restore_batch(self, records: Any, changelog_offset: int | None = None) -> None:
        """Apply a batch of changelog records and store ``changelog_offset`` in the same WriteBatch.

        Safe in any crash: RocksDB applies the batch atomically, so the stored offset always
        describes exactly the data stored with it; a batch lost in a crash is replayed from
        the previous offset, and replay is idempotent (last write wins per key).

        Hot path of restore (one call per changelog batch): the records go straight into the
        WriteBatch; only when rocksdict rejects one (not ``bytes``) is the batch rebuilt through
        the checked path, which converts ``bytearray``/``memoryview`` and raises ``TypeError``
        for the rest. Nothing is written before the whole batch is accepted.

        :param records: ``(key, value_or_None)`` or ``(key, value, timestamp)``, in store format.
        :param changelog_offset: the offset of the batch's last record (``None``: keep the old one).
        """
        self._check_open()
        self._write_pending()
        records = records if isinstance(records, list) else list(records)
        batch = WriteBatch(raw_mode=True)
        put, delete = batch.put, batch.delete
        try:
            for record in records:
                value = record[1]
                if value is None:
                    delete(record[0])
                else:
                    put(record[0], value)
        except (KeyError, ValueError):
            super().restore_batch(records, changelog_offset)
            return
        if changelog_offset is not None:
            put(_OFFSET_KEY, _encode_offset(changelog_offset), self._offsets)
        try:
            self._db.write(batch)
        except Exception as exc:
            raise ProcessorStateError(f"could not write to RocksDB store {self.name}: {exc}") from exc

    def commit_offset(self, changelog_offset: int) -> None:
        """Record that the store's data reflects the changelog up to ``changelog_offset``.

        Call only after the writes it covers were applied to this store (see the module
        docstring for why that order is safe).
        """
        self._check_open()
        self._write_all([], changelog_offset)

    def committed_offset(self) -> int | None:
        """The changelog offset stored with the data, or ``None`` when none was stored."""
        self._check_open()
        raw = self._offsets_view.get(_OFFSET_KEY)
        return None if raw is None else int.from_bytes(raw, "big", signed=True)

    def _scan(
        self, lower: bytes | None, upper: bytes | None, upper_inclusive: bool, reverse: bool
    ) -> Iterator[tuple[bytes, bytes]]:
        self._write_pending()
        return _scan(self._db.iter(), lower, upper, upper_inclusive, reverse)

    def approximate_num_entries(self) -> int:
        """RocksDB's estimate of the number of keys (``rocksdb.estimate-num-keys``)."""
        self._check_open()
        self._write_pending()
        return int(self._db.property_int_value("rocksdb.estimate-num-keys") or 0)


def _encode_offset(offset: int) -> bytes:
    return int(offset).to_bytes(8, "big", signed=True)


def encode_offset(offset: int) -> bytes:
    """A changelog offset as stored next to the data (8-byte big-endian signed)."""
    return _encode_offset(offset)


def decode_offset(raw: bytes | None) -> int | None:
    """The inverse of :func:`encode_offset`; ``None`` stays ``None``."""
    return None if raw is None else int.from_bytes(raw, "big", signed=True)


def scan_raw_iterator(
    it: object, lower: bytes | None, upper: bytes | None, upper_inclusive: bool, reverse: bool
) -> Iterator[tuple[bytes, bytes]]:
    """Walk a raw RocksDB iterator (of a database or a column family) between the bounds."""
    return _scan(it, lower, upper, upper_inclusive, reverse)


def _scan(
    it: Any, lower: bytes | None, upper: bytes | None, upper_inclusive: bool, reverse: bool
) -> Iterator[tuple[bytes, bytes]]:
    """Walk a raw RocksDB iterator between the bounds; drops the iterator when done or closed."""
    try:
        if reverse:
            if upper is None:
                it.seek_to_last()
            else:
                it.seek_for_prev(upper)
                if it.valid() and not upper_inclusive and it.key() == upper:
                    it.prev()
            while it.valid():
                key = it.key()
                if lower is not None and key < lower:
                    break
                yield key, it.value()
                it.prev()
        else:
            if lower is None:
                it.seek_to_first()
            else:
                it.seek(lower)
            while it.valid():
                key = it.key()
                if upper is not None and (key > upper if upper_inclusive else key >= upper):
                    break
                yield key, it.value()
                it.next()
    finally:
        del it
