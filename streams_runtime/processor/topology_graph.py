"""TopologyGraph: ``Topology.describe()`` as a picture (SVG through Graphviz), DOT or Mermaid text.

The graph has one node per node of ``describe()`` (sources, processors, sinks), grouped by
sub-topology (global stores get their own group), plus one node per topic and per store:

* ``node/<name>``: a source (house shape), processor (box) or sink (inverted house);
* ``topic/<name>``: a user topic; ``repartition/<name>``: a repartition topic (dashed, orange),
  the seam between two sub-topologies; ``changelog/<name>``: a store's changelog (grey note);
* ``store/<name>``: a state store (cylinder), linked to the processors using it.

Topic names are those of ``describe()`` (internal topics carry ``<application_id>-`` when the
topology knows its application id). SVG is laid out by Graphviz's ``dot`` (Debian package
``graphviz``; no network). This module is the only one importing the ``graphviz`` package.

    graph = TopologyGraph.of(topology)
    graph.to_svg(); graph.to_dot(); graph.to_mermaid()
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import graphviz

from streams_runtime.errors import StreamsError
from streams_runtime.processor.internals.internal_topics import changelog_topic_name

if TYPE_CHECKING:
    from streams_runtime.processor.description import Node
    from streams_runtime.processor.topology import Topology

#: the formats of :func:`render`
FORMATS = ("text", "svg", "dot", "mermaid")

_STYLE: dict[str, dict[str, str]] = {
    "Source": {"shape": "house", "style": "filled", "fillcolor": "#d8ecff"},
    "Processor": {"shape": "box", "style": "rounded,filled", "fillcolor": "#ffffff"},
    "Sink": {"shape": "invhouse", "style": "filled", "fillcolor": "#dff5df"},
    "topic": {"shape": "cds", "style": "filled", "fillcolor": "#f2f2f2"},
    "repartition": {"shape": "cds", "style": "dashed,filled", "fillcolor": "#ffe4c4", "color": "#d2691e"},
    "changelog": {"shape": "note", "style": "filled", "fillcolor": "#e8e8e8", "fontcolor": "#555555"},
    "store": {"shape": "cylinder", "style": "filled", "fillcolor": "#fff6cc"},
}


class GraphvizMissingError(StreamsError):
    """Graphviz's ``dot`` program is not installed."""


@dataclass(frozen=True)
class GraphNode:
    id: str  # "<kind>/<name>", kind in node/topic/repartition/changelog/store
    label: str
    kind: str  # Source/Processor/Sink/topic/repartition/changelog/store


@dataclass
class Group:
    id: str
    label: str
    nodes: list[GraphNode] = field(default_factory=list)


@dataclass
class TopologyGraph:
    """Groups of topology nodes, loose topic nodes and edges (see the module docstring)."""

    groups: list[Group] = field(default_factory=list)
    outside: dict[str, GraphNode] = field(default_factory=dict)  # topics and changelogs
    edges: list[tuple[str, str, str]] = field(default_factory=list)  # (from, to, style)

    @classmethod
    def of(cls, topology: Topology) -> TopologyGraph:
        builder = topology.internal_builder
        app_id = builder.application_id
        repartition = {builder.decorate(t) if app_id else t for t in builder.internal_topics}
        graph = cls()
        description = topology.describe()
        for sub in sorted(description.subtopologies, key=lambda s: s.id):
            group = Group(f"cluster_{sub.id}", f"Sub-topology {sub.id}")
            graph.groups.append(group)
            for node in sub.ordered_nodes():
                graph._add_node(group, node, repartition)
                for store in node.stores:
                    store_id = f"store/{store}"
                    if store_id not in {n.id for n in group.nodes}:
                        group.nodes.append(GraphNode(store_id, store, "store"))
                        entry = builder.stores.get(store)
                        if entry is not None and entry.logging_enabled:
                            log = changelog_topic_name(app_id, store)
                            graph.outside.setdefault(
                                f"changelog/{log}", GraphNode(f"changelog/{log}", log, "changelog")
                            )
                            graph.edges.append((store_id, f"changelog/{log}", "dotted"))
                    graph.edges.append((f"node/{node.name}", store_id, "dotted"))
        for glob in sorted(description.global_stores, key=lambda g: g.id):
            group = Group(f"cluster_g{glob.id}", f"Sub-topology {glob.id} (global store)")
            graph.groups.append(group)
            for node in (glob.source, glob.processor):
                graph._add_node(group, node, repartition)
                for store in node.stores:
                    group.nodes.append(GraphNode(f"store/{store}", store, "store"))
                    graph.edges.append((f"node/{node.name}", f"store/{store}", "dotted"))
        return graph

    def _add_node(self, group: Group, node: Node, repartition: set[str]) -> None:
        node_id = f"node/{node.name}"
        group.nodes.append(GraphNode(node_id, node.name, node.kind))
        for succ in sorted(node.successors, key=lambda n: n.name):
            self.edges.append((node_id, f"node/{succ.name}", "solid"))
        for topic in node.topics:
            kind = "repartition" if topic in repartition else "topic"
            topic_id = f"{kind}/{topic}"
            self.outside.setdefault(topic_id, GraphNode(topic_id, topic, kind))
            edge = (topic_id, node_id) if node.kind == "Source" else (node_id, topic_id)
            self.edges.append((*edge, "bold"))
        if node.pattern is not None:
            topic_id = f"topic/{node.pattern}"
            self.outside.setdefault(topic_id, GraphNode(topic_id, f"pattern {node.pattern}", "topic"))
            self.edges.append((topic_id, node_id, "bold"))

    # ------------------------------------------------------------------ nodes
    def nodes(self) -> list[GraphNode]:
        return [n for g in self.groups for n in g.nodes] + list(self.outside.values())

    def panels(self) -> list[tuple[str, TopologyGraph]]:
        """One graph per group (sub-topology): its nodes, the topics and changelogs they touch,
        and the edges between those (a large application drawn one readable panel at a time)."""
        out = []
        for group in self.groups:
            own = {n.id for n in group.nodes}
            edges = [e for e in self.edges if e[0] in own or e[1] in own]
            touched = {e[0] for e in edges} | {e[1] for e in edges}
            outside = {k: v for k, v in self.outside.items() if k in touched}
            kept = own | set(outside)
            out.append(
                (group.label, TopologyGraph([group], outside, [e for e in edges if {e[0], e[1]} <= kept]))
            )
        return out

    # ------------------------------------------------------------------ DOT and SVG
    def digraph(self, rankdir: str = "LR") -> graphviz.Digraph:
        """The graph for Graphviz, laid out left to right (``rankdir="TB"``: top to bottom)."""
        dot = graphviz.Digraph("topology", graph_attr={"rankdir": rankdir, "fontname": "Helvetica"})
        dot.attr("node", fontname="Helvetica", fontsize="10")
        dot.attr("edge", color="#555555")
        for group in self.groups:
            with dot.subgraph(name=group.id) as sub:
                sub.attr(label=group.label, style="rounded,dashed", color="#7a7a7a", fontsize="12")
                for node in group.nodes:
                    sub.node(node.id, node.label, id=node.id, **_STYLE[node.kind])
        for node in self.outside.values():
            dot.node(node.id, node.label, id=node.id, **_STYLE[node.kind])
        for src, dst, style in self.edges:
            dot.edge(src, dst, style=style, arrowhead="none" if style == "dotted" else "normal")
        return dot

    def to_dot(self) -> str:
        source: str = self.digraph().source  # graphviz has no type information
        return source

    def to_svg(self, rankdir: str = "LR") -> str:
        if shutil.which("dot") is None:
            raise GraphvizMissingError(
                "the topology picture needs Graphviz's 'dot' program: install the graphviz package "
                "(apt-get install graphviz); --format dot or mermaid need nothing"
            )
        svg: str = self.digraph(rankdir).pipe(format="svg", encoding="utf-8")
        return svg

    # ------------------------------------------------------------------ Mermaid
    def to_mermaid(self) -> str:
        ids = {n.id: f"n{i}" for i, n in enumerate(self.nodes())}
        lines = ["flowchart LR"]
        for group in self.groups:
            lines.append(f'  subgraph {group.id}["{_mermaid_text(group.label)}"]')
            lines.extend(f"    {ids[n.id]}{_mermaid_shape(n)}" for n in group.nodes)
            lines.append("  end")
        lines.extend(f"  {ids[n.id]}{_mermaid_shape(n)}" for n in self.outside.values())
        arrows = {"solid": "-->", "bold": "==>", "dotted": "-.-"}
        lines.extend(f"  {ids[a]} {arrows[s]} {ids[b]}" for a, b, s in self.edges)
        classes = {
            "repartition": "fill:#ffe4c4,stroke:#d2691e,stroke-dasharray:4",
            "changelog": "fill:#e8e8e8,color:#555",
            "store": "fill:#fff6cc",
        }
        for kind, css in classes.items():
            members = [ids[n.id] for n in self.nodes() if n.kind == kind]
            if members:
                lines.append(f"  classDef {kind} {css}")
                lines.append(f"  class {','.join(members)} {kind}")
        return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    return re.sub(r'["<>]', "_", text)


def _mermaid_shape(node: GraphNode) -> str:
    text = _mermaid_text(node.label)
    if node.kind == "store":
        return f'[("{text}")]'
    if node.kind in ("topic", "repartition", "changelog"):
        return f'>"{text}"]'
    if node.kind == "Processor":
        return f'("{text}")'
    return f'["{text}"]'


def render(topology: Topology, fmt: str = "svg") -> str:
    """``describe()`` in one of :data:`FORMATS` (``text`` is Kafka Streams' text)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if fmt == "text":
        return str(topology.describe())
    graph = TopologyGraph.of(topology)
    return {"svg": graph.to_svg, "dot": graph.to_dot, "mermaid": graph.to_mermaid}[fmt]()
