"""Versioned key-value stores (KIP-889): the public names; see
:mod:`streams_runtime.state.internals.versioned_store` for the rules."""

from streams_runtime.state.internals.versioned_store import (
    PUT_RETURN_CODE_NOT_PUT,
    PUT_RETURN_CODE_VALID_TO_UNDEFINED,
    VersionedKeyValueStore,
    VersionedRecord,
)

__all__ = [
    "PUT_RETURN_CODE_NOT_PUT",
    "PUT_RETURN_CODE_VALID_TO_UNDEFINED",
    "VersionedKeyValueStore",
    "VersionedRecord",
]
