"""The public and the secret generator of the bots (``bots.chance``)."""

from __future__ import annotations

import games
from bots.alphabeta import AlphaBeta
from bots.chance import Chance
from bots.engine import Engine, Limits
from bots.simple import GreedyBot, RandomBot
from games import State

YINYANG = games.load("yinyang")
YOXII = games.load("yoxii")

# Black to act with every law revealed and one adaptation that applies: 1,621 moves, shown to
# White in five forms (keep, and a rewrite of each of the four slots with the new text hidden)
REVEALED = (
    "bwww/bwww/bbbw/bbbw b start +wwbb>*,+b.bw>*,+w.bw>w.b.,+bbw.>bb.. "
    "-bbww>*,-..w.>....,-.w.w>bwbw,-..w.>.... 8 10 1"
)
# the same, Black's laws still hidden from White: White cannot list Black's moves
HIDDEN = REVEALED.replace("+", "-")


def bot_with(cls: type[Engine], seed: int | None, secret_seed: int) -> Engine:
    bot = cls()
    if seed is not None:
        bot.set_option("Seed", str(seed))
    bot.set_option("SecretSeed", str(secret_seed))
    return bot


def token(bot: Engine, state: State) -> str:
    bot.new_game(state.game)
    result = bot.search(state, Limits(depth=1))
    assert result.token is not None
    assert result.move is not None
    assert state.parse_move(result.token) == result.move
    return result.token


def test_the_positions_are_what_the_tests_need() -> None:
    revealed = YINYANG.state_from_string(REVEALED)
    moves = revealed.legal_moves()
    assert len(moves) == 1621
    assert len({revealed.public_move_str(m, 1) for m in moves}) == 5
    assert not revealed.view(1).moves_hidden()
    assert YINYANG.state_from_string(HIDDEN).view(1).moves_hidden()


def test_a_perfect_information_game_repeats_from_the_seed_alone() -> None:
    games_played = []
    for secret_seed in (1, 2, 0):
        bots = (bot_with(RandomBot, 5, secret_seed), bot_with(RandomBot, 6, secret_seed))
        for bot in bots:
            bot.new_game(YOXII)
        state = YOXII.new_state()
        tokens: list[str] = []
        while not state.is_terminal() and len(tokens) < 40:
            result = bots[state.to_move()].search(state, Limits(depth=1))
            assert result.move is not None
            assert result.token is not None
            tokens.append(result.token)
            state.push(result.move)
        games_played.append(tokens)
    assert games_played[0] == games_played[1] == games_played[2]


def test_what_the_opponent_sees_repeats_and_what_it_is_not_shown_is_secret() -> None:
    state = YINYANG.state_from_string(REVEALED)
    chosen = [token(bot_with(RandomBot, 3, secret), state) for secret in range(1, 13)]
    shown = {state.public_move_str(state.parse_move(t), 1) for t in chosen}
    assert len(shown) == 1  # the public generator alone chose the form White sees
    assert len(set(chosen)) > 1  # the secret one chose the new law
    # each seed repeats its own choices
    assert token(bot_with(RandomBot, 3, 4), state) == token(bot_with(RandomBot, 3, 4), state)


def test_a_mover_holding_a_law_the_opponent_has_not_seen_chooses_in_secret() -> None:
    state = YINYANG.state_from_string(HIDDEN)
    # which moves exist tells of the hidden laws: the public seed decides nothing here
    assert len({token(bot_with(RandomBot, seed, 7), state) for seed in range(1, 9)}) == 1
    assert len({token(bot_with(RandomBot, 3, secret), state) for secret in range(1, 9)}) > 1


def test_laws_written_at_setup_come_from_the_secret_generator() -> None:
    start = YINYANG.new_state()
    for cls in (RandomBot, GreedyBot):
        # the operating system's randomness: two bots with the same public seed write
        # different laws (two equal draws of 405^4 would be a 1 in 2.7e10 event)
        assert token(bot_with(cls, 5, 0), start) != token(bot_with(cls, 5, 0), start)
        # a secret seed repeats them, whatever the public seed
        assert token(bot_with(cls, 5, 11), start) == token(bot_with(cls, 6, 11), start)
    assert token(bot_with(AlphaBeta, None, 0), start) != token(bot_with(AlphaBeta, None, 0), start)
    assert token(bot_with(AlphaBeta, None, 8), start) == token(bot_with(AlphaBeta, None, 8), start)


def test_a_choice_depends_on_the_seeds_and_the_position_alone() -> None:
    state = YINYANG.state_from_string(REVEALED)
    bot = bot_with(RandomBot, 3, 9)
    first = bot.search(state, Limits(depth=1)).token
    for _ in range(3):  # no new game between: the same choice all the same
        assert bot.search(state, Limits(depth=1)).token == first
    # a fresh bot, a position reached by other moves: the same choice
    assert token(bot_with(RandomBot, 3, 9), YINYANG.state_from_string(REVEALED)) == first
    # the same board at another ply is another choice
    later = REVEALED.rsplit(" ", 1)[0] + " 7"
    others = {token(bot_with(RandomBot, 3, 9), YINYANG.state_from_string(later)) for _ in "ab"}
    assert len(others) == 1
    assert others != {first}


def test_a_game_of_random_bots_does_not_loop_on_a_recurring_position() -> None:
    bots = (bot_with(RandomBot, 1, 1), bot_with(RandomBot, 2, 2))
    state = YOXII.new_state()
    seen: dict[int, set[str]] = {}
    while not state.is_terminal() and state.ply() < 300:
        result = bots[state.to_move()].search(state, Limits(depth=1))
        assert result.move is not None
        assert result.token is not None
        seen.setdefault(state.key(), set()).add(result.token)
        state.push(result.move)
    assert len(seen) > 20  # it went somewhere, not round a cycle of a few positions


def test_pick_is_uniform_over_the_moves_a_form_covers() -> None:
    state = YINYANG.state_from_string(REVEALED)
    moves = state.legal_moves()
    keep = [m for m in moves if state.move_to_str(m).endswith(":keep")]
    assert len(keep) == 1
    chance = Chance(state, 1, 2)
    draws = [chance.pick(state, moves) for _ in range(3000)]
    # keep is one move of 1,621: a choice uniform over moves (not over forms) plays it rarely
    assert draws.count(keep[0]) < 30
    assert len(set(draws)) > 1000
