"""How much of ``streams_runtime``'s signatures say nothing: parameters and returns typed ``Any``.

Counts, over every function and method of the package (``self``/``cls`` of methods excepted), the
parameters annotated exactly ``Any`` or not annotated at all, and the same for return types, and
prints the share. Fails (exit 1) when

* an explicit ``Any`` parameter or return appears in a function not on the allow-list ``BOUNDARIES``
  below: the documented places where the value really is untyped (a third-party object without
  types, a JSON value or a user's callback argument);
* the share of ``Any`` parameters exceeds ``MAX_SHARE``;
* an entry of ``BOUNDARIES`` or of ``UNTYPED`` matches no ``Any`` any more (remove it).

``UNTYPED`` (``scripts/any_share_untyped.txt``) names, one ``module:function name`` a line, the
explicit ``Any`` not yet replaced by a real type and not at a boundary: the list may only shrink
(a new ``Any`` is refused; an entry whose ``Any`` is gone must be deleted: ``--prune-untyped``
deletes those, and only those). ``--report-only`` prints what the gate refuses and exits 0.

Run:  .venv/bin/python scripts/any_share.py [--list] [--report-only] [--prune-untyped]
      (``--list`` names every ``Any`` it counts)
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "streams_runtime"

# the most the share of Any (or unannotated) parameters may be
MAX_SHARE = 0.10

# Where ``Any`` is the honest type: "module:qualified.function name" patterns (fnmatch; ``name`` is a
# parameter's or "return"), one reason each. An entry that matches no ``Any`` any more fails the run.
BOUNDARIES: dict[str, str] = {
    # the user's data: records' keys and values, JSON, what serdes turn into bytes and back
    "* key": "a record's key: the user's object (the DSL is not generic in its key type)",
    "* value": "a record's value: the user's object (the DSL is not generic in its value type)",
    "*:*erialize* data": "what a serde turns into bytes: the user's object",
    "*:*erialize* return": "what a serde makes of bytes: the user's object",
    "*:* from_key": "a range's lower bound: the user's key",
    "*:* to_key": "a range's upper bound: the user's key",
    "*:* prefix": "a prefix scan's prefix: the user's key (or part of one)",
    "*:* old": "a table's old value: the user's object",
    "*:* new": "a table's new value: the user's object",
    "*:* old_value": "a table's old value: the user's object",
    "*:* new_value": "a table's new value: the user's object",
    # what a store read returns: the user's value, or an iterator over the user's keys and values (the
    # store layers wrap one another by composition and are not generic in the value type)
    "streams_runtime.state.*:*.get return": "a store read: the user's value",
    "streams_runtime.state.*:*.put_if_absent return": "a store read: the user's previous value",
    "streams_runtime.state.*:*.delete return": "a store read: the user's deleted value",
    "streams_runtime.state.*:*.*range return": "a store read: an iterator of the user's entries",
    "streams_runtime.state.*:*.prefix_scan return": "a store read: an iterator of the user's entries",
    "streams_runtime.state.*:*.*all return": "a store read: an iterator of the user's entries",
    "streams_runtime.state.*:*.*fetch* return": "a window/session store read: a value or an iterator",
    "streams_runtime.state.*:*.*find_sessions return": "a session store read: an iterator of sessions",
    "streams_runtime.state.*:*.peek_next_key return": "an iterator's next key: the user's key",
    "streams_runtime.testing.*stores:*.* return": "the test driver's store facades: a store read",
    "streams_runtime.query.views:*.* return": "an interactive query's answer: a value or an iterator",
    "*:*.__getattr__ return": "delegation: the attribute of the wrapped object (or the lazily imported name)",
    "*:__getattr__ return": "a module's lazily imported public name",
    "streams_runtime.config:*Like.* *": (
        "the user's callback (timestamp extractor, RocksDB config setter) as the config validator "
        "checks it: a Protocol that any parameter types of the user's own class match"
    ),
    "*:*.get_state_store return": "a store by name: its class is the one registered under that name",
    "*:*get_*store return": "a store by name: its class is the one registered under that name",
    "streams_runtime.kafka_streams:KafkaStreams.*store return": "a store by name: the registered one",
    "streams_runtime.query.interactive:*.store return": "a store by name: its class is the registered one",
    "streams_runtime.kstream.internals.*:*.get return": "a value getter: the user's value",
    "streams_runtime.kstream.internals.*:*.old_from_store return": "the user's old value",
    "streams_runtime.server.app:_query_router.* return": "a route's answer: FastAPI's response model",
    "streams_runtime.server.app:_key_query return": "a route's answer: JSON or a forwarded response",
    "streams_runtime.server.app:_read_* return": "a read run on a store of any kind (key-value, window, ...)",
    "streams_runtime.server.app:_read_* store": "a store of the kind the route reads",
    "streams_runtime.server.app:_view return": "the interactive-query view of a store of any kind",
    "streams_runtime.server.app:_scan_body view": "the interactive-query view of a store of any kind",
    "streams_runtime.server.keys:parse_key return": "a key parsed from the URL: the user's key",
    "streams_runtime.server.keys:to_json return": "a JSON value of the HTTP API",
    "*windowed_by return": "the windowed stream's class follows the windows given (Kafka's overloads)",
    "streams_runtime.server.*:* streams": "the KafkaStreams served: a layer above the server (import layers)",
    "*:* *kwargs": "keyword arguments passed on unchanged to another constructor or function",
    "*:* admin": "a confluent_kafka AdminClient (no stubs)",
    # third-party objects without types
    "*:*._on_delivery *": "confluent_kafka's delivery callback: a Message and a KafkaError (no stubs)",
    "*:* msg": "a confluent_kafka Message (no stubs)",
    "*:* message": "a confluent_kafka Message (no stubs)",
    "*:* err": "a confluent_kafka KafkaError (no stubs)",
    "*:* consumer": "a confluent_kafka Consumer or the in-memory one (no common stubs)",
    "*:* producer": "a confluent_kafka Producer or the in-memory one (no common stubs)",
    "streams_runtime.server.*:* app": "an ASGI application (starlette's own types are loose)",
    "streams_runtime.server.*:* receive": "an ASGI receive callable",
    "streams_runtime.server.*:* send": "an ASGI send callable",
    "streams_runtime.state.internals.rocksdb_store:* *": "rocksdict's objects (no stubs)",
    # overloaded argument forms (Kafka's Java overloads), dispatched on their number and types
    "streams_runtime.*:*.*fetch args": "a window/session store's fetch forms: (key, time), (key, from, to)",
    "streams_runtime.kstream.*:*join *args": "KStream/KTable.join's forms: (joiner, windows[, opts]), ...",
    # configuration values: what the user gives (a number, a string, a class or a callable)
    "streams_runtime.config:* default": "a configuration key's default: any value its validator accepts",
    "streams_runtime.config:* overrides": "configuration overrides as the user gives them",
    "streams_runtime.config:StreamsConfig.__getitem__ return": (
        "a configuration value read by name: the key's own type (config.<key> reads it typed)"
    ),
    "streams_runtime.server.admin:_streams return": (
        "the KafkaStreams served: a layer above the server (import layers)"
    ),
    "streams_runtime.testing.topics:TestInputTopic.pipe_input args": (
        "pipe_input's forms: (value), (key, value), (key, value, timestamp[, headers]) (Kafka's overloads)"
    ),
    "streams_runtime.testing.topics:TestOutputTopic.read_value return": "a record's value: the user's object",
    "streams_runtime.worker:import_attr return": "what module:attr names: the user's app or runtime class",
    "streams_runtime.demo.airflow_standalone:*.request return": "Airflow's REST API answer: decoded JSON",
    "streams_runtime.kstream.ktable:KTable.to_stream return": (
        "a KStream, made with the class the StreamsBuilder hands in: a layer above KTable (import layers)"
    ),
    "streams_runtime.kstream.ktable:KTable.group_by return": (
        "a KGroupedTable, made with the class the StreamsBuilder gives: a layer above KTable (import layers)"
    ),
    "streams_runtime.state.internals.rocksdb_segments:RocksDBSegments._segment return": (
        "a rocksdict column family (no stubs)"
    ),
}


UNTYPED_FILE = Path(__file__).with_name("any_share_untyped.txt")


def _untyped(path: Path = UNTYPED_FILE) -> frozenset[str]:
    """The entries of the not-yet-typed list: ``module:function name`` lines, ``#`` comments."""
    if not path.exists():
        return frozenset()
    lines = (line.strip() for line in path.read_text().splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))


UNTYPED = _untyped()


def _is_any(annotation: ast.expr | None) -> bool:
    """``Any``, ``typing.Any`` or ``"Any"``: exactly, not inside another type."""
    if isinstance(annotation, ast.Name):
        return annotation.id == "Any"
    if isinstance(annotation, ast.Attribute):
        return annotation.attr == "Any" and isinstance(annotation.value, ast.Name)
    if isinstance(annotation, ast.Constant):
        return annotation.value == "Any"
    return False


class _Counter(ast.NodeVisitor):
    def __init__(self, module: str) -> None:
        self.module = module
        self.scope: list[str] = []
        self.in_class: list[bool] = []
        self.params = 0
        self.returns = 0
        # (where, name, "Any" | "unannotated"); name "return" for a return type
        self.vague: list[tuple[str, str, str]] = []

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.in_class.append(True)
        self.generic_visit(node)
        self.in_class.pop()
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.scope.append(node.name)
        where = f"{self.module}:{'.'.join(self.scope)}"
        arguments = node.args
        positional = [*arguments.posonlyargs, *arguments.args]
        decorators = {d.id for d in node.decorator_list if isinstance(d, ast.Name)}
        if self.in_class and self.in_class[-1] and positional and "staticmethod" not in decorators:
            positional = positional[1:]  # self or cls
        every = [*positional, *arguments.kwonlyargs]
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        for argument in every:
            self.params += 1
            if argument.annotation is None:
                self.vague.append((where, argument.arg, "unannotated"))
            elif _is_any(argument.annotation):
                self.vague.append((where, argument.arg, "Any"))
        if node.name != "__init__":
            self.returns += 1
            if node.returns is None:
                self.vague.append((where, "return", "unannotated"))
            elif _is_any(node.returns):
                self.vague.append((where, "return", "Any"))
        self.in_class.append(False)
        self.generic_visit(node)
        self.in_class.pop()
        self.scope.pop()

    visit_AsyncFunctionDef = visit_FunctionDef


def count(package: Path = PACKAGE) -> _Counter:
    """Every function of ``package``, counted into one ``_Counter``."""
    total = _Counter("")
    for path in sorted(package.rglob("*.py")):
        module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        counter = _Counter(module)
        counter.visit(ast.parse(path.read_text(), str(path)))
        total.params += counter.params
        total.returns += counter.returns
        total.vague += counter.vague
    return total


def _boundary(where: str, boundaries: dict[str, str] = BOUNDARIES) -> str | None:
    for pattern in boundaries:
        if fnmatch.fnmatchcase(where, pattern):
            return pattern
    return None


def check(
    package: Path = PACKAGE,
    boundaries: dict[str, str] = BOUNDARIES,
    max_share: float = MAX_SHARE,
    untyped: frozenset[str] = UNTYPED,
    list_all: bool = False,
    list_outside: bool = True,
) -> tuple[bool, list[str]]:
    """The gate over ``package``: whether it fails, and the lines to print (the shares first)."""
    counted = count(package)
    lines: list[str] = []
    vague_params = [v for v in counted.vague if v[1] != "return"]
    vague_returns = [v for v in counted.vague if v[1] == "return"]
    share = len(vague_params) / counted.params if counted.params else 0.0
    explicit = sum(1 for v in vague_params if v[2] == "Any")
    lines.append(
        f"Any parameters: {len(vague_params)} of {counted.params} ({share:.1%}; "
        f"{explicit} typed Any, {len(vague_params) - explicit} unannotated)"
    )
    returns_share = len(vague_returns) / counted.returns if counted.returns else 0.0
    lines.append(f"Any returns: {len(vague_returns)} of {counted.returns} ({returns_share:.1%})")
    if list_all:
        lines += [f"  {where} {name}: {kind}" for where, name, kind in counted.vague]
    failed = False
    used = set()
    listed = set()
    outside = []
    for where, name, kind in counted.vague:
        if kind != "Any":
            continue
        pattern = _boundary(f"{where} {name}", boundaries)
        if pattern is not None:
            used.add(pattern)
        elif f"{where} {name}" in untyped:
            listed.add(f"{where} {name}")
        else:
            outside.append(f"{where} {name}")
    if outside:
        failed = True
        lines.append(
            f"{len(outside)} explicit Any outside the allow-list (scripts/any_share.py BOUNDARIES) "
            "and not on the not-yet-typed list (scripts/any_share_untyped.txt)"
        )
        if list_all or list_outside:
            lines += [f"  {item}" for item in outside]
    stale = sorted(set(boundaries) - used)
    if stale:
        failed = True
        lines.append("allow-list entries that match no Any any more (remove them): " + ", ".join(stale))
    if untyped:
        lines.append(f"{len(listed)} explicit Any not yet typed (scripts/any_share_untyped.txt)")
    typed_now = sorted(untyped - listed)
    if typed_now:
        failed = True
        lines.append(
            "not-yet-typed entries whose Any is gone (delete them from scripts/any_share_untyped.txt): "
            + ", ".join(typed_now)
        )
    if share > max_share:
        failed = True
        lines.append(f"the share of Any parameters {share:.1%} exceeds {max_share:.0%}")
    return failed, lines


def prune_untyped(package: Path = PACKAGE, path: Path = UNTYPED_FILE) -> list[str]:
    """Delete from the not-yet-typed list ``path`` the entries that match no ``Any`` of ``package``
    any more (never adds one); returns the deleted entries."""
    counted = count(package)
    present = {f"{where} {name}" for where, name, kind in counted.vague if kind == "Any"}
    lines = path.read_text().splitlines()
    gone = [line.strip() for line in lines if line.strip() in _untyped(path) and line.strip() not in present]
    kept = [line for line in lines if line.strip() not in gone]
    path.write_text("\n".join(kept) + "\n")
    return gone


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--list", action="store_true", help="name every Any and unannotated one")
    parser.add_argument("--report-only", action="store_true", help="print what the gate refuses, exit 0")
    parser.add_argument(
        "--prune-untyped", action="store_true", help=f"delete the typed entries of {UNTYPED_FILE.name} first"
    )
    args = parser.parse_args()
    untyped = UNTYPED
    if args.prune_untyped:
        for entry in prune_untyped():
            print(f"deleted from {UNTYPED_FILE.name}: {entry}")
        untyped = _untyped()
    failed, lines = check(untyped=untyped, list_all=args.list, list_outside=not args.report_only)
    print("\n".join(lines))
    return 1 if failed and not args.report_only else 0


if __name__ == "__main__":
    sys.exit(main())
