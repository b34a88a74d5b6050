"""State store implementations: inner stores, the one-concern wrappers, the record cache.

Import from the submodules; this package deliberately re-exports nothing, so that importing
it never loads ``rocksdict`` (only :mod:`.rocksdb_store` does).
"""
