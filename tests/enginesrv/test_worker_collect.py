"""When a search worker collects its garbage (``worker.Collector``): the young generations
soon after a search, everything only after a long idle time or every ``FULL_COLLECT_EVERY``
young collections, and nothing while a search is asked for."""

from __future__ import annotations

from enginesrv.search.worker import (
    FULL_COLLECT_EVERY,
    IDLE_BEFORE_COLLECT,
    IDLE_BEFORE_FULL_COLLECT,
    Collector,
)


class Idle:
    """A fake ``wait``: the answers to give in turn (True: a search came), the waits asked."""

    def __init__(self, *came: bool) -> None:
        self.came = list(came)
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> bool:
        self.waits.append(seconds)
        return self.came.pop(0)


def collector() -> tuple[Collector, list[int]]:
    done: list[int] = []
    return Collector(done.append), done


def test_nothing_is_collected_before_a_search() -> None:
    made, done = collector()
    idle = Idle()
    made.idle(idle)
    assert (done, idle.waits) == ([], [])


def test_a_search_then_a_long_idle_time_collects_the_young_then_everything() -> None:
    made, done = collector()
    made.searched()
    idle = Idle(False, False)
    made.idle(idle)
    assert done == [1, 2]
    assert idle.waits == [IDLE_BEFORE_COLLECT, IDLE_BEFORE_FULL_COLLECT]
    made.idle(Idle())  # nothing left to collect: no wait
    assert done == [1, 2]


def test_a_search_asked_for_soon_after_another_waits_for_no_collection() -> None:
    made, done = collector()
    made.searched()
    made.idle(Idle(True))
    assert done == []
    # asked for after the young collection: the full one waits for a longer idle time
    made.searched()
    made.idle(Idle(False, True))
    assert done == [1]
    made.idle(Idle(False))
    assert done == [1, 2]


def test_a_worker_never_idle_for_long_still_collects_everything_now_and_then() -> None:
    made, done = collector()
    for _ in range(FULL_COLLECT_EVERY - 1):
        made.searched()
        made.idle(Idle(False, True))
    assert done == [1] * (FULL_COLLECT_EVERY - 1)
    made.searched()
    idle = Idle(False)
    made.idle(idle)
    assert done[-1] == 2
    assert idle.waits == [IDLE_BEFORE_COLLECT]  # at once, without waiting for a long idle
    made.searched()
    made.idle(Idle(False, True))
    assert done[-1] == 1  # counted afresh
