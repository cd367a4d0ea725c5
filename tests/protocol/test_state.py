"""The search state of a protocol session (``protocol.state``): every state against every
event, from a table written out here, apart from the module's own."""

from __future__ import annotations

import itertools

import pytest

from protocol import state as s
from protocol.errors import ProtocolError

EXPECTED: dict[tuple[str, str], str] = {
    ("idle", "go"): "searching",
    ("idle", "close"): "closed",
    ("searching", "stop"): "stopping",
    ("searching", "refuse"): "refused",
    ("searching", "answer"): "idle",
    ("searching", "abandon"): "idle",
    ("searching", "close"): "closed",
    ("stopping", "stop"): "stopping",
    ("stopping", "refuse"): "refused",
    ("stopping", "answer"): "idle",
    ("stopping", "abandon"): "idle",
    ("stopping", "close"): "closed",
    ("refused", "answer"): "idle",
    ("refused", "abandon"): "idle",
    ("refused", "close"): "closed",
    ("closed", "close"): "closed",
}
"""(state, event) -> the state it leads to; every pair not listed is refused."""

PAIRS = list(itertools.product(s.SearchState, s.SearchEvent))


def test_the_states_and_events_are_those_the_protocol_has() -> None:
    assert [x.value for x in s.SearchState] == [
        "idle",
        "searching",
        "stopping",
        "refused",
        "closed",
    ]
    assert [x.value for x in s.SearchEvent] == [
        "go",
        "stop",
        "refuse",
        "answer",
        "abandon",
        "close",
    ]


@pytest.mark.parametrize(("state", "event"), PAIRS, ids=[f"{a.value}-{b.value}" for a, b in PAIRS])
def test_every_state_and_event(state: s.SearchState, event: s.SearchEvent) -> None:
    machine = s.SearchMachine(state)
    expected = EXPECTED.get((state.value, event.value))
    assert machine.allows(event) == (expected is not None)
    if expected is not None:
        assert machine.process(event).value == expected
        assert machine.state.value == expected
        return
    with pytest.raises(s.SearchStateError) as caught:
        machine.process(event)
    error = caught.value
    assert machine.state is state  # a refused event changes nothing
    assert (error.state, error.event) == (state, event)
    assert f"'{event.value}'" in error.message
    assert f"'{state.value}'" in error.message
    assert isinstance(error, ProtocolError)
    assert not error.fatal


def test_the_table_is_the_one_written_here() -> None:
    got = {
        (state.value, event.value): following.value
        for state, row in s.TRANSITIONS.items()
        for event, following in row.items()
    }
    assert got == EXPECTED


def test_the_error_code_hints_at_the_reply() -> None:
    def code(state: s.SearchState, event: s.SearchEvent) -> int:
        with pytest.raises(s.SearchStateError) as caught:
            s.SearchMachine(state).process(event)
        return caught.value.code

    assert code(s.SEARCHING, s.GO) == 204
    assert code(s.STOPPING, s.GO) == 204
    assert code(s.REFUSED, s.GO) == 204
    assert code(s.IDLE, s.STOP) == 205
    assert code(s.IDLE, s.ANSWER) == 205
    assert code(s.REFUSED, s.STOP) == 205
    assert code(s.CLOSED, s.GO) == 500
    assert code(s.CLOSED, s.ANSWER) == 500


def test_a_search_from_go_to_its_answer() -> None:
    machine = s.SearchMachine()
    assert machine.state is s.IDLE
    assert not machine.holding
    for event, state in [
        (s.GO, s.SEARCHING),
        (s.STOP, s.STOPPING),
        (s.STOP, s.STOPPING),
        (s.ANSWER, s.IDLE),
        (s.GO, s.SEARCHING),
        (s.REFUSE, s.REFUSED),
        (s.ANSWER, s.IDLE),
        (s.CLOSE, s.CLOSED),
        (s.CLOSE, s.CLOSED),
    ]:
        assert machine.process(event) is state
        assert machine.holding == (state in (s.SEARCHING, s.STOPPING, s.REFUSED))
    assert repr(machine) == "SearchMachine(closed)"
