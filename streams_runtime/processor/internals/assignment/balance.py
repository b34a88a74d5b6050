"""BalancedPlacer: sticky, capacity-weighted placement of tasks into bins.

Used at both levels of the assignment: tasks over clients (processes) weighted by their thread
counts, and a client's tasks over its consumers (members) weighted by theirs.

Quotas: with ``T`` items and bins of capacities ``c_i`` (sum ``C``), bin ``i`` may hold
``floor(T * c_i / C)`` items and at most one more; exactly ``T - sum(floor)`` bins get the extra
one. That is the tightest balance integers allow ("2 per thread", "4 per thread").

Placement, in two steps:
  1. Sticky: each item goes to the first of its preferred bins (its previous owner, the most
     caught-up holder of its state) that still has room under its quota; first choices of all
     items are served before second choices.
  2. Balance: every other item goes to the bin with room that ranks lowest under the caller's
     rank function (typically: least lag, then lowest load after placement, then fewest items of
     the same sub-topology, then bin id, so results are deterministic).

Invariants: every item is placed exactly once; with no preloaded counts beyond the quotas, every
bin ends within its ``[floor, floor + 1]`` quota; equal inputs give equal outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any, TypeVar

Item = TypeVar("Item", bound=Hashable)


def quotas(capacities: Mapping[str, int], total: int) -> dict[str, tuple[int, bool]]:
    """Per bin: ``(floor share, may take one extra)`` for ``total`` items."""
    capacity = sum(capacities.values())
    result: dict[str, tuple[int, bool]] = {}
    for bin_id, cap in capacities.items():
        exact = Fraction(total * cap, capacity) if capacity else Fraction(0)
        floor = int(exact)
        result[bin_id] = (floor, exact != floor)
    return result


class BalancedPlacer:
    """Tracks counts and quota room for one placement run.

    :param capacities: bin id -> capacity (threads); every capacity must be >= 1.
    :param total: the number of items the quotas are computed for, preloaded ones included.
    :param preloaded: bin id -> items already placed in it before this run (counted in quotas).
    """

    def __init__(
        self, capacities: Mapping[str, int], total: int, preloaded: Mapping[str, int] | None = None
    ) -> None:
        if any(cap < 1 for cap in capacities.values()):
            raise ValueError(f"every capacity must be >= 1, got {dict(capacities)}")
        self.capacities = dict(capacities)
        self.counts = {bin_id: (preloaded or {}).get(bin_id, 0) for bin_id in self.capacities}
        self._quotas = quotas(self.capacities, total)
        floors = sum(floor for floor, _ in self._quotas.values())
        above = sum(max(0, self.counts[b] - self._quotas[b][0]) for b in self.capacities)
        self._extras_left = total - floors - above

    def has_room(self, bin_id: str) -> bool:
        floor, may_exceed = self._quotas[bin_id]
        count = self.counts[bin_id]
        return count < floor or (count == floor and may_exceed and self._extras_left > 0)

    def take(self, bin_id: str) -> None:
        if self.counts[bin_id] >= self._quotas[bin_id][0]:
            self._extras_left -= 1
        self.counts[bin_id] += 1

    def load_after(self, bin_id: str) -> Fraction:
        """The bin's load per unit of capacity if it took one more item."""
        return Fraction(self.counts[bin_id] + 1, self.capacities[bin_id])

    def place(
        self,
        items: Iterable[Item],
        preferred: Callable[[Item], Sequence[str]],
        rank: Callable[[Item, str], tuple[Any, ...]],
        on_take: Callable[[Item, str], None] | None = None,
    ) -> dict[Item, str]:
        """Place ``items`` (in the given order) and return item -> bin.

        ``on_take(item, bin)`` is called after each placement, so ``rank`` can see earlier ones.

        # Step 1: sticky placement on the first preferred bin with room.
        # Step 2: the rest on the lowest-ranked bin with room (any bin when none has room,
        #         which only happens when preloaded counts already exceed the quotas).
        """
        ordered = list(items)
        placement: dict[Item, str] = {}
        # Step 1, by preference tier: every item's first choice before any item's second choice,
        # so a task's previous owner is never crowded out by another task's state holder.
        preferences = {item: list(preferred(item)) for item in ordered}
        for tier in range(max((len(p) for p in preferences.values()), default=0)):
            for item in ordered:
                if item in placement or len(preferences[item]) <= tier:
                    continue
                bin_id = preferences[item][tier]
                if bin_id in self.counts and self.has_room(bin_id):
                    self._record(placement, item, bin_id, on_take)
        # Step 2
        for item in ordered:
            if item in placement:
                continue
            candidates = [b for b in sorted(self.counts) if self.has_room(b)] or sorted(self.counts)
            chosen = min(candidates, key=lambda b, it=item: rank(it, b))  # type: ignore[misc]
            self._record(placement, item, chosen, on_take)
        return placement

    def _record(
        self,
        placement: dict[Item, str],
        item: Item,
        bin_id: str,
        on_take: Callable[[Item, str], None] | None,
    ) -> None:
        self.take(bin_id)
        placement[item] = bin_id
        if on_take is not None:
            on_take(item, bin_id)
