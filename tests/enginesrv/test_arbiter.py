"""The arbiter of one game, with scripted in-process players on trio's mock clock: clocks,
forfeits with their reasons, adjudications, views for Yin Yang, records that replay."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
import trio
import trio.testing

import games
from bots.engine import Score
from enginesrv.event.play.arbiter import GameResult, GameSetup, play_game
from enginesrv.event.play.controls import (
    Adjudication,
    DrawRule,
    MoveLimits,
    ResignRule,
    TimeControl,
)
from enginesrv.event.play.openings import Opening, OpeningsError, read_openings
from enginesrv.event.play.outcome import Termination
from enginesrv.event.play.players import (
    ForfeitError,
    GameOptions,
    GoRequest,
    Player,
    PlayerSpec,
    Reply,
)
from enginesrv.event.play.records import format_record, parse_record

Chooser = Callable[[games.State, GoRequest], str | None]


class Scripted(Player):
    """A player that answers with ``choose(state, request)`` after ``think`` seconds (mock
    clock), or fails as told."""

    def __init__(
        self,
        game: games.Game,
        choose: Chooser | None = None,
        *,
        think: float = 0.01,
        score: Callable[[int], Score | None] = lambda n: None,
        fail_at: int | None = None,
        failure: Termination = Termination.CRASH,
    ) -> None:
        super().__init__(PlayerSpec("test", "bot", "scripted"))
        self.game = game
        self.choose = choose or first_move
        self.think = think
        self.score = score
        self.fail_at = fail_at
        self.failure = failure
        self.requests: list[GoRequest] = []
        self.alive = True

    async def start(self, game: games.Game) -> None:
        self.alive = True

    async def new_game(
        self, key: str, seed: int, secret_seed: int = 0, options: GameOptions = ()
    ) -> None:
        if self.fail_at == 0:
            raise ForfeitError(self.failure, "no readyok")

    async def go(self, request: GoRequest) -> Reply:
        self.requests.append(request)
        if self.fail_at is not None and len(self.requests) >= self.fail_at:
            self.alive = False
            raise ForfeitError(self.failure, "scripted failure")
        state = self.game.state_from_string(request.position)
        started = trio.current_time()
        await trio.sleep(self.think)
        token = self.choose(state, request)
        return Reply(token, trio.current_time() - started, self.score(len(self.requests)), 3)

    async def close(self) -> None:
        self.alive = False


def first_move(state: games.State, request: GoRequest) -> str | None:
    moves = state.legal_moves()
    return state.move_to_str(moves[0]) if len(moves) else None


def random_mover(seed: int) -> Chooser:
    rng = random.Random(seed)

    def choose(state: games.State, request: GoRequest) -> str | None:
        moves = state.legal_moves()
        return state.move_to_str(moves[rng.randrange(len(moves))]) if len(moves) else None

    return choose


def play(
    game: games.Game,
    players: tuple[Player, Player],
    limits: MoveLimits | None = None,
    rules: Adjudication | None = None,
    opening: Opening | None = None,
) -> GameResult:
    setup = GameSetup(
        "g1",
        ("one", "two"),
        limits or MoveLimits(depth=1),
        rules or Adjudication(),
        opening or Opening(),
    )

    async def main() -> GameResult:
        return await play_game(game, players, setup)

    return trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def replays(game: games.Game, result: GameResult) -> games.State:
    record = parse_record(format_record(result.record))
    start = record.headers["Start"]
    state = game.new_state() if start == "startpos" else game.state_from_string(start)
    for move in record.moves:
        state.push(state.parse_move(move.token))
    assert state.to_string() == record.headers["Final"]
    return state


# -- parsing --------------------------------------------------------------------------------------


def test_time_controls() -> None:
    assert TimeControl.parse("40/60+0.6") == TimeControl(60_000, 600, 40)
    assert TimeControl.parse("2+0.05") == TimeControl(2000, 50)
    assert TimeControl.parse("10") == TimeControl(10_000)
    assert str(TimeControl.parse("40/60+0.6")) == "40/60+0.6"
    for bad in ("", "0", "40/", "x+1", "0/10", "1+-1"):
        with pytest.raises(ValueError, match="time control"):
            TimeControl.parse(bad)


def test_adjudication_rules_parse() -> None:
    assert ResignRule.parse("movecount=3,score=500") == ResignRule(3, 500)
    assert DrawRule.parse("movenumber=40,movecount=8,score=10") == DrawRule(40, 8, 10)
    for bad in ("movecount=3", "movecount=x,score=1", "moves=3,score=1", "movecount=-1,score=1"):
        with pytest.raises(ValueError, match="resign rule"):
            ResignRule.parse(bad)


def test_openings_file(tmp_path: Path) -> None:
    game = games.load("yoxii")
    path = tmp_path / "open.txt"
    start = game.new_state()
    first = start.move_to_str(start.legal_moves()[0])
    path.write_text(f"# two openings\nmoves {first}\nfen {game.start_position}  # the start\n")
    openings = read_openings(path, game)
    assert [o.moves for o in openings] == [(first,), ()]
    assert openings[1].start == game.start_position
    path.write_text("moves zz9\n")
    with pytest.raises(OpeningsError, match=r"open.txt:1: .*zz9"):
        read_openings(path, game)
    path.write_text("\n\nplay a1\n")
    with pytest.raises(OpeningsError, match=r"open.txt:3: write 'moves"):
        read_openings(path, game)
    path.write_text("# nothing\n")
    with pytest.raises(OpeningsError, match="no opening"):
        read_openings(path, game)


# -- playing ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", games.available())
def test_a_game_ends_by_the_rules_or_the_ply_cap_and_replays(name: str) -> None:
    game = games.load(name)
    one, two = Scripted(game, random_mover(1)), Scripted(game, random_mover(2))
    result = play(game, (one, two), rules=Adjudication(max_plies=300))
    state = replays(game, result)
    outcome = state.outcome()
    if outcome is None:
        assert (result.winner, result.reason, result.plies) == ("draw", "max-plies", 300)
    else:
        assert (result.winner, result.reason) == (outcome.winner, outcome.reason)
    assert result.record.headers["P1"] == "one"
    assert result.engine_time == pytest.approx(0.01 * result.plies)


def test_views_for_hidden_information_and_history_otherwise() -> None:
    yinyang = games.load("yinyang")
    one, two = Scripted(yinyang, random_mover(3)), Scripted(yinyang, random_mover(4))
    result = play(yinyang, (one, two), rules=Adjudication(max_plies=40))
    assert one.requests
    assert two.requests
    for seat, player in enumerate((one, two)):
        for request in player.requests:
            assert request.start is None
            assert request.moves == ()
            position = yinyang.state_from_string(request.position)
            laws = position.to_string().split(" ")[4 - seat]  # the opponent's law field
            assert laws == "none" or all(e == "?" or e.startswith("+") for e in laws.split(","))
    assert result.record.moves[1].annotations[-1] == ("shown", "laws:?,?,?,?")
    yoxii = games.load("yoxii")
    a, b = Scripted(yoxii), Scripted(yoxii)
    play(yoxii, (a, b), rules=Adjudication(max_plies=6))
    assert b.requests[0].start == yoxii.start_position
    assert len(b.requests[0].moves) == 2  # p1's totem move and placement


def test_a_shown_form_from_the_mover_is_illegal() -> None:
    game = games.load("yinyang")
    cheat = Scripted(game, lambda state, request: "laws:?,?,?,?")
    result = play(game, (cheat, Scripted(game, random_mover(1))))
    assert (result.winner, result.reason) == ("p2", "illegal-move")
    assert "a shown form" in result.record.comments[0]


@pytest.mark.parametrize(("token", "detail"), [("zz9", "'zz9'"), (None, "no move"), ("a1", "a1")])
def test_a_bad_token_forfeits(token: str | None, detail: str) -> None:
    game = games.load("yoxii")
    bad = Scripted(game, lambda state, request: token)
    result = play(game, (Scripted(game), bad))
    assert (result.winner, result.reason, result.plies) == ("p1", "illegal-move", 2)
    assert result.record.comments[0].startswith("p2 two: played")
    assert detail in result.record.comments[0]
    replays(game, result)


@pytest.mark.parametrize(
    "reason",
    [Termination.CRASH, Termination.STALL, Termination.DISCONNECT, Termination.TIME_FORFEIT],
)
def test_a_failing_player_forfeits_with_its_reason(reason: Termination) -> None:
    game = games.load("yoxii")
    bad = Scripted(game, fail_at=2, failure=reason)
    result = play(game, (bad, Scripted(game)))
    assert (result.winner, result.reason) == ("p2", reason)
    assert result.failed == (0,)
    late = Scripted(game, fail_at=0, failure=Termination.STALL)
    result = play(game, (Scripted(game), late))
    assert (result.winner, result.reason, result.plies) == ("p1", "stall", 0)


def test_clocks_are_kept_and_sent() -> None:
    game = games.load("yoxii")
    one, two = Scripted(game, think=0.25), Scripted(game, think=0.1)
    limits = MoveLimits(tc=TimeControl(2000, 100, 3))
    result = play(game, (one, two), limits, Adjudication(max_plies=12))
    first, second = one.requests[0].clocks, one.requests[1].clocks
    assert (first.p1time, first.p2time, first.p1inc, first.movestogo) == (2000, 2000, 100, 3)
    # one spent 250 ms and got 100 back; two's clock is untouched by one's moves
    assert second.p1time == 1850
    assert second.movestogo == 2
    assert two.requests[0].clocks.p2time == 2000
    # after 3 decisions the control adds the base time again: 2000 - 3 * 150 + 2000
    assert one.requests[3].clocks.p1time == 3550
    assert result.record.moves[0].annotations[0] == ("ms", "250")
    assert ("clock", "1850") in result.record.moves[0].annotations
    # the overrun: measured less what the clock held (250 - 2000)
    assert ("over", "-1750") in result.record.moves[0].annotations
    # one's second move: 250 ms of the 1850 left
    assert ("over", "-1600") in result.record.moves[1].annotations


def test_the_overrun_of_a_move_time_is_recorded() -> None:
    game = games.load("yoxii")
    result = play(
        game, (Scripted(game, think=0.1), Scripted(game)), MoveLimits(st_ms=300),
        Adjudication(max_plies=2),
    )  # fmt: skip
    assert ("over", "-200") in result.record.moves[0].annotations
    untimed = play(game, (Scripted(game), Scripted(game)), MoveLimits(depth=1),
                   Adjudication(max_plies=2))  # fmt: skip
    assert all(key != "over" for key, _ in untimed.record.moves[0].annotations)


def test_time_forfeit_on_the_clock_and_per_move() -> None:
    game = games.load("yoxii")
    slow = Scripted(game, think=0.4)
    result = play(game, (Scripted(game, think=0.1), slow), MoveLimits(tc=TimeControl(1000)))
    assert (result.winner, result.reason) == ("p1", "time-forfeit")
    assert slow.requests[-1].forfeit_at is not None
    result = play(game, (slow, Scripted(game)), MoveLimits(st_ms=300))
    assert (result.winner, result.reason, result.plies) == ("p2", "time-forfeit", 0)
    assert "400 ms used of 300 ms" in result.record.comments[0]
    assert result.detail == "400 ms used of 300 ms"
    # a margin forgives the lateness
    result = play(
        game, (slow, Scripted(game)), MoveLimits(st_ms=300), Adjudication(timemargin_ms=150)
    )
    assert result.reason != "time-forfeit"


def test_repetition_adjudication() -> None:
    game = games.load("yinyang")
    laws = "bbbb>*,bwbw>b.bw,wwww>w.ww,bwbb>b.bb"
    white_laws = "wwww>*,wbwb>w.wb,bbbb>b.bb,wbww>w.ww"

    def keep(state: games.State, request: GoRequest) -> str:
        if state.phase() == "setup":
            return f"laws:{laws if state.to_move() == 0 else white_laws}"
        moves = sorted(state.move_to_str(m) for m in state.legal_moves())
        return next(m for m in moves if m.endswith(":keep"))

    result = play(
        game, (Scripted(game, keep), Scripted(game, keep)), rules=Adjudication(repetitions=3)
    )
    assert (result.winner, result.reason) == ("draw", "repetition")
    assert result.plies < 20


def test_resign_and_draw_by_score() -> None:
    game = games.load("yoxii")
    loser = Scripted(game, score=lambda n: Score("cp", -900))
    rules = Adjudication(resign=ResignRule(3, 500))
    result = play(game, (Scripted(game), loser), rules=rules)
    assert (result.winner, result.reason) == ("p1", "resign")
    assert len(loser.requests) == 3
    level = Adjudication(draw=DrawRule(4, 2, 20))
    quiet = Score("cp", 5)
    result = play(
        game,
        (Scripted(game, score=lambda n: quiet), Scripted(game, score=lambda n: quiet)),
        rules=level,
    )
    # plies 4, 5, 6 and 7 count: two moves of each player with level scores
    assert (result.winner, result.reason, result.plies) == ("draw", "score-adjudication", 7)


def test_an_opening_is_played_first_and_recorded_as_book() -> None:
    game = games.load("yoxii")
    start = game.new_state()
    first = start.move_to_str(start.legal_moves()[0])
    one, two = Scripted(game), Scripted(game)
    result = play(game, (one, two), opening=Opening(None, (first,), f"moves {first}"))
    assert result.record.moves[0].token == first
    assert result.record.moves[0].annotations == (("book", "1"),)
    assert result.record.headers["Opening"] == f"moves {first}"
    assert one.requests[0].moves == (first,)  # p1 completes its turn after the book move
    replays(game, result)
