"""Who plays whom on a ladder (``enginesrv.ladder.pairing.pair``), rule by rule: the longest
waiting first, against the opponent it has met least; never a player against itself, never
two house bots; the game the two have played least; colours by who has been p1 less, and
alternating between equals; every pairing noted in the history."""

from __future__ import annotations

from collections import Counter

from enginesrv.ladder.pairing import History, Pairing, Waiting, pair

ONE = frozenset({"yoxii"})
TWO = frozenset({"yoxii", "yohoho"})
ORDER = ("yoxii", "yohoho")


def waiting(*names: str, games: frozenset[str] = ONE) -> list[Waiting]:
    """A link per name, the first the longest waiting; a name after ``house:`` is a house
    bot's."""
    return [
        Waiting(key, name.removeprefix("house:"), games, house=name.startswith("house:"))
        for key, name in enumerate(names, 1)
    ]


def seats(pairings: list[Pairing]) -> list[tuple[str, str, str]]:
    """Each pairing as (game, p1's name, p2's name)."""
    return [(p.game, p.p1.name, p.p2.name) for p in pairings]


def met(pairings: list[Pairing]) -> list[set[str]]:
    """Who meets whom in each pairing, colours aside."""
    return [{p.p1.name, p.p2.name} for p in pairings]


def test_the_longest_waiting_is_paired_first_with_the_longer_waiting_of_equals() -> None:
    """With nothing played, the first waiting meets the second, the third the fourth."""
    found = pair(waiting("dan", "carol", "bob", "alice"), History(), ORDER)
    assert [(p.p1.key, p.p2.key) for p in found] == [(2, 1), (4, 3)]
    assert seats(found) == [("yoxii", "carol", "dan"), ("yoxii", "alice", "bob")]


def test_the_least_met_opponent_is_chosen() -> None:
    """The longest waiting meets the waiting opponent it has played least, not the longer
    waiting one; the one left over waits."""
    history = History.of([("yoxii", "alice", "bob"), ("yoxii", "carol", "alice")] * 2)
    history.note("yoxii", "alice", "dan")
    found = pair(waiting("alice", "bob", "carol", "dan"), history, ORDER)
    assert met(found) == [{"alice", "dan"}, {"bob", "carol"}]
    assert [{p.p1.key, p.p2.key} for p in found] == [{1, 4}, {2, 3}]
    history = History.of([("yoxii", "alice", "bob")])
    assert met(pair(waiting("alice", "bob", "carol"), history, ORDER)) == [{"alice", "carol"}]


def test_a_player_never_meets_itself() -> None:
    """Two links of one account are never paired: alone they wait, and with another player
    the longest waiting link plays it."""
    assert pair(waiting("alice", "alice", "alice"), History(), ORDER) == []
    found = pair(waiting("alice", "alice", "bob"), History(), ORDER)
    assert [(p.p1.key, p.p2.key) for p in found] == [(1, 3)]


def test_two_house_bots_never_meet() -> None:
    """House bots wait rather than play each other, and each plays a connected player."""
    assert pair(waiting("house:h1", "house:h2"), History(), ORDER) == []
    found = pair(waiting("house:h1", "house:h2", "alice", "bob"), History(), ORDER)
    assert seats(found) == [("yoxii", "alice", "h1"), ("yoxii", "bob", "h2")]
    assert [(p.p1.house, p.p2.house) for p in found] == [(False, True), (False, True)]


def test_players_with_no_game_in_common_do_not_meet() -> None:
    """A link that plays only yohoho waits while the other plays only yoxii."""
    links = [Waiting(1, "alice", ONE), Waiting(2, "bob", frozenset({"yohoho"}))]
    assert pair(links, History(), ORDER) == []


def test_the_game_is_the_one_the_two_have_played_least() -> None:
    """The game the two players' games add up least in, then the ladder's order."""
    history = History.of([("yoxii", "alice", "carol"), ("yoxii", "dan", "bob")])
    history.note("yohoho", "carol", "bob")
    (found,) = pair(waiting("alice", "bob", games=TWO), history, ORDER)
    assert found.game == "yohoho"  # yoxii: 1 + 1, yohoho: 0 + 1
    history = History.of([("yohoho", "alice", "carol"), ("yoxii", "dan", "bob")])
    (found,) = pair(waiting("alice", "bob", games=TWO), history, ORDER)
    assert found.game == "yoxii"  # 1 each: the ladder's order
    (found,) = pair(waiting("alice", "bob", games=TWO), history, ("yohoho", "yoxii"))
    assert found.game == "yohoho"
    (found,) = pair([Waiting(1, "alice", TWO), Waiting(2, "bob", ONE)], History(), ORDER[::-1])
    assert found.game == "yoxii"  # the only game the two share


def test_the_one_who_has_been_p1_less_is_p1() -> None:
    """The player with fewer games as p1 (both having played as many) plays p1, whichever
    waited longer and whatever the names."""
    history = History.of([("yoxii", "alice", "carol"), ("yoxii", "dan", "bob")])
    found = pair(waiting("alice", "bob"), history, ORDER)
    assert seats(found) == [("yoxii", "bob", "alice")]
    found = pair(waiting("bob", "alice"), History.of([("yoxii", "bob", "carol")]), ORDER)
    assert seats(found) == [("yoxii", "alice", "bob")]


def test_colours_alternate_between_equals() -> None:
    """Between two who have been p1 as often, the first name in order is p1 when they have
    met an even number of times, the other when odd; paired again and again, they swap."""
    found = pair(waiting("bob", "alice"), History(), ORDER)
    assert seats(found) == [("yoxii", "alice", "bob")]
    met_once = History.of(
        [("yoxii", "alice", "bob"), ("yoxii", "carol", "alice"), ("yoxii", "bob", "dan")]
    )
    assert met_once.first["alice"] == met_once.first["bob"] == 0
    found = pair(waiting("alice", "bob"), met_once, ORDER)
    assert seats(found) == [("yoxii", "bob", "alice")]
    history = History()
    p1s = [pair(waiting("alice", "bob"), history, ORDER)[0].p1.name for _ in range(6)]
    assert p1s == ["alice", "bob"] * 3


def test_each_pairing_is_noted_in_the_history() -> None:
    """What ``pair`` chose is counted at once: met, the colour balance and the games."""
    history = History()
    found = pair(waiting("bob", "alice", "carol", "dan", games=TWO), history, ORDER)
    assert seats(found) == [("yoxii", "alice", "bob"), ("yoxii", "carol", "dan")]
    assert history.met == Counter({("alice", "bob"): 1, ("carol", "dan"): 1})
    assert history.first == Counter({"alice": 1, "bob": -1, "carol": 1, "dan": -1})
    assert history.played == Counter(
        {("yoxii", "alice"): 1, ("yoxii", "bob"): 1, ("yoxii", "carol"): 1, ("yoxii", "dan"): 1}
    )
    found = pair(waiting("bob", "alice", "carol", "dan", games=TWO), history, ORDER)
    # met once already: bob meets the next least met, carol; and now yohoho
    assert seats(found) == [("yohoho", "bob", "carol"), ("yohoho", "dan", "alice")]
    assert history.met[("alice", "dan")] == history.met[("bob", "carol")] == 1
    assert history.played[("yohoho", "alice")] == 1
    assert sum(history.first.values()) == 0
