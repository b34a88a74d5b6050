"""rocksdb_config_setter and the RocksDB memory budget keys (Kafka Streams' rocksdb.config.setter).

What a setter changes is read back from the database itself: RocksDB writes the options it opened
with into the database directory (``OPTIONS-<n>``), one section per column family.
"""

from __future__ import annotations

import pathlib
import re
from typing import Any

import pytest

from streams_runtime import Consumed, Materialized, Serdes, StreamsBuilder, StreamsConfig, TopologyTestDriver
from streams_runtime.errors import ProcessorStateError, StreamsConfigError
from streams_runtime.state.internals import rocksdb_store
from streams_runtime.state.internals.rocksdb_segments import RocksDBSegments
from streams_runtime.state.internals.rocksdb_store import RocksDBStore


class FourWriteBuffers:
    """A setter as a user writes one: records what it was given and tunes one option."""

    made: list[FourWriteBuffers] = []

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.closed: list[str] = []
        FourWriteBuffers.made.append(self)

    def set_config(self, store_name: str, options: Any, configs: Any) -> None:
        self.calls.append((store_name, configs))
        options.set_max_write_buffer_number(4)

    def close(self, store_name: str, options: Any) -> None:
        self.closed.append(store_name)


#: for the 'module:attr' spelling
SETTER = FourWriteBuffers()


class Broken:
    def set_config(self, store_name: str, options: Any, configs: Any) -> None:
        raise RuntimeError("no such option")


def _opened_with(directory: pathlib.Path) -> dict[str, str]:
    """Column family name -> its max_write_buffer_number, from the newest OPTIONS file."""
    newest = max(directory.glob("OPTIONS-*"), key=lambda p: int(p.name.split("-")[1]))
    found: dict[str, str] = {}
    family = None
    for line in newest.read_text().splitlines():
        header = re.match(r'\[CFOptions "(.*)"\]', line)
        if header:
            family = header.group(1)
        elif line.strip().startswith("max_write_buffer_number=") and family is not None:
            found[family] = line.split("=", 1)[1]
    return found


def test_should_hand_the_setter_the_store_name_its_options_and_the_config(make_context) -> None:
    setter = FourWriteBuffers()
    configs = StreamsConfig({"application_id": "app", "rocksdb_config_setter": setter})
    context = make_context(app_configs=configs)
    store = RocksDBStore("counts")
    store.init(context)
    assert setter.calls == [("counts", configs)]
    assert _opened_with(context.state_dir / "counts")["default"] == "4"  # the setter's value took
    store.close()
    assert setter.closed == ["counts"]


def test_should_tune_every_segment_of_a_window_store_with_the_stores_options(make_context) -> None:
    setter = FourWriteBuffers()
    context = make_context(app_configs={"rocksdb_config_setter": setter})
    segments = RocksDBSegments()
    segments.open(context, "windows")
    segments.write([(7, b"k", b"v"), (8, b"k", b"w")])
    segments.close()
    segments.open(context, "windows")  # existing segments reopen with the store's options too
    opened = _opened_with(context.state_dir / "windows")
    segments.close()
    assert opened["segment-7"] == opened["segment-8"] == opened["default"] == "4"
    assert opened["changelog_offsets"] != "4"  # one key: left at RocksDB's default
    assert [name for name, _ in setter.calls] == ["windows", "windows"]


def test_should_make_one_setter_per_store_from_a_class_named_as_module_attr(make_context) -> None:
    FourWriteBuffers.made.clear()
    name = f"{__name__}:FourWriteBuffers"
    assert StreamsConfig({"rocksdb_config_setter": name})["rocksdb_config_setter"] is FourWriteBuffers
    context = make_context(app_configs={"rocksdb_config_setter": name})
    stores = [RocksDBStore("a"), RocksDBStore("b")]
    for store in stores:
        store.init(context)
        store.close()
    assert [made.calls[0][0] for made in FourWriteBuffers.made] == ["a", "b"]


def test_should_take_an_object_named_as_module_attr() -> None:
    config = StreamsConfig({"rocksdb_config_setter": f"{__name__}:SETTER"})
    assert config["rocksdb_config_setter"] is SETTER


@pytest.mark.parametrize(
    "value",
    [42, "no_colon", "streams_runtime.nowhere:Setter", f"{__name__}:missing", f"{__name__}:Broken.x"],
)
def test_should_name_the_key_and_the_allowed_values_for_a_bad_setter(value: Any) -> None:
    with pytest.raises(StreamsConfigError) as raised:
        StreamsConfig({"rocksdb_config_setter": value})
    assert "rocksdb_config_setter" in str(raised.value)
    assert "set_config(store_name, options, configs)" in str(raised.value)


def test_should_fail_the_open_naming_the_store_when_the_setter_fails(make_context) -> None:
    context = make_context(app_configs={"rocksdb_config_setter": Broken()})
    with pytest.raises(ProcessorStateError, match="failed for store counts: no such option") as raised:
        RocksDBStore("counts").init(context)
    assert type(raised.value) is ProcessorStateError  # not a damaged store: nothing is wiped
    with pytest.raises(ProcessorStateError, match="failed for store windows"):
        RocksDBSegments().open(context, "windows")


def test_should_set_the_process_memory_budget_from_the_config(make_context) -> None:
    shared = rocksdb_store._SHARED  # noqa: SLF001
    configs = StreamsConfig(
        {"rocksdb_block_cache_bytes": 48 * 1024 * 1024, "rocksdb_write_buffer_bytes": 16 * 1024 * 1024}
    )
    try:
        store = RocksDBStore("budgeted")
        store.init(make_context(app_configs=configs))
        assert (shared.block_cache_bytes, shared.write_buffer_bytes) == (48 * 1024 * 1024, 16 * 1024 * 1024)
        store.close()
    finally:
        rocksdb_store.configure_shared_memory(
            block_cache_bytes=rocksdb_store.DEFAULT_BLOCK_CACHE_BYTES,
            write_buffer_bytes=rocksdb_store.DEFAULT_WRITE_BUFFER_BYTES,
        )


def test_should_refuse_memtables_larger_than_the_cache_naming_both_keys() -> None:
    with pytest.raises(StreamsConfigError, match="'rocksdb_write_buffer_bytes'.*'rocksdb_block_cache_bytes'"):
        StreamsConfig({"rocksdb_block_cache_bytes": 1024, "rocksdb_write_buffer_bytes": 2048})


def test_should_tune_the_dsl_stores_of_a_running_topology(tmp_path: pathlib.Path) -> None:
    setter = FourWriteBuffers()
    builder = StreamsBuilder()
    builder.stream("words", Consumed.with_(Serdes.String(), Serdes.String())).group_by_key().count(
        materialized=Materialized.as_("word-counts")
    )
    config = {"application_id": "tuned", "state_dir": str(tmp_path), "rocksdb_config_setter": setter}
    with TopologyTestDriver(builder.build(), config) as driver:
        driver.create_input_topic("words", Serdes.String(), Serdes.String()).pipe_input("a", "x")
        assert driver.get_key_value_store("word-counts").get("a") == 1
    assert [name for name, _ in setter.calls] == ["word-counts"]
    assert setter.closed == ["word-counts"]


def test_the_how_to_pages_setter_does_what_the_page_says(make_context) -> None:
    page = (pathlib.Path(__file__).resolve().parents[3] / "docs" / "how-to" / "tune-rocksdb.md").read_text()
    [code] = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "def set_config" in b]
    scope: dict[str, Any] = {}
    exec(compile(code, "tune-rocksdb.md", "exec"), scope)  # noqa: S102
    context = make_context(app_configs={"rocksdb_config_setter": scope["PaymentsRocksDB"]})
    for name in ("payments-by-card", "fx-rates"):
        store = RocksDBStore(name)
        store.init(context)
        store.close()
    options = {name: (context.state_dir / name) for name in ("payments-by-card", "fx-rates")}
    texts = {
        name: max(d.glob("OPTIONS-*"), key=lambda p: int(p.name.split("-")[1])).read_text()
        for name, d in options.items()
    }
    assert all("max_background_jobs=4" in text for text in texts.values())
    assert "compression=kZSTD" in texts["payments-by-card"]  # the large stores compressed
    assert "compression=kZSTD" not in texts["fx-rates"]
