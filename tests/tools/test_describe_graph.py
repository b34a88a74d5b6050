"""``streams-runtime describe``: the SVG picture has exactly describe()'s nodes, topics and stores."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from streams_runtime.cli import main
from streams_runtime.examples import click_regions, word_count
from streams_runtime.kstream import Consumed, Materialized, StreamsBuilder
from streams_runtime.processor.topology_graph import TopologyGraph, render
from streams_runtime.serdes import Serdes

SVG = "{http://www.w3.org/2000/svg}"
APPS = {
    "streams_runtime.examples.word_count:app": word_count.app,
    "streams_runtime.examples.click_regions:app": click_regions.app,
}


def _svg_nodes(svg: str) -> dict[str, set[str]]:
    root = ET.fromstring(svg)  # raises on anything that is not well-formed XML
    assert root.tag == f"{SVG}svg"
    by_kind: dict[str, set[str]] = {}
    for group in root.iter(f"{SVG}g"):
        if group.get("class") == "node":
            kind, _, name = group.find(f"{SVG}title").text.partition("/")
            assert name not in by_kind.get(kind, set()), f"{kind} {name} drawn twice"
            by_kind.setdefault(kind, set()).add(name)
    return by_kind


def _described(topology) -> tuple[set[str], set[str], set[str]]:
    description = topology.describe()
    nodes = [n for s in description.subtopologies for n in s.nodes]
    names = {n.name for n in nodes}
    topics = {t for n in nodes for t in n.topics}
    stores = {s for n in nodes for s in n.stores}
    return names, topics, stores


@pytest.mark.parametrize("spec", sorted(APPS))
def test_should_draw_exactly_the_described_nodes_as_svg(spec, capsys):
    assert main(["describe", "--app", spec, "--format", "svg"]) == 0
    svg = capsys.readouterr().out
    topology, config = APPS[spec]()
    names, topics, stores = _described(topology)
    drawn = _svg_nodes(svg)
    assert drawn["node"] == names
    assert drawn.get("topic", set()) | drawn.get("repartition", set()) == topics
    assert drawn["repartition"] == {t for t in topics if t.endswith("-repartition")}
    assert drawn["store"] == stores
    app_id = config["application_id"]
    assert drawn["changelog"] == {f"{app_id}-{s}-changelog" for s in stores}
    assert set(drawn) == {"node", "topic", "repartition", "store", "changelog"}


def test_should_group_sub_topologies_and_link_the_repartition_seam():
    topology, _ = click_regions.app()
    graph = TopologyGraph.of(topology)
    assert [g.label for g in graph.groups] == ["Sub-topology 0", "Sub-topology 1"]
    seam = "repartition/click-regions-clicks-per-region-repartition"
    assert ("node/clicks-per-region-repartition-sink", seam, "bold") in graph.edges
    assert (seam, "node/clicks-per-region-repartition-source", "bold") in graph.edges
    join_store = [n.id for n in graph.groups[0].nodes if n.kind == "store"]
    assert join_store == ["store/user-regions-store"]  # the join's table lives with the stream


def test_should_give_dot_and_mermaid_text_with_every_node():
    topology, _ = word_count.app()
    names, _, _ = _described(topology)
    dot = render(topology, "dot")
    mermaid = render(topology, "mermaid")
    assert dot.startswith("digraph topology {") and "subgraph cluster_1" in dot
    assert mermaid.startswith("flowchart LR\n")
    for name in names:
        assert f'"node/{name}"' in dot
        assert f'"{name}"' in mermaid
    assert render(topology, "text") == str(topology.describe())


def test_should_refuse_an_unknown_format_and_a_bad_app(capsys):
    with pytest.raises(ValueError, match="format must be one of text, svg, dot, mermaid"):
        render(word_count.app()[0], "png")
    with pytest.raises(SystemExit):
        main(["describe", "--app", "streams_runtime.examples.word_count:app", "--format", "png"])
    assert main(["describe", "--app", "streams_runtime.examples.nope:app"]) == 1
    assert "cannot import module 'streams_runtime.examples.nope'" in capsys.readouterr().err


def test_should_stop_quietly_when_the_reader_of_its_output_goes_away():
    import os
    import subprocess
    import sys

    # `streams-runtime describe ... | head -0`: the reader is gone before the first write
    command = [
        sys.executable,
        "-m",
        "streams_runtime.cli",
        "describe",
        "--app",
        "streams_runtime.examples.word_count:app",
    ]
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        described = subprocess.run(command, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write_end)
    assert described.returncode == 0
    assert "Traceback" not in described.stderr and "BrokenPipe" not in described.stderr, described.stderr


def four_subtopologies():
    """orders -> count per item -> count per count -> count per count -> order-figures: four
    sub-topologies joined by three repartition topics (the console's larger picture)."""
    builder = StreamsBuilder()
    strings = Consumed.with_(Serdes.String(), Serdes.String())
    counts = builder.stream("orders", strings).group_by(lambda k, v: v).count(Materialized.as_("per-item"))
    for stage in ("per-count", "per-count-again"):
        counts = counts.to_stream().group_by(lambda k, v: str(v)).count(Materialized.as_(stage))
    counts.to_stream().to("order-figures")
    config = {"application_id": "four-stages", "default_key_serde": "string", "default_value_serde": "string"}
    return builder.build(config)


def test_should_cut_one_panel_per_sub_topology_with_its_topics_and_changelogs():
    graph = TopologyGraph.of(four_subtopologies())
    panels = graph.panels()
    assert [label for label, _ in panels] == [f"Sub-topology {i}" for i in range(4)]
    drawn = [_svg_nodes(panel.to_svg()) for _, panel in panels]
    assert [d.get("store", set()) for d in drawn] == [set(), {"per-item"}, {"per-count"}, {"per-count-again"}]
    assert drawn[0]["topic"] == {"orders"} and drawn[3]["topic"] == {"order-figures"}
    seam = "four-stages-per-item-repartition"
    assert seam in drawn[0]["repartition"] and seam in drawn[1]["repartition"]  # both sides of it
    assert seam not in drawn[2]["repartition"]
    assert drawn[1]["changelog"] == {"four-stages-per-item-changelog"}
    every_node = {n.id for g in graph.groups for n in g.nodes if n.kind != "store"}
    assert set().union(*({f"node/{n}" for n in d["node"]} for d in drawn)) == every_node
    assert all(not (a["node"] & b["node"]) for i, a in enumerate(drawn) for b in drawn[i + 1 :])
