"""TopologyDescription: the static shape of a topology, printed exactly as Kafka Streams prints it.

Within a sub-topology nodes are ordered by the size of the sub-graph they root (largest first),
then by name; sets of topics and stores print in Java ``HashSet`` order. Topic names are printed
as declared (internal topics without the ``<application_id>-`` prefix, as Kafka Streams does)
unless the topology was built knowing its application id.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from streams_runtime.processor.internals.java_order import java_hash_map_order, java_set_string


@dataclass(eq=False)
class Node:
    """One node of a description: a Source, Processor or Sink."""

    kind: str  # "Source" | "Processor" | "Sink"
    name: str
    topics: list[str] = field(default_factory=list)  # Source: its topics; Sink: [topic] or []
    pattern: str | None = None
    stores: list[str] = field(default_factory=list)
    extractor: str | None = None  # Sink with a topic chooser
    predecessors: list[Node] = field(default_factory=list)
    successors: list[Node] = field(default_factory=list)
    size: int = 1

    @property
    def topic(self) -> str | None:
        return self.topics[0] if self.kind == "Sink" and self.topics else None

    def __str__(self) -> str:
        succ = _names(self.successors)
        pred = _names(self.predecessors)
        if self.kind == "Source":
            shown = self.pattern if self.pattern is not None else java_set_string(self.topics)
            return f"Source: {self.name} (topics: {shown})\n      --> {succ}"
        if self.kind == "Processor":
            return (
                f"Processor: {self.name} (stores: {java_set_string(self.stores)})\n"
                f"      --> {succ}\n      <-- {pred}"
            )
        if self.extractor is not None:
            return f"Sink: {self.name} (extractor class: {self.extractor})\n      <-- {pred}"
        return f"Sink: {self.name} (topic: {self.topic})\n      <-- {pred}"


def _order_key(node: Node) -> tuple[int, str]:
    return (-node.size, node.name)


def _names(nodes: list[Node]) -> str:
    """Predecessors/successors as Kafka prints them: in the order ``link`` kept them."""
    if not nodes:
        return "none"
    return ", ".join(n.name for n in nodes)


@dataclass
class Subtopology:
    id: int
    nodes: list[Node]

    def ordered_nodes(self) -> list[Node]:
        return sorted(self.nodes, key=_order_key)

    def __str__(self) -> str:
        body = "".join(f"    {node}\n" for node in self.ordered_nodes())
        return f"Sub-topology: {self.id}\n{body}\n"


@dataclass
class GlobalStore:
    id: int
    source: Node
    processor: Node

    def __str__(self) -> str:
        return (
            f"Sub-topology: {self.id} for global store (will not generate tasks)\n"
            f"    {self.source}\n    {self.processor}\n"
        )


@dataclass
class TopologyDescription:
    """Sub-topologies and global stores; ``str()`` gives Kafka Streams' text."""

    subtopologies: list[Subtopology] = field(default_factory=list)
    global_stores: list[GlobalStore] = field(default_factory=list)

    def __str__(self) -> str:
        parts = ["Topologies:\n "]
        subs = sorted(self.subtopologies, key=lambda s: s.id)
        globs = sorted(self.global_stores, key=lambda g: g.id)
        expected = 0
        while subs and globs:
            if subs[0].id == expected:
                parts.append("  " + str(subs.pop(0)))
            else:
                parts.append("  " + str(globs.pop(0)))
            expected += 1
        parts.extend("  " + str(s) for s in subs)
        parts.extend("  " + str(g) for g in globs)
        return "".join(parts)


def link(nodes: dict[str, Node], edges: list[tuple[str, str]]) -> None:
    """Connect parent -> child edges as Kafka Streams' describe does, sizes included.

    Kafka keeps each node's predecessors and successors in a TreeSet ordered by sub-graph size
    (largest first), then name, and grows the sizes while it links: nodes are visited in Java
    ``HashMap`` order of their names, each linked to its parents, and every ancestor's size grows
    by the child's size. A set is ordered by the sizes at the time of each insertion, so a node
    whose sub-graph grew later can print before a larger sibling; this reproduces that order.
    """
    parents_of: dict[str, list[str]] = {}
    for parent, child in edges:
        parents_of.setdefault(child, []).append(parent)
    for node in nodes.values():
        node.size = 1
        node.successors = []
        node.predecessors = []

    def insert(ordered: list[Node], node: Node) -> None:
        key = _order_key(node)
        for i, existing in enumerate(ordered):
            if key < _order_key(existing):
                ordered.insert(i, node)
                return
        ordered.append(node)

    def grow(node: Node, delta: int, seen: frozenset[str] = frozenset()) -> None:
        node.size += delta
        for predecessor in node.predecessors:
            if predecessor.name not in seen:
                grow(predecessor, delta, seen | {node.name})

    for name in java_hash_map_order(list(nodes)):
        linked = nodes[name]
        for parent_name in parents_of.get(name, ()):
            above = nodes[parent_name]
            insert(linked.predecessors, above)
            insert(above.successors, linked)
            grow(above, linked.size)
