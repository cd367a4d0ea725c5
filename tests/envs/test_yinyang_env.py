"""The Yin Yang environment: its action table (every legal token has its action), the setup
in four steps, the secret of the hidden laws (an observation never depends on them), and its
planes, checked against positions decoded here by hand."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import envs
import games
from envs.core import AGENTS, GameEnv
from envs.yinyang import PIECE_MOVES, SIZE, TOKENS
from games.yinyang import LAW_TEXTS, YinYangState

DATA = Path(__file__).parents[2] / "tests" / "data" / "yinyang"
SHARED = Path(__file__).parents[3] / "shared" / "data" / "yinyang"
GAME = games.load("yinyang")
LAWS = LAW_TEXTS
ANCHORS = ("a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3")
EXAMPLE = (  # rules §8.2: after both setups, Black's first turn
    "bwww/bwww/bbbw/bbbw b start -bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
    "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 1"
)
EXAMPLES = (  # the referee strings of rules §8.2 and §8.3
    "bwww/bwww/bbbw/bbbw b setup none none 8 10 0",
    "bwww/bwww/bbbw/bbbw w setup -bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w none 8 10 0",
    EXAMPLE,
    "bwww/b.ww/bbbw/bbbw w start +bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
    "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 2",
    "bwww/bwww/b.bw/bbbw b moved -bwbb>b.bb,-..bb>bbbb,+bwbw>*,-bw.w>b..w "
    "+wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 3",
    "bww./b.b./.w.b/b.bb b start +b.b.>b...,+wwbb>.wbb,+.bbw>.b.w,+bw.w>bw.. "
    "+bbw.>b.w.,+w.ww>w..w,-wwwb>w.wb,+.w..>bwb. 6 10 45",
    "bwww/bwww/bb.w/bbbw b start -bwbb>b.bb,-..bb>bbbb,+bwbw>*,-bw.w>b..w "
    "+wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 3",
)


OWN, THEIRS = 11, 87
"""The first plane of the agent's laws and of the opponent's."""


def law_action(law: str) -> int:
    return 58441 + LAWS.index(law)


# -- (a) the action table ----------------------------------------------------------------------


def test_the_action_table_is_as_documented() -> None:
    adapter = envs.adapter("yinyang")
    assert adapter.size == SIZE == 58846 == len(TOKENS) == len(set(TOKENS))
    assert len(LAWS) == 405
    assert list(LAWS) == sorted(LAWS)
    assert len(PIECE_MOVES) == 48
    assert all(adapter.index(adapter.token(i)) == i for i in range(adapter.size))
    # docs/envs.md's worked examples
    examples = {
        "a1-a2": 0,
        "a1-b1": 1,
        "b2-c2": 14,
        "d4-c4": 47,
        "end": 48,
        "L1@a2": 52,
        "L3@a3:keep": 109,
        "L1@a1:L1=....>*": 121,
        "L3@c1:L2=....>.b.b": 32929,
        "L4@c3:L4=www.>ww..": 58430,
        "law:....>*": 58441,
        "law:bwbw>*": 58701,
        "law:wwww>www.": 58845,
    }
    for token, action in examples.items():
        assert adapter.index(token) == action, token
        assert adapter.token(action) == token
    # the block formulas, for every action
    expected = [*PIECE_MOVES, "end"]
    expected += [f"L{k}@{a}" for k in range(1, 5) for a in ANCHORS]
    expected += [f"L{k}@{a}:keep" for k in range(1, 5) for a in ANCHORS]
    for k in range(1, 5):
        for a, anchor in enumerate(ANCHORS):
            assert adapter.index(f"L{k}@{anchor}") == 49 + 9 * (k - 1) + a
            assert adapter.index(f"L{k}@{anchor}:keep") == 85 + 9 * (k - 1) + a
            for j in range(1, 5):
                for law in (0, 17, 404):
                    token = f"L{k}@{anchor}:L{j}={LAWS[law]}"
                    assert adapter.index(token) == 121 + 405 * (4 * (9 * (k - 1) + a) + j - 1) + law
    assert list(TOKENS[:121]) == expected
    assert all(TOKENS[58441 + law] == f"law:{text}" for law, text in enumerate(LAWS))
    # every piece move of the table is between adjacent squares, and every such pair is there
    files, ranks = "abcd", "1234"
    adjacent = {
        f"{f}{r}-{g}{s}"
        for f in files
        for r in ranks
        for g in files
        for s in ranks
        if abs(files.index(f) - files.index(g)) + abs(ranks.index(r) - ranks.index(s)) == 1
    }
    assert set(PIECE_MOVES) == adjacent
    with pytest.raises(ValueError, match="no action"):
        adapter.index("laws:....>*,....>*,....>*,....>*")
    assert adapter.actions_of(GAME.new_state(), "laws:bwbb>b.bb,..bb>bbbb,bwbw>*,bwbw>*") == [
        law_action("bwbb>b.bb"),
        law_action("..bb>bbbb"),
        law_action("bwbw>*"),
        law_action("bwbw>*"),
    ]
    assert adapter.actions_of(GAME.new_state(), "L3@c1:L2=....>.b.b") == [32929]


def check_legal(state: YinYangState) -> None:
    """The legal actions of ``state`` are its legal tokens, one action each, with their move."""
    adapter = envs.adapter("yinyang")
    actions, moves = adapter.legal(state, ())
    assert len(actions) == len(set(actions)) == len(moves) == state.count_moves()
    tokens = [state.move_to_str(move) for move in moves]
    assert [adapter.token(action) for action in actions] == tokens
    assert all(
        state.parse_move(adapter.token(action)) == move
        for action, move in zip(actions, moves, strict=True)
    )


def test_every_legal_token_of_the_rules_vectors_has_its_action() -> None:
    files = [path / "yinyang-moves.jsonl" for path in (SHARED, DATA)]
    files = [path for path in files if path.exists()]
    assert files
    seen = adaptations = 0
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            state = GAME.state_from_string(case["pos"])
            assert isinstance(state, YinYangState)
            check_legal(state)
            actions, _ = envs.adapter("yinyang").legal(state, ())
            assert len(actions) == case.get("count", len(case["moves"]))
            tokens = {TOKENS[a] for a in actions}
            assert set(case["moves"]) <= tokens
            adaptations += len(case.get("adapt", ()))
            seen += 1
    assert seen > 20
    assert adaptations > 5


def walk(env: GameEnv, rng: random.Random, start: str | None = None) -> Iterator[str]:
    """A random game of ``env`` (from ``start``), yielding the referee string of each position
    met between decisions (never in the middle of a setup)."""
    env.reset(options=None if start is None else {"position": start})
    for _ in env.agent_iter():
        _, _, terminated, truncated, _ = env.last(observe=False)
        if terminated or truncated:
            env.step(None)
            continue
        if not env.partial:
            yield env.state.to_string()
        env.step(rng.choice(env.legal_actions()))
    if not env.partial:
        yield env.state.to_string()


def random_positions(count: int = 8) -> list[str]:
    """The positions of random games: from the start (most end at once: random laws seldom
    fit the full board) and from the rules' example position after the setup."""
    rng = random.Random(2024)
    env = envs.make("yinyang", max_plies=120)
    out: list[str] = []
    for game in range(count):
        out.extend(walk(env, rng, None if game % 2 else EXAMPLE))
    return out


POSITIONS = random_positions()


def test_every_legal_token_of_random_play_has_its_action() -> None:
    assert len(POSITIONS) > 200
    for position in POSITIONS:
        state = GAME.state_from_string(position)
        assert isinstance(state, YinYangState)
        if state.phase() != "setup":
            check_legal(state)


# -- (b) the setup in four steps ---------------------------------------------------------------


def planes(env: GameEnv, agent: str) -> bytes:
    return bytes(env.observe(agent)["observation"].tobytes())


@pytest.mark.parametrize("seat", [0, 1])
def test_the_setup_is_four_steps_of_one_agent_hidden_from_the_other(seat: int) -> None:
    rng = random.Random(seat)
    agent, other = AGENTS[seat], AGENTS[1 - seat]
    after: set[bytes] = set()
    for _ in range(3):
        env = envs.make("yinyang")
        if seat:  # Black writes the example laws, which always have a move
            for law in ("bwbb>b.bb", "..bb>bbbb", "bwbw>*", "bw.w>b..w"):
                env.step(law_action(law))
        chosen = [rng.choice(LAWS) for _ in range(3)]
        chosen.append(chosen[0])  # the same law twice: the rules allow it (R9)
        before = planes(env, other)
        for step, law in enumerate(chosen):
            assert env.agent_selection == agent
            assert env.legal_actions() == list(range(58441, 58846))  # every law, every time
            env.step(law_action(law))
            if step < 3:
                assert env.partial == tuple(law_action(law) for law in chosen[: step + 1])
                assert env.agent_selection == agent
                assert planes(env, other) == before
                assert env.state.to_string().split()[3 + seat] == "none"
        assert env.partial == ()
        assert env.plies == 4 * (seat + 1)
        assert env.state.to_string().split()[3 + seat] == ",".join(f"-{law}" for law in chosen)
        assert env.agent_selection == other  # its turn: setup, or Black's first move
        now = env.observe(other)["observation"]
        was = np.frombuffer(before, dtype=np.float32).reshape(now.shape)
        # after them only the public planes of the turn may change: the side to act, and
        # after White's setup the phase and the turn counter; not even that laws are written
        changed = {int(plane) for plane in np.flatnonzero((now != was).any(axis=(1, 2)))}
        assert changed == ({6} if seat == 0 else {6, 7, 8, 10})
        after.add(planes(env, other))
    assert len(after) == 1  # whatever laws were chosen


def test_the_agent_sees_the_laws_it_has_chosen_so_far() -> None:
    env = envs.make("yinyang")
    chosen = ["bwbb>b.bb", "..bb>bbbb", "bwbw>*"]
    for law in chosen:
        env.step(law_action(law))
    observed = env.observe("player_0")["observation"]
    expected = expected_planes(EXAMPLES[0], 0, chosen)
    assert np.array_equal(observed, expected)
    assert observed[OWN + 2 * 19].all()
    assert not observed[OWN + 3 * 19].any()


# -- (c) the secret ------------------------------------------------------------------------


def with_other_laws(position: str, owner: int, rng: random.Random) -> str:
    """``position`` with each hidden law of ``owner`` replaced by another valid law."""
    fields = position.split()
    entries = fields[3 + owner].split(",")
    if entries == ["none"]:
        return position
    changed = [
        "-" + rng.choice([law for law in rng.sample(LAWS, 3) if law != entry[1:]])
        if entry[0] == "-"
        else entry
        for entry in entries
    ]
    fields[3 + owner] = ",".join(changed)
    return " ".join(fields)


def test_the_hidden_laws_of_the_opponent_never_show() -> None:
    """Two referee positions that differ only in the hidden laws of one side: every
    observation of the other side is the same, byte for byte, and so are its legal actions
    when it is to act."""
    rng = random.Random(5)
    adapter = envs.adapter("yinyang")
    compared = acting = 0
    for position in [*EXAMPLES, *POSITIONS]:
        for seat in (0, 1):
            twin = with_other_laws(position, 1 - seat, rng)
            if twin == position:
                continue
            one, two = GAME.state_from_string(position), GAME.state_from_string(twin)
            assert one.view(seat).to_string() == two.view(seat).to_string()
            seen = adapter.observe(one.view(seat), seat, ())
            assert seen.tobytes() == adapter.observe(two.view(seat), seat, ()).tobytes()
            compared += 1
            if one.to_move() == seat and not one.is_terminal():
                assert adapter.legal(one, ())[0] == adapter.legal(two, ())[0]
                acting += 1
    assert compared > 200
    assert acting > 50


def test_the_hidden_laws_never_show_through_the_environment() -> None:
    rng = random.Random(6)
    for position in EXAMPLES[1:]:
        for seat in (0, 1):
            twin = with_other_laws(position, 1 - seat, rng)
            one, two = envs.make("yinyang"), envs.make("yinyang")
            one.reset(options={"position": position})
            two.reset(options={"position": twin})
            agent = AGENTS[seat]
            assert planes(one, agent) == planes(two, agent)
            mask = one.observe(agent)["action_mask"]
            assert mask.tobytes() == two.observe(agent)["action_mask"].tobytes()
            assert one.position(agent) == two.position(agent)


def test_a_revealed_law_shows() -> None:
    """White's revealed L1 of the turn-3 position: rewriting it changes Black's observation;
    rewriting White's hidden L2 does not."""
    adapter = envs.adapter("yinyang")
    turn3 = EXAMPLES[-1]
    revealed = turn3.replace("+wbww>w.ww", "+wbwb>w.wb")
    hidden = turn3.replace("-..ww>wwww", "-....>*")

    def black(position: str) -> bytes:
        view = GAME.state_from_string(position).view(0)
        return bytes(adapter.observe(view, 0, ()).tobytes())

    assert black(revealed) != black(turn3) == black(hidden)
    law = adapter.observe(GAME.state_from_string(turn3).view(0), 0, ())[THEIRS : THEIRS + 19, 0, 0]
    assert law[:2].tolist() == [1.0, 1.0]  # known and revealed


# -- (d) the planes --------------------------------------------------------------------------


def expected_planes(position: str, seat: int, partial: list[str] | None = None) -> np.ndarray:
    """The planes of docs/envs.md for ``seat`` in the referee string ``position``, decoded
    here from the string (the other side's hidden laws left out, as the page says)."""
    board, side, phase, laws_b, laws_w, res_b, res_w, turn = position.split()
    out = np.zeros((163, 4, 4), dtype=np.float32)
    for row, cells in enumerate(board.split("/")):
        for file, cell in enumerate(cells):
            if cell != ".":
                out[0 if "bw".index(cell) == seat else 1, 3 - row, file] = 1.0
    goals = ((3, 3), (0, 0))  # d4 for Black, a1 for White
    out[2][goals[seat]] = out[3][goals[1 - seat]] = 1.0
    shares = (int(res_b) / 8, int(res_w) / 10)
    out[4], out[5] = shares[seat], shares[1 - seat]
    out[6] = "bw".index(side) == seat
    out[7 + ("setup", "start", "moved").index(phase)] = 1.0
    out[10] = min(int(turn), 1000) / 1000
    mine = "bw"[seat]
    for owner, field in enumerate((laws_b, laws_w)):
        entries = [] if field == "none" else field.split(",")
        if field == "none" and owner == seat:
            entries = [f"-{law}" for law in partial or []]
        for slot, entry in enumerate(entries):
            at = (OWN if owner == seat else THEIRS) + 19 * slot
            out[at + 1] = entry[0] == "+"
            if owner != seat and entry[0] != "+":
                continue
            out[at] = 1.0
            cause, effect = entry[1:5], entry[6:]
            if owner == 1:  # White's laws lie on the board turned (R4)
                cause, effect = cause[::-1], effect[::-1]
            for i, cell in enumerate(cause):
                if cell != ".":
                    out[at + (2 if cell == mine else 6) + i] = 1.0
            if effect == "*":
                out[at + 10] = 1.0
            else:
                for i, cell in enumerate(effect):
                    if cell != ".":
                        out[at + (11 if cell == mine else 15) + i] = 1.0
    return out


def test_the_planes_of_the_rules_examples_from_each_side() -> None:
    for position in EXAMPLES:
        env = envs.make("yinyang")
        env.reset(options={"position": position})
        for seat, agent in enumerate(AGENTS):
            observed = env.observe(agent)["observation"]
            assert observed.shape == (163, 4, 4)
            assert observed.dtype == np.float32
            assert np.array_equal(observed, expected_planes(position, seat)), (position, agent)


def test_the_planes_of_the_late_example_by_hand() -> None:
    """Rules §8.2's late position, Black (p1) to act: a few planes spelt out square by square."""
    position = EXAMPLES[5]  # bww./b.b./.w.b/b.bb ... 6 10 45
    env = envs.make("yinyang")
    env.reset(options={"position": position})
    black = env.observe("player_0")["observation"]
    white = env.observe("player_1")["observation"]
    black_squares = {(3, 0), (2, 0), (2, 2), (1, 3), (0, 0), (0, 2), (0, 3)}  # a4 a3 c3 d2 a1 c1 d1
    white_squares = {(3, 1), (3, 2), (1, 1)}  # b4 c4 b2
    assert {tuple(x) for x in np.argwhere(black[0])} == black_squares
    assert {tuple(x) for x in np.argwhere(black[1])} == white_squares
    assert {tuple(x) for x in np.argwhere(white[0])} == white_squares
    assert black[2, 3, 3] == white[3, 3, 3] == 1
    assert black[2].sum() == 1
    assert black[4].min() == black[4].max() == 0.75
    assert black[5].max() == 1.0
    assert white[4].max() == 1.0
    assert white[5].max() == 0.75
    assert black[6].all()  # Black is to act
    assert not white[6].any()
    assert black[8].all()  # phase start
    assert not black[7].any()
    assert not black[9].any()
    assert black[10, 0, 0] == pytest.approx(0.045)
    # White's L3 -wwwb>w.wb is hidden: all zeros for Black, known for White
    assert not black[THEIRS + 2 * 19 : THEIRS + 3 * 19].any()
    assert white[OWN + 2 * 19].all()
    assert not white[OWN + 2 * 19 + 1].any()
    # White's L1 +bbw.>b.w. reads on the board .wbb>.w.b: for Black, TR is White's colour,
    # BL and BR Black's; its effect keeps TR white and BR black
    law = black[THEIRS : THEIRS + 19, 0, 0].tolist()
    assert law[:2] == [1, 1]
    assert law[2:6] == [0, 0, 1, 1]
    assert law[6:10] == [0, 1, 0, 0]
    assert law[10] == 0
    assert law[11:15] == [0, 0, 0, 1]
    assert law[15:19] == [0, 1, 0, 0]
    # and White sees the same law with the colours the other way round
    assert white[OWN : OWN + 19, 0, 0].tolist()[2:10] == [0, 1, 0, 0, 0, 0, 1, 1]


def test_the_planes_of_random_positions_and_the_causes_of_applicable_laws() -> None:
    """Every position met in random play, from each side, decodes as the page says; and the
    cause planes of each law the agent to act may apply are its window's cells (the laws lie
    in the frame of the board)."""
    adapter = envs.adapter("yinyang")
    windows = 0
    for position in POSITIONS:
        state = GAME.state_from_string(position)
        for seat in (0, 1):
            observed = adapter.observe(state.view(seat), seat, ())
            assert np.array_equal(observed, expected_planes(position, seat)), (position, seat)
        if state.is_terminal() or state.phase() == "setup":
            continue
        seat = state.to_move()
        observed = adapter.observe(state.view(seat), seat, ())
        for action in adapter.legal(state, ())[0]:
            token = adapter.token(action)
            if not token.startswith("L"):
                continue
            slot, anchor = int(token[1]) - 1, token[3:5]
            file, rank = "abc".index(anchor[0]), int(anchor[1]) - 1
            cells = [(rank + 1, file), (rank + 1, file + 1), (rank, file), (rank, file + 1)]
            at = OWN + 19 * slot
            for i, (r, f) in enumerate(cells):
                assert observed[at + 2 + i, 0, 0] == observed[0, r, f]
                assert observed[at + 6 + i, 0, 0] == observed[1, r, f]
            windows += 1
    assert windows > 100


# -- (e) a bot writes its laws ----------------------------------------------------------------


def test_bot_policy_plays_the_setup_in_four_actions() -> None:
    env = envs.make("yinyang")
    policy = envs.bot_policy("alphabeta", depth=1)
    for agent in AGENTS:
        actions = []
        for _ in range(4):
            assert env.agent_selection == agent
            action = policy(env)
            assert action in env.legal_actions()
            assert action >= 58441
            actions.append(action)
            env.step(action)
        seat = AGENTS.index(agent)
        written = env.state.to_string().split()[3 + seat]
        assert written == ",".join(f"-{LAWS[a - 58441]}" for a in actions)
    assert env.state.phase() == "start" or env.state.is_terminal()
