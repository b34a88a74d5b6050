"""BranchedKStream: the builder returned by ``KStream.split()``.

Each ``branch(predicate, branched)`` adds a branch; a record goes to the FIRST branch whose
predicate matches, else to the default branch if one was declared, else nowhere. Branch
streams are named ``<split name><branch name>`` (or ``<split name><1-based index>``; the
default branch is index 0) and returned in a dict by ``default_branch()`` / ``no_default_branch()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from streams_runtime.kstream.internals import stream_processors as sp
from streams_runtime.kstream.internals.dsl_types import DslStream
from streams_runtime.kstream.internals.functions import check_callable
from streams_runtime.kstream.internals.graph import ProcessorGraphNode
from streams_runtime.kstream.options import Branched


class BranchedKStream:
    """What ``KStream.split()`` returns: add branches, then ``default_branch()`` or
    ``no_default_branch()`` (see the module docstring)."""

    def __init__(self, source: DslStream, splitter_name: str) -> None:
        self._source = source
        internals = source.internals
        self._internal = internals.builder
        self._name = splitter_name
        self._predicates: list[Callable[[Any, Any], bool]] = []
        self._child_names: list[str] = []
        self._outputs: dict[str, Any] = {}
        predicates, child_names = self._predicates, self._child_names
        self._splitter = ProcessorGraphNode(splitter_name, lambda: sp.KStreamBranch(predicates, child_names))
        self._internal.add_graph_node(internals.node, self._splitter)
        self._closed = False

    def branch(
        self, predicate: Callable[[Any, Any], bool], branched: Branched | None = None
    ) -> BranchedKStream:
        check_callable(predicate, "predicate")
        self._check_open()
        self._predicates.append(predicate)
        self._create_branch(branched or Branched(), len(self._predicates))
        return self

    def default_branch(self, branched: Branched | None = None) -> dict[str, Any]:
        self._check_open()
        self._create_branch(branched or Branched(), 0)
        self._closed = True
        return self._outputs

    def no_default_branch(self) -> dict[str, Any]:
        self._check_open()
        self._closed = True
        return self._outputs

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this split() is complete: default_branch()/no_default_branch() was called")

    def _create_branch(self, branched: Branched, index: int) -> None:
        child_name = self._name + (branched.name if branched.name is not None else str(index))
        self._child_names.append(child_name)
        self._internal.new_processor_name(child_name)  # burns an index, as Kafka Streams does
        node = ProcessorGraphNode(child_name, sp.PassThrough)
        self._internal.add_graph_node(self._splitter, node)
        src = self._source
        # a branch is a stream of its source's class (KStream imports this module, not the reverse)
        branch = type(src)(self._internal, node, src.key_serde, src.value_serde, src.repartition_required)
        if branched.function is not None:
            result = branched.function(branch)
            if result is not None:
                self._outputs[child_name] = result
        elif branched.consumer is not None:
            branched.consumer(branch)
        else:
            self._outputs[child_name] = branch
