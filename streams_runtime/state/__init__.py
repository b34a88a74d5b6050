"""Public state store API: store contracts, ``ValueAndTimestamp`` and the ``Stores`` factory.

Implementations live in :mod:`streams_runtime.state.internals` (the only place ``rocksdict`` is
imported, in ``rocksdb_store``).
"""

from streams_runtime.state import interfaces, versioned
from streams_runtime.state.interfaces import *  # noqa: F403 (the contracts: interfaces.__all__)
from streams_runtime.state.stores import Stores
from streams_runtime.state.value_and_timestamp import ValueAndTimestamp
from streams_runtime.state.versioned import *  # noqa: F403 (versioned stores: versioned.__all__)

__all__ = ["Stores", "ValueAndTimestamp"]
__all__ += interfaces.__all__
__all__ += versioned.__all__
