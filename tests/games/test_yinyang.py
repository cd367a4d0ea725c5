"""Yin Yang rules: the vectors of tests/data/yinyang, an independent reference on strings, views
and redaction, notation, position strings, and one regression test per tricky rule of
rules/yinyang.md."""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import games
from enginesrv.cli import main
from games import yinyang

DATA = Path(__file__).parent.parent / "data" / "yinyang"
GAME = yinyang.YinYangGame()
START = "bwww/bwww/bbbw/bbbw b setup none none 8 10 0"
BLACK_LAWS = "bwbb>b.bb,..bb>bbbb,bwbw>*,bw.w>b..w"
WHITE_LAWS = "wbww>w.ww,..ww>wwww,wbwb>*,.bb.>wbbw"
EXAMPLE = (
    "bwww/bwww/bbbw/bbbw b start -bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
    "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 1"
)
TURN3 = (
    "bwww/bwww/bb.w/bbbw b start -bwbb>b.bb,-..bb>bbbb,+bwbw>*,-bw.w>b..w "
    "+wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 3"
)
LOW_RESERVES = (
    "..ww/...w/..../bb.. b start -..bb>bbbb,-....>ww..,-bwbw>*,-bw.w>b..w "
    "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 0 2 41"
)


def read_jsonl(name: str) -> list[dict[str, Any]]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def play(pos: str, *tokens: str) -> yinyang.YinYangState:
    state = GAME.state_from_string(pos)
    for token in tokens:
        state.push(state.parse_move(token))
    return state


def tokens_of(state: games.State) -> list[str]:
    """All legal tokens, sorted (not for setup positions)."""
    return sorted(state.move_to_str(m) for m in state.legal_moves())


def summary(state: games.State) -> tuple[list[str], list[str], int]:
    """(non-adaptation tokens, adaptation pairs ``Lk@A``, count) as the moves file writes them."""
    tokens = tokens_of(state)
    plain = [t for t in tokens if ":" not in t]
    adapt = sorted({t.partition(":")[0] for t in tokens if ":" in t})
    return plain, adapt, len(tokens)


def winner(state: games.State) -> str | None:
    outcome = state.outcome()
    return None if outcome is None else outcome.winner


# -- an independent reference, written from the rule file on strings ---------------------------

# Rules §2, the neighbour table as data (N, E, S, W).
NEIGHBOURS: dict[str, list[str]] = {
    "a1": ["a2", "b1"], "b1": ["b2", "c1", "a1"], "c1": ["c2", "d1", "b1"], "d1": ["d2", "c1"],
    "a2": ["a3", "b2", "a1"], "b2": ["b3", "c2", "b1", "a2"], "c2": ["c3", "d2", "c1", "b2"],
    "d2": ["d3", "d1", "c2"], "a3": ["a4", "b3", "a2"], "b3": ["b4", "c3", "b2", "a3"],
    "c3": ["c4", "d3", "c2", "b3"], "d3": ["d4", "d2", "c3"], "a4": ["b4", "a3"],
    "b4": ["c4", "b3", "a4"], "c4": ["d4", "c3", "b4"], "d4": ["d3", "c4"],
}  # fmt: skip
# Rules §2, window squares for law positions TL, TR, BL, BR, per owner.
WINDOWS: dict[str, dict[str, list[str]]] = {
    "b": {"a1": ["a2", "b2", "a1", "b1"], "b1": ["b2", "c2", "b1", "c1"],
          "c1": ["c2", "d2", "c1", "d1"], "a2": ["a3", "b3", "a2", "b2"],
          "b2": ["b3", "c3", "b2", "c2"], "c2": ["c3", "d3", "c2", "d2"],
          "a3": ["a4", "b4", "a3", "b3"], "b3": ["b4", "c4", "b3", "c3"],
          "c3": ["c4", "d4", "c3", "d3"]},
    "w": {"a1": ["b1", "a1", "b2", "a2"], "b1": ["c1", "b1", "c2", "b2"],
          "c1": ["d1", "c1", "d2", "c2"], "a2": ["b2", "a2", "b3", "a3"],
          "b2": ["c2", "b2", "c3", "b3"], "c2": ["d2", "c2", "d3", "c3"],
          "a3": ["b3", "a3", "b4", "a4"], "b3": ["c3", "b3", "c4", "b4"],
          "c3": ["d3", "c3", "d4", "c4"]},
}  # fmt: skip
ANCHORS = list(WINDOWS["b"])


def ref_kind(law: str) -> str | None:
    """R3: "adapt", "destroy", "regen", or None for an invalid law."""
    cause, _, effect = law.partition(">")
    if effect == "*":
        return "adapt"
    changed = [(c, e) for c, e in zip(cause, effect, strict=True) if c != e]
    if len(changed) == 1 and changed[0][0] != "." and changed[0][1] == ".":
        return "destroy"
    if len(changed) == 2 and {c for c, _ in changed} == {"."} and changed[0][1] == changed[1][1]:
        return "regen"
    return None


ALL_LAWS = [
    f"{c}>{e}"
    for c in map("".join, itertools.product(".bw", repeat=4))
    for e in [*map("".join, itertools.product(".bw", repeat=4)), "*"]
    if ref_kind(f"{c}>{e}")
]


@dataclass
class Ref:
    cells: dict[str, str]
    side: str
    phase: str
    laws: dict[str, list[str] | None]
    res: dict[str, int]
    turn: int
    moves: list[str] = field(default_factory=list)


def ref_parse(pos: str) -> Ref:
    board, side, phase, lb, lw, rb, rw, turn = pos.split(" ")
    cells = {
        f"{'abcd'[f]}{4 - i}": row[f] for i, row in enumerate(board.split("/")) for f in range(4)
    }
    laws = {s: None if v == "none" else v.split(",") for s, v in (("b", lb), ("w", lw))}
    return Ref(cells, side, phase, laws, {"b": int(rb), "w": int(rw)}, int(turn))


def ref_format(p: Ref) -> str:
    board = "/".join("".join(p.cells[f + r] for f in "abcd") for r in "4321")
    lb, lw = ("none" if p.laws[s] is None else ",".join(p.laws[s] or []) for s in "bw")
    return f"{board} {p.side} {p.phase} {lb} {lw} {p.res['b']} {p.res['w']} {p.turn}"


def ref_applications(p: Ref) -> list[tuple[int, str, str]]:
    """R5: (slot 1-4, anchor, law) of every applicable law of the side to act."""
    me = p.side
    revealed = [
        (o, i, e[1:5] if o == "b" else e[1:5][::-1])
        for o in "bw"
        for i, e in enumerate(p.laws[o] or [])
        if e.startswith("+")
    ]
    out = []
    for i, entry in enumerate(p.laws[me] or []):
        if entry == "?":
            continue
        law = entry[1:]
        absolute_cause = law[:4] if me == "b" else law[:4][::-1]
        if any(c == absolute_cause and (o, j) != (me, i) for o, j, c in revealed):
            continue
        if ref_kind(law) == "regen":
            colour = next(e for c, e in zip(law[:4], law[5:], strict=True) if c != e)
            if p.res[colour] < 2:
                continue
        for anchor in ANCHORS:
            if all(p.cells[sq] == law[k] for k, sq in enumerate(WINDOWS[me][anchor])):
                out.append((i + 1, anchor, law))
    return out


def ref_piece_moves(p: Ref) -> list[str]:
    return [
        f"{sq}-{n}"
        for sq, ch in p.cells.items()
        if ch == p.side
        for n in NEIGHBOURS[sq]
        if p.cells[n] == "."
    ]


def ref_winner(p: Ref) -> str | None:
    """§6 on a start position (None: the game goes on)."""
    black_goal = p.cells["d4"] == "b"
    white_goal = p.cells["a1"] == "w"
    other = "p2" if p.side == "b" else "p1"
    if black_goal and white_goal:
        return other
    if black_goal:
        return "p1"
    if white_goal:
        return "p2"
    if not ref_piece_moves(p) and not ref_applications(p):
        return other
    return None


def ref_summary(pos: str) -> tuple[list[str], list[str], int, str | None]:
    p = ref_parse(pos)
    if p.phase == "start":
        won = ref_winner(p)
        if won:
            return [], [], 0, won
    plain = ref_piece_moves(p) if p.phase == "start" else ["end"]
    adapt: list[str] = []
    for slot, anchor, law in ref_applications(p):
        (adapt if ref_kind(law) == "adapt" else plain).append(f"L{slot}@{anchor}")
    return sorted(plain), sorted(adapt), len(plain) + 1621 * len(adapt), None


def ref_play(pos: str, token: str) -> str:
    """The referee position after a legal full token (rules §4, R1, R6, R8, R9)."""
    p = ref_parse(pos)
    me = p.side
    end_turn = True
    if token.startswith("laws:"):
        p.laws[me] = ["-" + law for law in token[5:].split(",")]
        if me == "b":
            p.side = "w"
            end_turn = False
    elif token == "end":
        pass
    elif not token.startswith("L"):
        frm, to = token.split("-")
        p.cells[frm], p.cells[to] = ".", me
        p.phase = "moved"
        end_turn = False
    else:
        head, _, rest = token.partition(":")
        slot, anchor = int(head[1]) - 1, head[3:]
        laws = p.laws[me]
        assert laws is not None
        law = laws[slot][1:]
        laws[slot] = "+" + law
        squares = WINDOWS[me][anchor]
        if ref_kind(law) == "adapt":
            if rest != "keep":
                laws[int(rest[1]) - 1] = "-" + rest[3:]
        else:
            for k, (c, e) in enumerate(zip(law[:4], law[5:], strict=True)):
                if c != e:
                    p.cells[squares[k]] = e
            if ref_kind(law) == "regen":
                colour = next(e for c, e in zip(law[:4], law[5:], strict=True) if c != e)
                p.res[colour] -= 2
    if end_turn:
        p.side = "w" if me == "b" else "b"
        p.phase = "start"
        p.turn += 1
    return ref_format(p)


# -- seeded random games with laws that tend to fit the board -----------------------------------


def useful_law(rng: random.Random, p: Ref, owner: str) -> str:
    """A law whose cause is often some window of the board as ``owner`` reads it (uniform laws
    rarely fit a board, and the game would end at once)."""
    if rng.random() < 0.3:
        return rng.choice(ALL_LAWS)
    anchor = rng.choice(ANCHORS)
    cause = "".join(p.cells[sq] for sq in WINDOWS[owner][anchor])
    options = [law for law in ALL_LAWS if law.startswith(cause + ">")]
    return rng.choice(options)


def pick_token(rng: random.Random, pos: str) -> str:
    """A random legal token, each group (piece move, application, end) equally likely."""
    p = ref_parse(pos)
    if p.phase == "setup":
        return "laws:" + ",".join(useful_law(rng, p, p.side) for _ in range(4))
    plain, adapt, _, _ = ref_summary(pos)
    choice = rng.choice(plain + adapt)
    if choice not in adapt:
        return choice
    if rng.random() < 0.3:
        return choice + ":keep"
    return f"{choice}:L{rng.randint(1, 4)}={useful_law(rng, p, p.side)}"


def random_game(seed: int, max_plies: int = 120) -> list[str]:
    """The tokens of a seeded random game from the start (computed on the reference)."""
    rng = random.Random(seed)
    pos = START
    tokens: list[str] = []
    while len(tokens) < max_plies:
        p = ref_parse(pos)
        if p.phase == "start" and ref_winner(p):
            break
        token = pick_token(rng, pos)
        tokens.append(token)
        pos = ref_play(pos, token)
    return tokens


GAME_SEEDS = range(40)


# -- the data files ----------------------------------------------------------------------------


@pytest.mark.parametrize("vector", read_jsonl("yinyang-moves.jsonl"), ids=lambda v: v["id"])
def test_moves_vectors(vector: dict[str, Any]) -> None:
    state = GAME.state_from_string(vector["pos"])
    assert state.to_string() == vector["pos"]
    plain, adapt, count = summary(state)
    assert plain == vector["moves"]
    assert adapt == vector.get("adapt", [])
    assert count == vector.get("count", len(vector["moves"]))
    assert state.count_moves() == count
    assert count == len(plain) + yinyang.TOKENS_PER_ADAPTATION * len(adapt)
    if "outcome" in vector:
        outcome = state.outcome()
        assert outcome is not None
        assert outcome.as_dict() == vector["outcome"]  # no scores
        assert state.is_terminal()
        assert state.to_move() == games.NOBODY
    else:
        assert state.outcome() is None
        assert state.to_move() == (0 if vector["pos"].split()[1] == "b" else 1)
    assert ref_summary(vector["pos"])[:3] == (plain, adapt, count)


def test_every_adaptation_pair_is_1621_tokens() -> None:
    state = GAME.state_from_string(EXAMPLE)
    tokens = tokens_of(state)
    per_pair = [t for t in tokens if t.startswith("L3@a3")]
    assert len(per_pair) == 1621
    assert "L3@a3:keep" in per_pair
    assert sum(t.startswith("L3@a3:L2=") for t in per_pair) == 405
    assert len(set(tokens)) == len(tokens) == 3243


@pytest.mark.parametrize("vector", read_jsonl("yinyang-transitions.jsonl"), ids=lambda v: v["id"])
def test_transition_vectors(vector: dict[str, Any]) -> None:
    state = GAME.state_from_string(vector["pos"])
    move = state.parse_move(vector["move"])
    mover = state.to_move()
    assert state.move_to_str(move) == vector["move"]
    assert state.public_move_str(move, mover) == vector["move"]
    assert state.public_move_str(move, 1 - mover) == vector["shown"]
    assert state.public_move_str(move, None) == vector["shown"]
    state.push(move)
    assert state.to_string() == vector["next"]
    assert winner(state) == vector["winner"]
    assert ref_play(vector["pos"], vector["move"]) == vector["next"]
    state.pop()
    assert state.to_string() == vector["pos"]


@pytest.mark.parametrize("vector", read_jsonl("yinyang-views.jsonl"), ids=lambda v: v["id"])
def test_view_vectors(vector: dict[str, Any]) -> None:
    state = GAME.state_from_string(vector["pos"])
    for viewer, name in ((games.P1, "p1"), (games.P2, "p2"), (None, "public")):
        view = state.view(viewer)
        assert isinstance(view, yinyang.YinYangState)
        assert view.to_string() == vector[name]
        assert GAME.state_from_string(vector[name]).to_string() == vector[name]
        assert view.view(viewer).to_string() == vector[name]
    assert state.to_string() == vector["pos"]  # a view leaves the referee state alone


def read_perft() -> list[tuple[str, str, int, int]]:
    out = []
    name = pos = ""
    for line in (DATA / "yinyang.perft").read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition(" ")
        if key == "id":
            name = value
        elif key == "pos":
            pos = value
        elif key == "perft":
            depth, leaves = value.split()
            out.append((name, pos, int(depth), int(leaves)))
    return out


@pytest.mark.parametrize("vector", read_perft(), ids=lambda v: f"{v[0]}-d{v[2]}")
def test_perft_vectors(vector: tuple[str, str, int, int]) -> None:
    """All of them, also the two above the generic test's slow bound: they take milliseconds."""
    _, pos, depth, leaves = vector
    state = GAME.state_from_string(pos)
    assert games.perft(state, depth) == leaves
    assert state.to_string() == pos


def test_registered() -> None:
    game = games.load("yinyang")
    assert isinstance(game, yinyang.YinYangGame)
    assert game.start_position == START
    assert game.colours == ("Black", "White")
    assert game.max_plies is None
    assert "yinyang" in games.available()


# -- the reference and the engine agree over random games ---------------------------------------


@pytest.mark.parametrize("seed", GAME_SEEDS)
def test_random_games_match_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    state = GAME.new_state()
    pos = START
    for token in random_game(seed):
        plain, adapt, count, won = ref_summary(pos)
        assert winner(state) == won
        if state.phase() != "setup":
            assert summary(state) == (plain, adapt, count), pos
            assert state.count_moves() == count == len(state.legal_moves())
            moves = state.legal_moves()
            for move in rng.sample(list(moves), min(3, len(moves))):
                assert state.parse_move(state.move_to_str(move)) == move
        move = state.parse_move(token)
        before = (state.to_string(), state.key())
        twin = state.copy()
        state.push(move)
        pos = ref_play(pos, token)
        assert state.to_string() == pos
        again = GAME.state_from_string(pos)
        assert again.key() == state.key()
        assert again.to_move() == state.to_move()
        assert state.pop() == move
        assert (state.to_string(), state.key()) == before
        assert twin.to_string() == before[0]
        state.push(move)
    assert winner(state) == ref_summary(pos)[3]
    while state.ply():
        state.pop()
    assert state.to_string() == START
    with pytest.raises(IndexError):
        state.pop()


def test_random_games_are_not_trivial() -> None:
    """The random games above reach mid-game positions and end in several ways."""
    lengths = [len(random_game(seed)) for seed in GAME_SEEDS]
    assert max(lengths) > 30
    assert sum(lengths) > 400


def test_uniform_random_playouts_through_the_interface() -> None:
    """What the generic playout test does, by ``len`` and indexing: the setup ply has 405^4
    moves, so its ``legal_moves()`` is indexed, never turned into a list."""
    rng = random.Random(5)
    ended = 0
    for _ in range(60):
        state = GAME.new_state()
        history: list[tuple[str, int]] = []
        while not state.is_terminal() and len(history) < 3000:
            moves = state.legal_moves()
            assert len(moves) == state.count_moves() > 0
            move = moves[rng.randrange(len(moves))]
            assert state.parse_move(state.move_to_str(move)) == move
            assert state.public_move_str(move, state.to_move())
            history.append((state.to_string(), state.key()))
            state.push(move)
            text = state.to_string()
            assert GAME.state_from_string(text).key() == state.key()
            for viewer in (games.P1, games.P2, None):
                view = state.view(viewer).to_string()
                assert GAME.state_from_string(view).to_string() == view
        if state.is_terminal():
            ended += 1
            assert state.to_move() == games.NOBODY
            assert list(state.legal_moves()) == []
            assert state.count_moves() == 0
            assert games.perft(state, 2) == 0
        while history:
            state.pop()
            assert (state.to_string(), state.key()) == history.pop()
    assert ended >= 55


# -- views and redaction --------------------------------------------------------------------------


def write_events(tokens: list[str], player: str) -> list[tuple[int, int | None, bool]]:
    """Every law ``player`` writes: (token index, slot for a setup else None, applied later)."""
    applied: dict[int, tuple[int, int | None]] = {}  # slot -> the write that is in it
    events: dict[tuple[int, int | None], bool] = {}
    pos = START
    for index, token in enumerate(tokens):
        mover = ref_parse(pos).side
        if mover == player:
            if token.startswith("laws:"):
                for slot in range(4):
                    applied[slot] = (index, slot)
                    events[index, slot] = False
            elif token.startswith("L"):
                slot = int(token[1]) - 1
                events[applied[slot]] = True
                if ":L" in token:
                    applied[int(token.split(":L")[1][0]) - 1] = (index, None)
                    events[index, None] = False
        pos = ref_play(pos, token)
    return [(i, s, used) for (i, s), used in events.items()]


def with_other_hidden_texts(tokens: list[str], player: str, rng: random.Random) -> list[str]:
    """The same game, with every law of ``player`` that is never applied replaced by another
    valid law: nothing the opponent may see should change."""
    out = list(tokens)
    for index, slot, used in write_events(tokens, player):
        if used:
            continue
        token = out[index]
        if slot is not None:
            laws = token[5:].split(",")
            laws[slot] = rng.choice([law for law in ALL_LAWS if law != laws[slot]])
            out[index] = "laws:" + ",".join(laws)
        else:
            head, _, old = token.rpartition("=")
            out[index] = f"{head}={rng.choice([law for law in ALL_LAWS if law != old])}"
    return out


@pytest.mark.parametrize("seed", GAME_SEEDS)
def test_redaction_never_leaks_a_hidden_law(seed: int) -> None:
    """Property: rerun a random game with other texts in the laws a player never applies. Every
    view of the opponent and of a spectator, every token as they are shown it and the moves the
    opponent's view lists are the same in both games."""
    rng = random.Random(seed)
    tokens = random_game(seed)
    for player, seat in (("b", games.P1), ("w", games.P2)):
        other = with_other_hidden_texts(tokens, player, rng)
        a, b = GAME.new_state(), GAME.new_state()
        for token_a, token_b in zip(tokens, other, strict=True):
            for viewer in (1 - seat, None):
                assert a.view(viewer).to_string() == b.view(viewer).to_string()
            view_a = a.view(1 - seat)
            if view_a.to_move() == 1 - seat:
                assert view_a.count_moves() == b.view(1 - seat).count_moves()
            move_a = a.parse_move(token_a)
            move_b = b.parse_move(token_b)  # the other texts change no legality
            for viewer in (1 - seat, None):
                shown = a.public_move_str(move_a, viewer)
                assert shown == b.public_move_str(move_b, viewer)
                if a.to_move() == seat and (token_a.startswith("laws:") or "=" in token_a):
                    assert shown.endswith("?"), shown  # no text of a law being written
            a.push(move_a)
            b.push(move_b)
            # the opponent's view shows no hidden law of the player
            entries = a.view(1 - seat).to_string().split(" ")[3 + seat].split(",")
            assert not any(entry.startswith("-") for entry in entries)
        assert a.view(1 - seat).to_string() == b.view(1 - seat).to_string()


@pytest.mark.parametrize("seed", GAME_SEEDS)
def test_views_replay_the_shown_moves(seed: int) -> None:
    """A view fed the shown form of each move follows the referee exactly, except for the plain
    application of a law it does not know, which it refuses (then it needs the next view)."""
    referee = GAME.new_state()
    assert isinstance(referee, yinyang.YinYangState)
    views = {viewer: referee.view(viewer) for viewer in (games.P1, games.P2, None)}
    refused = 0
    for token in random_game(seed):
        move = referee.parse_move(token)
        mover = referee.to_move()
        referee_after = referee.copy()
        referee_after.push(move)
        for viewer, view in views.items():
            shown = referee.public_move_str(move, viewer)
            if viewer == mover:
                assert shown == token
            entries = view.law_entries(mover) or ()
            if token.startswith("L") and ":" not in token and entries[int(token[1]) - 1] == "?":
                with pytest.raises(games.IllegalMoveError, match="send the new view"):
                    view.parse_shown_move(shown)
                views[viewer] = referee_after.view(viewer)  # the next view, as a position
                refused += 1
                continue
            view.push(view.parse_shown_move(shown))
            expected = referee_after.view(viewer)
            assert view.to_string() == expected.to_string()
            assert view.outcome() == expected.outcome()
        referee = referee_after
    assert refused <= 3 * len(random_game(seed))


@pytest.mark.parametrize(
    ("pos", "token", "needle"),
    [
        (TURN3, "laws:?,?,?,?", "only in the setup phase"),
        (TURN3, "L1@a2:L2=?", "takes no adaptation part"),
    ],
)
def test_shown_forms_are_still_checked_as_shown(pos: str, token: str, needle: str) -> None:
    """The view API reads the shown forms, but only where such a move could have been made."""
    state = GAME.state_from_string(pos)
    with pytest.raises(games.IllegalMoveError) as info:
        state.parse_shown_move(token)
    assert needle in info.value.reason
    assert state.to_string() == pos


def test_the_mover_may_not_play_a_shown_form() -> None:
    """What the side to act may play never hides what it wrote: ``parse_move`` refuses the
    shown forms that ``parse_shown_move`` reads, and says which to use."""
    state = GAME.new_state()
    assert isinstance(state, yinyang.YinYangState)
    with pytest.raises(games.IllegalMoveError, match="parse_shown_move"):
        state.parse_move("laws:?,?,?,?")
    state.push(state.parse_shown_move("laws:?,?,?,?"))
    assert state.law_entries(games.P1) == ("?", "?", "?", "?")


def test_a_view_accepts_the_redacted_setup() -> None:
    mine = play(START, f"laws:{BLACK_LAWS}")  # Black's view: the same as the referee's
    mine.push(mine.parse_shown_move("laws:?,?,?,?"))
    assert mine.to_string() == (
        "bwww/bwww/bbbw/bbbw b start -bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w ?,?,?,? 8 10 1"
    )
    assert (
        mine.to_string()
        == play(START, f"laws:{BLACK_LAWS}", f"laws:{WHITE_LAWS}").view(games.P1).to_string()
    )
    assert tokens_of(mine) == tokens_of(GAME.state_from_string(EXAMPLE))
    theirs = GAME.state_from_string(START)
    theirs.push(theirs.parse_shown_move("laws:?,?,?,?"))
    assert theirs.to_string() == "bwww/bwww/bbbw/bbbw w setup ?,?,?,? none 8 10 0"
    theirs.push(theirs.parse_move(f"laws:{WHITE_LAWS}"))
    assert not theirs.is_terminal()  # Black's laws are unknown: Black may well have a token


def test_a_view_learns_a_hidden_adaptation_from_its_application() -> None:
    white_view = GAME.state_from_string(EXAMPLE).view(games.P2)
    assert white_view.law_entries(games.P1) == ("?", "?", "?", "?")
    white_view.push(white_view.parse_move("L3@a3:keep"))
    # only bwbw>* fits a3 (b w over b w) as an adaptation: the view now knows it
    assert white_view.to_string() == play(EXAMPLE, "L3@a3:keep").view(games.P2).to_string()
    assert white_view.law_entries(games.P1) == ("?", "?", "+bwbw>*", "?")


def test_a_view_accepts_a_redacted_rewrite_of_a_revealed_adaptation() -> None:
    referee = GAME.state_from_string(TURN3)
    white_view = referee.view(games.P2)
    move = referee.parse_move("L3@a3:L2=....>.b.b")
    shown = referee.public_move_str(move, games.P2)
    assert shown == "L3@a3:L2=?"
    white_view.push(white_view.parse_shown_move(shown))
    referee.push(move)
    assert white_view.to_string() == referee.view(games.P2).to_string()
    assert white_view.law_entries(games.P1) == ("?", "?", "+bwbw>*", "?")


def test_a_view_refuses_the_application_of_a_law_it_does_not_know() -> None:
    white_view = GAME.state_from_string(EXAMPLE).view(games.P2)
    before = white_view.to_string()
    with pytest.raises(games.IllegalMoveError, match="send the new view as a position"):
        white_view.parse_move("L1@a2")
    assert white_view.to_string() == before
    # a hidden law cannot be an adaptation whose cause conflicts with a revealed law
    view = GAME.state_from_string(
        "bwww/bwww/bbbw/bbbw w start -bwbb>b.bb,-..bb>bbbb,+bwbw>*,-bw.w>b..w ?,?,?,? 8 10 2"
    )
    with pytest.raises(games.IllegalMoveError, match="conflicts with the revealed law L3"):
        view.parse_move("L2@a3:keep")  # White reads a3 as wbwb: absolute bwbw, Black's L3


def test_a_view_lists_only_moves_that_need_no_hidden_law() -> None:
    """White to act after Black's L1@a2: the referee lists White's hidden L1 and L3 too; Black's
    view lists only White's piece moves. White's own view lists everything."""
    referee = play(EXAMPLE, "L1@a2")
    assert summary(referee) == (["L1@c2", "b4-b3", "c3-b3"], ["L3@c1"], 3 + 1621)
    assert summary(referee.view(games.P1)) == (["b4-b3", "c3-b3"], [], 2)
    assert summary(referee.view(None)) == (["b4-b3", "c3-b3"], [], 2)
    assert summary(referee.view(games.P2)) == summary(referee)


def test_terminal_on_a_view_only_when_provable() -> None:
    """Black has no token at turn 1 (t-03): the referee and Black's view know it; White's view
    cannot (Black's laws are unknown to it) and says the game goes on."""
    stuck = (
        "bwww/bwww/bbbw/bbbw b start -..bb>bbbb,-b.b.>bbbb,-.wb.>bwbb,-bw.w>b..w "
        "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 1"
    )
    referee = GAME.state_from_string(stuck)
    assert winner(referee) == "p2"
    assert winner(referee.view(games.P1)) == "p2"
    white_view = referee.view(games.P2)
    assert white_view.is_view()
    assert not white_view.is_terminal()
    assert white_view.outcome() is None
    assert white_view.to_move() == games.P1
    assert list(white_view.legal_moves()) == []
    # provable: every window reads ...., the cause of a revealed law, so no unknown law fits
    proved = GAME.state_from_string(
        "..../..../..../.... w start +....>.b.b,-..bb>bbbb,-bwbw>*,-bw.w>b..w ?,?,?,? 8 10 30"
    )
    assert proved.outcome() == games.Outcome("p1", "no-legal-token")
    # goals are on the board: every view sees them
    goal = GAME.state_from_string(
        "...b/..../..../b..w w start -....>.b.b,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
        "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 6 10 32"
    )
    for viewer in (games.P1, games.P2, None):
        assert goal.view(viewer).outcome() == games.Outcome("p1", "goal")


def test_public_move_str_redacts_only_the_private_part() -> None:
    state = GAME.new_state()
    move = state.parse_move(f"laws:{BLACK_LAWS}")
    assert state.public_move_str(move, games.P1) == f"laws:{BLACK_LAWS}"
    assert state.public_move_str(move, games.P2) == "laws:?,?,?,?"
    assert state.public_move_str(move, None) == "laws:?,?,?,?"
    state = GAME.state_from_string(EXAMPLE)
    for token, shown in (
        ("L3@c1:L2=....>.b.b", "L3@c1:L2=?"),
        ("L3@a3:L3=bwbw>*", "L3@a3:L3=?"),
        ("L3@a3:keep", "L3@a3:keep"),
        ("L1@a2", "L1@a2"),
    ):
        move = state.parse_move(token)
        assert state.public_move_str(move, games.P2) == shown
        assert state.public_move_str(move, games.P1) == token


def test_view_is_a_new_state_without_history() -> None:
    state = play(START, f"laws:{BLACK_LAWS}", f"laws:{WHITE_LAWS}", "L1@a2")
    view = state.view(games.P2)
    assert view is not state
    assert view.ply() == 0
    view.push(view.legal_moves()[0])
    assert state.to_string() == play(EXAMPLE, "L1@a2").to_string()


# -- regression tests, one per rule -----------------------------------------------------------


def test_white_laws_are_read_from_whites_seat() -> None:
    """R4: White's laws turn 180 degrees: wbww>w.ww reads wwbw and fits only c2 on the start
    board, removing c2 (White's TR is the absolute BL); ....>ww.. fills b1 and a1."""
    state = GAME.state_from_string(EXAMPLE.replace(" b start ", " w start ")[:-1] + "2")
    assert [t for t in tokens_of(state) if t.startswith("L1")] == ["L1@c2"]
    assert play(state.to_string(), "L1@c2").to_string().startswith("bwww/bwww/bb.w/bbbw b")
    regen = play(
        "...w/..../..../.... w start +bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
        "-....>ww..,-wbww>w.ww,-wbwb>*,-.bb.>wbbw 8 4 50",
        "L1@a1",
    )
    assert regen.to_string().startswith("...w/..../..../ww.. b start")


def test_black_and_white_destruction_of_the_same_text_differ() -> None:
    """The same text wwww>w.ww removes the TR cell as its owner sees it: c4 for Black at b3,
    but for White the absolute BL (b3) at b3."""
    full_white = "wwww/wwww/..../.... {side} start -wwww>w.ww,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
    black = GAME.state_from_string(
        full_white.format(side="b") + "-wwww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 7"
    )
    white = GAME.state_from_string(
        full_white.format(side="w") + "-wwww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 8"
    )
    assert play(black.to_string(), "L1@b3").to_string().startswith("ww.w/wwww/")
    assert play(white.to_string(), "L1@b3").to_string().startswith("wwww/w.ww/")


def test_regeneration_uses_the_shared_reserves() -> None:
    """R5.3, R6.3: reserves are per colour and shared: Black's law adding white pieces spends the
    white reserve, which then blocks White's own white regeneration."""
    assert "L1@a1" not in tokens_of(GAME.state_from_string(LOW_RESERVES))  # black reserve 0
    after = play(LOW_RESERVES, "L2@a2")
    assert after.reserves() == (0, 0)
    assert after.to_string().split(" ")[0] == "..ww/ww.w/..../bb.."
    pos = (
        "..../..../..../bb.. w start +bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
        "-....>ww..,-wbww>w.ww,-wbwb>*,-.bb.>wbbw 8 {} 30"
    )
    assert len(tokens_of(GAME.state_from_string(pos.format(2)))) == 7  # case-10
    assert winner(GAME.state_from_string(pos.format(0))) == "p1"  # case-11
    odd = GAME.state_from_string(pos.format(1).replace("..../", "...w/", 1))
    with pytest.raises(games.IllegalMoveError, match="white reserve holds 1"):
        odd.parse_move("L1@a2")


def test_conflicts_only_with_revealed_laws() -> None:
    """R5.2: hidden laws never block; a revealed law of either player blocks another law with
    the same absolute cause, even an own one; a rewritten law is hidden and stops blocking."""
    assert "L3@a3" in summary(GAME.state_from_string(EXAMPLE))[1]  # White's wbwb>* is hidden
    blocked = GAME.state_from_string(
        "bwww/bwww/bbbw/bbbw w start -bwbb>b.bb,-..bb>bbbb,+bwbw>*,-bw.w>b..w "
        "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 2"
    )
    assert summary(blocked) == (["L1@c2"], [], 1)
    with pytest.raises(games.IllegalMoveError, match="conflicts with the revealed law L3 of Black"):
        blocked.parse_move("L3@a3:keep")
    own = GAME.state_from_string(
        "bwww/bwww/bbbw/bbbw b start +bwbb>b.bb,-bwbb>bwb.,-bwbw>*,-bw.w>b..w "
        "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 3"
    )
    assert not any(t.startswith("L2") for t in tokens_of(own))
    with pytest.raises(games.IllegalMoveError, match="L1 of Black"):
        own.parse_move("L2@a2")
    rewritten = play(TURN3, "L3@a3:L3=bwbw>*")
    assert summary(rewritten)[1] == ["L3@a3"]  # case-12: White's wbwb>* now fits a3


def test_adaptation_makes_the_rewritten_law_hidden_and_unusable_this_turn() -> None:
    """R8: the rewrite is hidden (``-``), whatever the old law was, and the turn is over, so the
    rewritten law cannot be applied before the player's next turn."""
    after = play(TURN3, "L3@a3:L1=wwww>w.ww")
    assert after.law_entries(games.P1) == ("-wwww>w.ww", "-..bb>bbbb", "+bwbw>*", "-bw.w>b..w")
    assert after.to_move() == games.P2
    assert after.phase() == "start"
    later = play(after.to_string(), "d2-c2", "end")  # Black's next turn: now it may apply
    assert "L1@b3" in tokens_of(later)
    itself = play(TURN3, "L3@a3:L3=....>bb..")
    assert (itself.law_entries(games.P1) or ())[2] == "-....>bb.."
    kept = play(TURN3, "L3@a3:keep")
    assert (kept.law_entries(games.P1) or ())[2] == "+bwbw>*"


def test_end_only_in_phase_moved() -> None:
    with pytest.raises(games.IllegalMoveError, match="only after a piece move"):
        GAME.state_from_string(TURN3).parse_move("end")
    moved = play(TURN3, "b2-c2")
    assert moved.phase() == "moved"
    assert moved.to_move() == games.P1
    assert "end" in tokens_of(moved)
    assert play(moved.to_string(), "end").to_move() == games.P2


def test_no_law_then_move_and_one_move_per_turn() -> None:
    """R7: a law application ends the turn; after a piece move no second move."""
    after_law = play(EXAMPLE, "L1@a2")
    assert after_law.to_move() == games.P2
    moved = play(TURN3, "b2-c2")
    with pytest.raises(games.IllegalMoveError, match="already moved"):
        moved.parse_move("c2-b2")
    assert not any("-" in t and not t.startswith("L") for t in tokens_of(moved))


def test_corner_win_at_end_of_turn_only() -> None:
    """§6: a black piece on d4 after the move but removed by the law of the same turn does not
    win; the game is never over in phase moved."""
    moved = GAME.state_from_string(
        "..wb/..w./..../b... b moved -wbw.>w.w.,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
        "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 23"
    )
    assert not moved.is_terminal()
    assert winner(play(moved.to_string(), "L1@c3")) is None
    ended = play(moved.to_string(), "end")
    assert ended.outcome() == games.Outcome("p1", "goal")
    assert ended.legal_moves() == []
    with pytest.raises(games.IllegalMoveError, match="game is over"):
        ended.parse_move("c4-c3")


def test_both_goals_go_to_the_player_who_completed_the_turn() -> None:
    black_turn = (
        "...b/..../bb../...w b moved -bb..>bbww,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
        "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 45"
    )
    assert play(black_turn, "L1@a1").outcome() == games.Outcome("p1", "both-goals")
    # White moves onto a1, then its ....>..bb (owner BL, BR = absolute TR, TL) adds black on
    # d4 and c4: both goals at the end of White's turn, so White wins.
    white_turn = (
        "..../..../b.../.w.. w start -bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
        "-....>..bb,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 46"
    )
    moved = play(white_turn, "b1-a1")
    assert moved.outcome() is None  # never over in phase moved
    done = play(moved.to_string(), "L1@c3")
    assert done.to_string().startswith("..bb/..../b.../w... b start")
    assert done.reserves() == (6, 10)
    assert done.outcome() == games.Outcome("p2", "both-goals")
    gift = (
        "..../..../bb../...w b start -bb..>bbww,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
        "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 45"
    )
    assert play(gift, "L1@a1").outcome() == games.Outcome("p2", "goal")


def test_both_goals_parsed_at_the_start_of_a_turn() -> None:
    both = "...b/..../..../w... {} start -bb..>bbww,-..bb>bbbb,-bwbw>*,-bw.w>b..w " + (
        "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 {}"
    )
    assert GAME.state_from_string(both.format("w", 46)).outcome() == games.Outcome(
        "p1", "both-goals"
    )
    assert GAME.state_from_string(both.format("b", 47)).outcome() == games.Outcome(
        "p2", "both-goals"
    )


def test_no_legal_token_loses() -> None:
    """§6 check 4, at the start of a turn only: a full board and no fitting cause loses; a player
    without pieces lives while one of its laws applies."""
    stuck = play(
        "bwww/bwww/bbbw/bbbw b start -bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
        "-..ww>wwww,-.bb.>wbbw,-....>ww..,-w.w.>wwww 8 10 1",
        "L3@a3:keep",
    )
    assert stuck.outcome() == games.Outcome("p1", "no-legal-token")
    alive = GAME.state_from_string(
        "..../..../..../bb.. w start +bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
        "-....>ww..,-wbww>w.ww,-wbwb>*,-.bb.>wbbw 8 10 30"
    )
    assert not alive.is_terminal()
    assert alive.count_moves() == 7
    only_end = GAME.state_from_string(
        "..ww/...w/b.../.b.. b moved -..bb>bbbb,-....>ww..,-bwbw>*,-bw.w>b..w "
        "-wbww>w.ww,-wbwb>*,-wbwb>*,-.bb.>wbbw 0 0 41"
    )
    assert tokens_of(only_end) == ["end"]


def test_black_without_a_fitting_law_loses_before_moving() -> None:
    state = play(START, "laws:..bb>bbbb,b.b.>bbbb,.wb.>bwbb,bw.w>b..w", f"laws:{WHITE_LAWS}")
    assert state.turn() == 1
    assert state.outcome() == games.Outcome("p2", "no-legal-token")


def test_positions_repeat_and_keys_ignore_the_turn() -> None:
    """§6: moving back and forth repeats a position but for the turn counter; the key leaves the
    turn out, so the repetition has the same key, while other differences change it."""
    pos = (
        "..../...w/b.../.... b start -bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w "
        "-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw 8 10 5"
    )
    start = GAME.state_from_string(pos)
    again = play(pos, "a2-a3", "end", "d3-d2", "end", "a3-a2", "end", "d2-d3", "end")
    assert again.to_string() == pos.replace(" 5", " 9")
    assert again.key() == start.key()
    keys = {
        start.key(),
        GAME.state_from_string(pos.replace("-bwbb", "+bwbb")).key(),
        GAME.state_from_string(pos.replace("-bwbb>b.bb", "?")).key(),
        GAME.state_from_string(pos.replace(" 8 10 ", " 6 10 ")).key(),
        GAME.state_from_string(pos.replace(" b start", " b moved")).key(),
        play(pos, "a2-a3").key(),
    }
    assert len(keys) == 6


# -- setup --------------------------------------------------------------------------------------


def test_setup_moves_are_a_lazy_sorted_sequence() -> None:
    state = GAME.new_state()
    moves = state.legal_moves()
    assert not isinstance(moves, list)
    assert len(moves) == 405**4 == state.count_moves() == 26_904_200_625
    assert isinstance(moves, yinyang.SetupMoves)
    first = list(itertools.islice(moves.generate(), 500))
    tokens = [state.move_to_str(m) for m in first]
    assert tokens == sorted(tokens)
    assert tokens[0] == "laws:" + ",".join([yinyang.LAW_TEXTS[0]] * 4)
    assert [moves[i] for i in range(500)] == first
    assert moves[-1] == moves[len(moves) - 1]
    assert state.move_to_str(moves[-1]) == "laws:" + ",".join([yinyang.LAW_TEXTS[-1]] * 4)
    assert moves[3:6] == first[3:6]
    move = state.parse_move(f"laws:{BLACK_LAWS}")
    assert move in moves
    assert moves[moves.index(move)] == move
    assert yinyang.END not in moves
    with pytest.raises(IndexError):
        moves[len(moves)]
    last = state.move_to_str(moves[-1])
    assert last > state.move_to_str(moves[-2])
    assert list(itertools.islice(moves.generate(len(moves) - 2), 5)) == [moves[-2], moves[-1]]
    with pytest.raises(TypeError, match="setup moves are not iterated"):
        [state.move_to_str(m) for m in moves]  # would walk 26.9e9 moves: refused at once


def test_setup_accepts_any_four_valid_laws() -> None:
    """R9: duplicates, one cause several times, no adaptation or only adaptations: all legal."""
    state = GAME.new_state()
    for laws in (
        "bwbb>b.bb,bwbb>b.bb,bwbb>b.bb,bwbb>b.bb",
        "....>*,....>*,....>*,....>*",
        "..bb>bbbb,..bb>wwbb,..bb>...b,..bb>*",
        "wwww>.www,bbbb>bbb.,w...>....,.b..>....",
    ):
        move = state.parse_move("laws:" + laws)
        assert state.move_to_str(move) == "laws:" + laws
    state.push(state.parse_move("laws:" + BLACK_LAWS))
    assert state.to_string() == (
        "bwww/bwww/bbbw/bbbw w setup -bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w none 8 10 0"
    )
    assert state.describe_moves().startswith("laws:<law>,<law>,<law>,<law>")
    assert GAME.state_from_string(EXAMPLE).describe_moves() == ""


def test_law_table() -> None:
    kinds = [yinyang.LAW_KIND[i] for i in range(yinyang.N_LAWS)]
    assert (kinds.count(0), kinds.count(1), kinds.count(2)) == (216, 108, 81)
    assert sorted(ALL_LAWS) == list(yinyang.LAW_TEXTS)
    for text in yinyang.LAW_TEXTS:
        expected = {"destroy": 0, "regen": 1, "adapt": 2}[ref_kind(text) or ""]
        assert yinyang.law_kind(text) == expected
    for text in ("bwbw>bwbw", "b...>w...", "....>b...", "bb..>....", "....>bw..", "bbbb>*x"):
        assert yinyang.law_kind(text) is None


# -- notation -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "needle"),
    [
        ("", "not a move token"),
        ("END", "not a move token"),
        ("l1@a2", "uppercase L"),
        ("L5@a2", "slot 1-4"),
        ("L1@d1", "d1 is not a window anchor"),
        ("L1@a4", "a4 is not a window anchor"),
        ("L1@a2:KEEP", "uppercase L"),
        ("L3@a3:L2=bwbw>bwbw", "not a valid law"),
        ("L3@a3:L2=bwb>*", "not a law"),
        ("L3@a3:L5=....>*", "uppercase L"),
        ("a1-e1", "a piece move"),
        ("B2-C2", "piece move"),
        ("laws:bwbb>b.bb,..bb>bbbb,bwbw>*", "4 laws"),
        ("laws:bwbb>b.bb,..bb>bbbb,bwbw>*,bwbw>bwbw", "law 4"),
        ("laws:?,?,?,bwbw>*", "law 1"),
        ("laws:bwbb>b.bb,..bb>bbbb,bwbw>*,bw.w>b..w,", "5"),
        ("laws: bwbb>b.bb,..bb>bbbb,bwbw>*,bw.w>b..w", "law 1"),
    ],
)
def test_invalid_tokens(token: str, needle: str) -> None:
    state = GAME.state_from_string(TURN3)
    with pytest.raises(games.InvalidMoveError) as info:
        state.parse_move(token)
    assert info.value.text == token
    assert needle in info.value.reason


@pytest.mark.parametrize(
    ("pos", "token", "needle"),
    [
        (TURN3, "c3-c2", "no black piece on c3"),
        (TURN3, "b2-d2", "not orthogonally adjacent"),
        (TURN3, "b2-b3", "b3 is occupied"),
        (TURN3, "b1-c2", "not orthogonally adjacent"),
        (TURN3, "L1@a3", "does not match window a3"),
        (TURN3, "L3@a3", "needs an adaptation part"),
        (TURN3, "L1@a2:keep", "takes no adaptation part"),
        (TURN3, "L1@a2:L2=....>*", "takes no adaptation part"),
        (TURN3, f"laws:{BLACK_LAWS}", "only in the setup phase"),
        (START, "b2-c2", "writes its laws"),
        (START, "end", "writes its laws"),
        (TURN3, "laws:?,?,?,?", "a shown form"),
        (START, "laws:?,?,?,?", "a shown form"),
        (TURN3, "L3@a3:L2=?", "a shown form"),
    ],
)
def test_illegal_tokens(pos: str, token: str, needle: str) -> None:
    state = GAME.state_from_string(pos)
    with pytest.raises(games.IllegalMoveError) as info:
        state.parse_move(token)
    assert info.value.text == token
    assert needle in info.value.reason
    assert state.to_string() == pos


def test_move_tokens_round_trip() -> None:
    state = GAME.state_from_string(EXAMPLE)
    for move in state.legal_moves():
        assert state.parse_move(state.move_to_str(move)) == move


# -- position strings ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "field_name"),
    [
        ("bwww/bwww/bbbw/bbbw b setup none none 8 10", "syntax"),
        ("bwww/bwww/bbbw/bbbw  b setup none none 8 10 0", "syntax"),
        ("bwww/bwww/bbbw b setup none none 8 10 0", "board"),
        ("bwww/bwww/bbbw/bbbB b setup none none 8 10 0", "board"),
        ("bwww/bwww/bbbw/bbbww b setup none none 8 10 0", "board"),
        ("bwww/bwww/bbbw/bbbw x setup none none 8 10 0", "side"),
        ("bwww/bwww/bbbw/bbbw bw setup none none 8 10 0", "side"),
        ("bwww/bwww/bbbw/bbbw b play none none 8 10 0", "phase"),
        ("bwww/bwww/bbbw/bbbw b setup none none 9 10 0", "resB"),
        ("bwww/bwww/bbbw/bbbw b setup none none 08 10 0", "resB"),
        ("bwww/bwww/bbbw/bbbw b setup none none 8 11 0", "resW"),
        ("bwww/bwww/bbbw/bbbw b setup none none 8 -1 0", "resW"),
        ("bwww/bwww/bbbw/bbbw b setup none none 8 10 1", "turn"),
        ("bwww/bwww/bbbw/bbbw b setup none none 8 10 00", "turn"),
        ("bwww/bwww/bbbw/bbbw b setup -bwbw>*,-bwbw>*,-bwbw>*,-bwbw>* none 8 10 0", "lawsB"),
        ("bwww/bwww/bbbw/bbbw w setup none none 8 10 0", "lawsB"),
        ("bwww/bwww/bbbw/bbbw w setup +bwbw>*,-bwbw>*,-bwbw>*,-bwbw>* none 8 10 0", "lawsB"),
        ("bwww/bwww/bbbw/bbbw w setup ?,?,?,? ?,?,?,? 8 10 0", "lawsW"),
        (EXAMPLE.replace("-bwbb>b.bb", "-bwbb>bwbb"), "lawsB"),
        (EXAMPLE.replace("-bwbb>b.bb", "bwbb>b.bb"), "lawsB"),
        (EXAMPLE.replace("-bwbb>b.bb,", ""), "lawsB"),
        (EXAMPLE.replace("-wbww>w.ww", "*wbww>w.ww"), "lawsW"),
        (EXAMPLE.replace("-wbww>w.ww", "-wbww>W.ww"), "lawsW"),
        (EXAMPLE.replace(" 8 10 1", " 8 10 2"), "side"),
        (EXAMPLE.replace(" 8 10 1", " 8 10 0"), "turn"),
        (EXAMPLE.replace("-wbww>w.ww,-..ww>wwww,-wbwb>*,-.bb.>wbbw", "none"), "lawsW"),
        (EXAMPLE + " ", "syntax"),
        (EXAMPLE.replace(" 8 10 1", " 8 10 1" + "0" * 5000), "turn"),
    ],
)
def test_invalid_positions_name_the_field(text: str, field_name: str) -> None:
    with pytest.raises(games.InvalidPositionError) as info:
        GAME.state_from_string(text)
    assert info.value.field == field_name
    assert info.value.text == text


@pytest.mark.parametrize(
    "text",
    [
        START,
        EXAMPLE,
        TURN3,
        "bwww/bwww/bbbw/bbbw w setup ?,?,?,? none 8 10 0",
        "bwww/bwww/bbbw/bbbw b start ?,?,+bwbw>*,? +wbww>w.ww,?,?,? 8 10 3",
        "..../..../..../.... b moved ?,?,?,? ?,?,?,? 0 0 12345",
        "bw../..../..../...w b start ?,-bwbw>*,?,? ?,?,?,? 3 7 9",
    ],
)
def test_positions_round_trip(text: str) -> None:
    assert GAME.state_from_string(text).to_string() == text


# -- the command line -------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_moves_in_setup_prints_the_count_and_the_form(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "moves", "yinyang")
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == "count 26904200625"
    assert len(lines) == 2
    assert lines[1].startswith("laws:<law>,<law>,<law>,<law>")


def test_cli_moves_on_a_view_and_after_redacted_moves(capsys: pytest.CaptureFixture[str]) -> None:
    view = GAME.state_from_string(LOW_RESERVES).view(games.P1).to_string()
    code, out, _ = run(capsys, "moves", "yinyang", "--pos", view)
    assert (code, out.split()) == (
        0,
        ["L2@a2", "L2@a3", "L2@b2", "L2@c1", "a1-a2", "b1-b2", "b1-c1"],
    )
    code, out, _ = run(capsys, "moves", "yinyang", "--moves", f"laws:{BLACK_LAWS}", "laws:?,?,?,?")
    assert code == 0
    assert len(out.split()) == 3243
    code, out, _ = run(capsys, "perft", "yinyang", "2", "--pos", EXAMPLE)
    assert (code, out.splitlines()[-1]) == (0, "2630886")


def test_cli_show_draws_the_board_and_the_laws(capsys: pytest.CaptureFixture[str]) -> None:
    view = GAME.state_from_string(TURN3).view(games.P1).to_string()
    code, out, _ = run(capsys, "show", "yinyang", "--pos", view)
    assert code == 0
    assert " 2  b b . w  2" in out
    assert "Black (p1) laws, as Black sees the board:" in out
    assert "L3 revealed" in out
    assert "b w -> b ." in out  # Black's hidden L1, its owner's own view
    assert "L2 unknown" in out  # White's hidden laws: unknown to Black
    assert "w b -> w ." in out  # White's revealed L1 as White sees it
    assert f"position: {view}" in out
    code, out, _ = run(capsys, "show", "yinyang")
    assert "laws: not written yet" in out
