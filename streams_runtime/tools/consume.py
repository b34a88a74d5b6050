"""``streams-runtime consume``: print a topic's records as JSON lines (Kafka's console consumer).

    streams-runtime consume TOPIC [--follow] [--max-records N] [--read-uncommitted]
                                  [--key-serde NAME] [--value-serde NAME]

**What it reads.** Every partition of the topic from its start, until it has caught up with the
end of each partition (it then exits), or on and on with ``--follow`` (until Ctrl-C). By default
only committed records: ``isolation.level=read_committed``, what a downstream consumer of an
exactly-once application reads (records of aborted or still open transactions are never shown, and
a partition's end is its last stable offset); ``--read-uncommitted`` shows every record written,
aborted ones too. The embedded Tansu broker does not hide aborted records from read_committed
readers: there the command says so on standard error. It joins no consumer group and commits
nothing: reading changes nothing for anyone else.

**Output.** One JSON object per record on standard output, in the order the records arrive
(per partition in offset order)::

    {"partition": 0, "offset": 41, "timestamp": 1767225600000, "key": "user-1", "value": {"amount": 12.5}}

``headers`` is added when the record has any (values as strings, ``null`` kept). Keys and values
go through the library's serdes, named as for ``produce`` (``--key-serde`` default ``string``,
``--value-serde`` ``json``). A record its serdes cannot read is printed with ``"error"`` (what
failed) and the raw bytes in base64 (``key_base64``/``value_base64``) instead of the field it
could not read, and the command ends with exit 1 naming how many: nothing is skipped silently.
On standard error, at the end: the count read per partition.

Exit codes: 0 every record printed as read, 1 a clear error (missing topic, unreadable records),
2 bad usage.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import uuid
from collections import Counter
from typing import IO, Any

from streams_runtime.config import named_serde
from streams_runtime.errors import StreamsError
from streams_runtime.kafka import clients
from streams_runtime.kafka.broker_identity import identify_broker
from streams_runtime.tools.cluster import add_bootstrap_option, bootstrap_servers
from streams_runtime.tools.produce import SERDE_CHOICES, add_serde_options

#: the consumer's own settings, over the shared profile: no group membership, nothing committed
CONSUMER_OVERRIDES = {
    "client.id": "streams-runtime-consume",
    "enable.auto.commit": False,
    "enable.partition.eof": True,  # how the command learns each partition's end
}
POLL_S = 0.5
TANSU_NOTE = (
    "note: the embedded Tansu broker shows records of aborted transactions to read_committed "
    "readers too; on Apache Kafka only committed records are shown"
)


class ConsumeError(StreamsError):
    """The topic is missing, or records could not be read with the serdes given."""


class RecordPrinter:
    """Turns consumed messages into JSON lines; counts the records its serdes could not read."""

    def __init__(self, key_serde: str, value_serde: str, out: IO[str]) -> None:
        self._names = {"key": key_serde, "value": value_serde}
        self._serdes = {"key": named_serde(key_serde), "value": named_serde(value_serde)}
        self._out = out
        self.per_partition: Counter[int] = Counter()
        self.unreadable = 0
        #: for the first record each side could not read: what the other serdes read it as
        self.readings: dict[str, dict[str, Any]] = {}

    def print(self, message: Any) -> None:
        line: dict[str, Any] = {
            "partition": message.partition(),
            "offset": message.offset(),
            "timestamp": message.timestamp()[1],
        }
        errors = []
        for side, data in (("key", message.key()), ("value", message.value())):
            try:
                line[side] = self._serdes[side].deserialize(message.topic(), data)
            except Exception as exc:
                errors.append(f"--{side}-serde {self._names[side]} cannot read the {side}: {exc}")
                line[f"{side}_base64"] = base64.b64encode(data or b"").decode("ascii")
                self.readings.setdefault(side, other_readings(data, message.topic(), self._names[side]))
        headers = message.headers()
        if headers:
            line["headers"] = {k: None if v is None else v.decode("utf-8", "replace") for k, v in headers}
        if errors:
            line["error"] = "; ".join(errors)
            self.unreadable += 1
        self.per_partition[message.partition()] += 1
        self._out.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")


def other_readings(data: bytes | None, topic: str, failed: str) -> dict[str, Any]:
    """What each serde of :data:`SERDE_CHOICES` but ``failed`` reads ``data`` as, for those that
    read it (a long count is 8 bytes that also read as a double, and often as a string)."""
    readings: dict[str, Any] = {}
    for name in SERDE_CHOICES:
        if name == failed:
            continue
        try:
            readings[name] = named_serde(name).deserialize(topic, data)
        except Exception:
            continue
    return readings


def consume(
    consumer: Any,
    topic: str,
    partitions: int,
    printer: RecordPrinter,
    *,
    follow: bool,
    max_records: int | None,
) -> None:
    """Assign every partition from its start; print until each has reached its end once (not with
    ``follow``) or ``max_records`` were printed."""
    consumer.assign([clients.TopicPartition(topic, p, clients.OFFSET_BEGINNING) for p in range(partitions)])
    at_end: set[int] = set()
    printed = 0
    while (follow or len(at_end) < partitions) and (max_records is None or printed < max_records):
        message = consumer.poll(POLL_S)
        if message is None:
            continue
        error = message.error()
        if error is not None:
            if error.code() == clients.PARTITION_EOF:
                at_end.add(message.partition())
                continue
            raise ConsumeError(f"reading {topic} failed: {error.name()}: {error.str()}")
        printer.print(message)
        printed += 1


def run(args: argparse.Namespace) -> int:
    servers = bootstrap_servers(args)
    admin = clients.create_admin(servers)
    partitions = clients.partition_counts(admin, [args.topic]).get(args.topic)
    if partitions is None:
        raise ConsumeError(f"topic {args.topic} does not exist on {servers}")
    if not args.read_uncommitted and identify_broker(admin, bootstrap_servers=servers).is_tansu:
        print(TANSU_NOTE, file=sys.stderr)
    consumer = clients.create_consumer(
        servers,
        f"streams-runtime-consume-{uuid.uuid4()}",  # librdkafka needs one; never joined or committed
        CONSUMER_OVERRIDES,
        read_committed=not args.read_uncommitted,
    )
    printer = RecordPrinter(args.key_serde, args.value_serde, sys.stdout)
    try:
        consume(consumer, args.topic, partitions, printer, follow=args.follow, max_records=args.max_records)
    except KeyboardInterrupt:
        pass
    finally:
        consumer.close()
        sys.stdout.flush()
    counts = ", ".join(f"partition {p}: {printer.per_partition[p]}" for p in range(partitions))
    print(
        f"read {sum(printer.per_partition.values())} record(s) from {args.topic} ({counts})", file=sys.stderr
    )
    if printer.unreadable:
        hints = "".join(
            f"; the first unreadable {side} reads as "
            + ", ".join(f"--{side}-serde {name}: {value!r}" for name, value in readings.items())
            for side, readings in printer.readings.items()
            if readings
        )
        raise ConsumeError(
            f"{printer.unreadable} record(s) of {args.topic} could not be read with --key-serde "
            f'{args.key_serde} --value-serde {args.value_serde}; they are printed with "error" and '
            f"their bytes in base64{hints}"
        )
    return 0


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return int(text)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "consume", help="print a topic's records as JSON lines (committed ones only by default)"
    )
    parser.add_argument("topic", metavar="TOPIC", help="the topic to read (every partition, from its start)")
    parser.add_argument(
        "--follow",
        action="store_true",
        help="keep reading new records until Ctrl-C (default: stop at the end)",
    )
    parser.add_argument("--max-records", type=_positive, default=None, help="stop after this many records")
    parser.add_argument(
        "--read-uncommitted",
        action="store_true",
        help="show records of aborted and open transactions too (default: committed only)",
    )
    add_serde_options(parser, "are read")
    add_bootstrap_option(parser)
    parser.set_defaults(func=run)
