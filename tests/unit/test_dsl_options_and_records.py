"""Config objects are frozen dataclasses; Records are immutable values with copy-modifiers."""

import dataclasses

import pytest

from streams_runtime import (
    Branched,
    Consumed,
    Grouped,
    Materialized,
    Produced,
    Record,
    Repartitioned,
    TopologyError,
)
from streams_runtime.kstream.internals.change import Change, ChangeSerde
from streams_runtime.serdes import Serdes


def test_options_are_frozen_and_have_as_and_with_constructors():
    assert Materialized.as_("s").store_name == "s"
    assert Grouped.as_("g").name == "g"
    assert Consumed.with_("k", "v").key_serde == "k"
    assert Produced.as_("p").name == "p"
    assert Branched.with_function(lambda s: s, "x").name == "x"
    with pytest.raises(dataclasses.FrozenInstanceError):
        Materialized().store_name = "x"


def test_materialized_modifiers_return_copies():
    base = Materialized.as_("s")
    changed = base.with_caching_disabled().with_logging_disabled().with_store_type("in_memory")
    assert base.caching_enabled and base.logging_enabled and base.store_type is None
    assert (changed.caching_enabled, changed.logging_enabled, changed.store_type) == (
        False,
        False,
        "in_memory",
    )


def test_invalid_option_values_are_rejected():
    with pytest.raises(TopologyError, match="store_type"):
        Materialized(store_type="disk")
    with pytest.raises(TopologyError, match="number_of_partitions"):
        Repartitioned(number_of_partitions=0)


def test_record_copies_change_one_field():
    record = Record("k", "v", 5, (("h", b"1"),))
    assert record.with_key("k2") == Record("k2", "v", 5, (("h", b"1"),))
    assert record.with_value("v2").value == "v2"
    assert record.with_timestamp(9).timestamp == 9
    assert record.with_headers({"a": "b"}).headers == (("a", b"b"),)
    with pytest.raises(ValueError):
        record.with_timestamp(-1)


def test_change_serde_round_trips_new_old_and_tombstones():
    serde = ChangeSerde(Serdes.String())
    for change in (Change("n", "o"), Change("n", None), Change(None, "o")):
        assert serde.deserialize("t", serde.serialize("t", change)) == change
