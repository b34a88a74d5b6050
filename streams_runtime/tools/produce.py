"""``streams-runtime produce``: write JSON lines to a topic, placed where Kafka Streams looks for them.

    streams-runtime produce TOPIC [--file PATH | -] [--key-serde NAME] [--value-serde NAME]

**Input.** One JSON object per line, UTF-8 (standard input unless ``--file PATH``; ``-`` is
standard input too)::

    {"key": "user-1", "value": {"amount": 12.5}}
    {"key": "user-2", "value": {"amount": 3}, "timestamp": 1767225600000, "headers": {"source": "cli"}}
    {"key": "user-1", "value": null}

``value`` is required (``null`` writes a tombstone); ``key`` may be left out or ``null`` (a
record without a key); ``timestamp`` (milliseconds since the epoch, at least 1; default: the
producer's clock) and ``headers`` (an object whose values are strings or ``null``) are optional.
Any other field is an error, so a misspelt one is not silently ignored. Blank lines are skipped;
line numbers count every line of the input.

**Serdes.** Keys and values become bytes through the library's serdes, named as in a config's
``default_key_serde``: ``string`` (a JSON string, as UTF-8), ``json`` (any JSON value, as
compact UTF-8 JSON: ``Serdes.Json``), ``long`` and ``integer`` (a JSON integer, 8 or 4 bytes
big-endian), ``double`` (a JSON number, 8 bytes). ``--key-serde`` defaults to ``string``,
``--value-serde`` to ``json``: what the demo application reads.

**All or nothing on the input.** Steps:

1. the topic must exist (its partition count is read);
2. every line is read, parsed and serialised before the first record is sent. If a line is
   malformed (not UTF-8, not JSON, not an object, a missing or unknown field, a key or value its
   serde refuses), the command names every such line by number (the first 20) and sends nothing
   (exit 1): fix the input and run again, and each record is written once;
3. the records are sent in input order by an idempotent producer (the broker writes each record
   once and in order per partition, even when the producer retries), which is flushed;
4. the records delivered per partition are printed. Records that failed are named by line with
   the reason (exit 1); every other line was delivered once. A record refused before it left the
   process (larger than the producer's ``message.max.bytes``) was not written; one that timed
   out waiting for the broker's answer may have been.

**Partitioning.** Kafka's default partitioner: murmur2 of the key bytes modulo the partition
count (librdkafka's ``murmur2_random``), where Java clients and Kafka Streams place a key.
librdkafka's own default (``consistent_random``) hashes with CRC32 and would put keys where no
Kafka Streams application looks for them. Records without a key are spread over the partitions.

Exit codes: 0 every record delivered, 1 a clear error was printed, 2 bad usage.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NoReturn

from streams_runtime.config import named_serde
from streams_runtime.errors import SerializationError, StreamsError
from streams_runtime.kafka import clients
from streams_runtime.serdes import Serde, serialize_or_raise
from streams_runtime.tools.cluster import add_bootstrap_option, bootstrap_servers, broker_reason

#: the serdes a JSON line can feed (``bytes`` has no JSON spelling)
SERDE_CHOICES = ("string", "json", "long", "integer", "double")
FIELDS = ("key", "value", "timestamp", "headers")
#: malformed lines named in the error (the count names the rest)
SHOWN_PROBLEMS = 20
#: the producer's own settings, over the shared profile
PRODUCER_OVERRIDES = {
    "client.id": "streams-runtime-produce",
    "partitioner": "murmur2_random",  # Kafka's DefaultPartitioner for keyed records
    "enable.idempotence": True,  # once each, in order per partition, through retries
}


def add_serde_options(parser: argparse.ArgumentParser, how: str) -> None:
    """``--key-serde`` (default string) and ``--value-serde`` (default json); ``how`` the keys and
    values are handled by the tool (the options' help: "how keys <how>")."""
    for side, default in (("key", "string"), ("value", "json")):
        parser.add_argument(
            f"--{side}-serde",
            choices=SERDE_CHOICES,
            default=default,
            help=f"how {side}s {how} (default {default})",
        )


class ProduceError(StreamsError):
    """The topic is missing, the input is malformed (nothing was sent), or records failed."""


class MalformedLine(ValueError):
    """One input line that cannot become a record, with the reason."""


@dataclass(frozen=True)
class OutgoingRecord:
    """One input line as the bytes it is sent as."""

    line: int
    key: bytes | None
    value: bytes | None
    timestamp: int | None = None
    headers: list[tuple[str, bytes | None]] | None = None


def _json_kind(data: object) -> str:
    kinds = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return kinds.get(type(data), "null" if data is None else type(data).__name__)


def _no_constants(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def _headers(headers: object) -> list[tuple[str, bytes | None]] | None:
    if headers is None:
        return None
    if not isinstance(headers, dict):
        raise MalformedLine(f"headers must be an object of strings, got {_json_kind(headers)}")
    out: list[tuple[str, bytes | None]] = []
    for name, value in headers.items():
        if value is not None and not isinstance(value, str):
            raise MalformedLine(f"header {name!r} must be a string or null, got {json.dumps(value)}")
        out.append((name, None if value is None else value.encode("utf-8")))
    return out


@dataclass(frozen=True)
class RecordFormat:
    """How the input lines become records of ``topic``: the key and value serdes, by name."""

    topic: str
    key_serde: str = "string"
    value_serde: str = "json"

    @functools.cached_property
    def _serdes(self) -> tuple[Serde, Serde]:
        return named_serde(self.key_serde), named_serde(self.value_serde)

    def parse(self, text: str, line: int) -> OutgoingRecord:
        """The record of one non-blank input line.

        :raises MalformedLine: naming what is wrong with it (the caller adds the line number).
        """
        try:
            fields = json.loads(text.rstrip(), parse_constant=_no_constants)
        except ValueError as exc:
            where = f" (column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            raise MalformedLine(f"invalid JSON: {reason}{where}") from None
        if not isinstance(fields, dict):
            raise MalformedLine(f"expected a JSON object with {', '.join(FIELDS)}, got {_json_kind(fields)}")
        unknown = sorted(set(fields) - set(FIELDS))
        if unknown:
            raise MalformedLine(f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(FIELDS)}")
        if "value" not in fields:
            raise MalformedLine('no "value" (write "value": null for a tombstone)')
        timestamp = fields.get("timestamp")
        if timestamp is not None and (type(timestamp) is not int or timestamp < 1):
            raise MalformedLine(
                f"timestamp must be milliseconds since the epoch (>= 1), got {json.dumps(timestamp)}"
            )
        key_serde, value_serde = self._serdes
        return OutgoingRecord(
            line,
            self._serialized(key_serde, f"--key-serde {self.key_serde}", "key", fields.get("key")),
            self._serialized(value_serde, f"--value-serde {self.value_serde}", "value", fields["value"]),
            timestamp,
            _headers(fields.get("headers")),
        )

    def read(self, lines: Iterable[bytes]) -> tuple[list[OutgoingRecord], list[str]]:
        """Step 2: every record of the input, and every malformed line as ``line N: reason``."""
        records: list[OutgoingRecord] = []
        problems: list[str] = []
        for number, raw in enumerate(lines, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append(f"line {number}: not UTF-8 ({exc.reason} at byte {exc.start})")
                continue
            if not text.strip():
                continue
            try:
                records.append(self.parse(text, number))
            except MalformedLine as exc:
                problems.append(f"line {number}: {exc}")
        return records, problems

    def _serialized(self, serde: Serde, option: str, side: str, data: object) -> bytes | None:
        try:
            return serialize_or_raise(serde, self.topic, side, data)
        except SerializationError as exc:
            shown = json.dumps(data, ensure_ascii=False)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise MalformedLine(f"{option} cannot serialize the {side} {shown} ({exc.cause})") from None


@dataclass
class DeliveryReport:
    """What step 3 did: records delivered per partition, and the lines that failed, with why."""

    delivered: Counter[int]
    failed: list[tuple[int, str]]

    def on_delivery(self, line: int, error: clients.KafkaError | None, message: Any) -> None:
        if error is None:
            self.delivered[message.partition()] += 1
        else:
            self.failed.append((line, f"{error.name()}: {error.str()}"))


def send(producer: Any, topic: str, records: Iterable[OutgoingRecord]) -> DeliveryReport:
    """Step 3: produce ``records`` in order and flush; every record ends delivered or failed."""
    report = DeliveryReport(Counter(), [])
    for record in records:
        while True:
            try:
                producer.produce(
                    topic,
                    value=record.value,
                    key=record.key,
                    headers=record.headers,
                    timestamp=record.timestamp or 0,  # 0: the producer's clock
                    on_delivery=functools.partial(report.on_delivery, record.line),
                )
                break
            except BufferError:  # the local queue is full: serve delivery reports, then try again
                producer.poll(0.1)
            except clients.KafkaException as exc:  # refused before it left the process
                report.failed.append((record.line, broker_reason(exc)))
                break
        producer.poll(0)
    while producer.flush(1.0) > 0:
        pass
    report.failed.sort()
    return report


@contextmanager
def _input(path: str) -> Iterator[IO[bytes]]:
    if path == "-":
        yield sys.stdin.buffer
        return
    try:
        stream = Path(path).open("rb")
    except OSError as exc:
        raise ProduceError(f"cannot read {path}: {exc.strerror or exc}") from None
    with stream:
        yield stream


def _listed(items: list[str]) -> str:
    shown = "\n  ".join(items[:SHOWN_PROBLEMS])
    more = f"\n  ... and {len(items) - SHOWN_PROBLEMS} more" if len(items) > SHOWN_PROBLEMS else ""
    return f"\n  {shown}{more}"


def run(args: argparse.Namespace) -> int:
    servers = bootstrap_servers(args)
    # Step 1
    partitions = clients.partition_counts(clients.create_admin(servers), [args.topic]).get(args.topic)
    if partitions is None:
        raise ProduceError(
            f"topic {args.topic} does not exist on {servers}; create it first: "
            f"streams-runtime topics create {args.topic} --partitions N"
        )
    # Step 2
    source = "standard input" if args.file == "-" else args.file
    with _input(args.file) as stream:
        records, problems = RecordFormat(args.topic, args.key_serde, args.value_serde).read(stream)
    if problems:
        raise ProduceError(
            f"{len(problems)} malformed line(s) in {source}; nothing was sent to {args.topic}:"
            + _listed(problems)
        )
    # Step 3
    producer = clients.create_producer(servers, PRODUCER_OVERRIDES)
    report = send(producer, args.topic, records)
    # Step 4
    delivered = sum(report.delivered.values())
    print(f"delivered {delivered} of {len(records)} record(s) from {source} to {args.topic}:")
    for partition in range(partitions):
        print(f"  partition {partition}: {report.delivered[partition]}")
    if report.failed:
        raise ProduceError(
            f"{len(report.failed)} of {len(records)} record(s) were not delivered to {args.topic} "
            "(every other line was delivered once):"
            + _listed([f"line {n}: {why}" for n, why in report.failed])
        )
    return 0


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "produce", help="write JSON lines ({key, value, timestamp, headers}) to a topic, murmur2-partitioned"
    )
    parser.add_argument("topic", metavar="TOPIC", help="the topic to write to (it must exist)")
    parser.add_argument(
        "--file", default="-", metavar="PATH", help="JSON lines to send (default -: standard input)"
    )
    add_serde_options(parser, "become bytes")
    add_bootstrap_option(parser)
    parser.set_defaults(func=run)
