"""``enginesrv analyse``: the judgement of a move (expected scores, marks, accuracy), the
annotated record (it still replays), the command on a record file and on an event directory,
its resume from the progress file, Yin Yang on the mover's view, and one-line errors."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

import games
from bots.engine import Score
from enginesrv.analyse.judge import accuracy, expected, mark, summarise, verdict
from enginesrv.analyse.plies import Game, Ply, plies_of
from enginesrv.analyse.report import OWN_SCORE, Judged, annotate, judge_game
from enginesrv.analyse.search import Found, Limits, position_key
from enginesrv.event.play.records import Record, RecordMove, format_record, parse_record
from tests.enginesrv.test_event_files import run_main

YOXII = games.load("yoxii")


def _record(game: games.Game, seed: int, plies: int, **headers: str) -> Record:
    """A record of ``plies`` random moves of ``game`` (fewer if it ends first)."""
    rng = random.Random(seed)
    state = game.new_state()
    moves: list[RecordMove] = []
    while not state.is_terminal() and len(moves) < plies:
        legal = state.legal_moves()
        move = legal[rng.randrange(len(legal))]
        token = state.move_to_str(move)
        moves.append(RecordMove(token, (("ms", "5"), ("score", "cp:7"))))
        state.push(move)
    return Record({"Game": game.name, **headers}, moves)


# -- the judgement -----------------------------------------------------------------------------


def test_expected_scores_marks_and_accuracy() -> None:
    assert expected(Score("win", 3), 400) == 1.0
    assert expected(Score("loss", 3), 400) == 0.0
    assert expected(Score("cp", 0), 400) == 0.5
    assert expected(Score("cp", 400), 400) == pytest.approx(1 / (1 + math.exp(-1)))
    assert [mark(x) for x in (0, 9.99, 10, 19.9, 20, 29.9, 30, 100)] == [
        None, None, "?!", "?!", "?", "?", "??", "??",
    ]  # fmt: skip
    assert accuracy(0) == pytest.approx(100.0, abs=0.01)
    assert accuracy(10) == pytest.approx(103.1668 * math.exp(-0.4354) - 3.1669)
    assert accuracy(200) == 0.0
    assert verdict(0.4, 0.6).loss == 0.0  # a move better than the search's line loses nothing
    assert verdict(0.9, 0.55).mark == "??"
    summary = summarise("x", [verdict(0.5, 0.5), verdict(0.5, 0.35), verdict(0.5, 0.2)])
    assert (summary.moves, summary.marks) == (3, {"??": 1, "?": 0, "?!": 1})
    assert summary.mean_loss == pytest.approx((0 + 15 + 30) / 3)


def test_a_move_is_worth_what_the_next_position_is_to_its_mover() -> None:
    """The other side acts next: its score is negated; the same side: taken as it is; the
    last move of a finished game: its outcome."""
    plies = (Ply(1, 0, "a", "A"), Ply(2, 1, "b", "B"), Ply(3, 1, "c", "C"))
    found = {p: Found(Score("cp", 0), "x", ("x",), 3) for p in "ABC"}
    found["B"] = Found(Score("cp", 400), "x", ("x",), 3)  # p2 likes B: p1's a was bad
    outcome = games.Outcome("p1", "goal")
    judged = judge_game(Game(plies, outcome), found, 400.0)
    worth_b = 1 / (1 + math.exp(-1))
    assert [j.verdict is not None for j in judged] == [True, True, True]
    assert judged[0].verdict is not None
    assert judged[0].verdict.loss == pytest.approx((0.5 - (1 - worth_b)) * 100)
    assert judged[1].verdict is not None
    assert judged[1].verdict.loss == pytest.approx((worth_b - 0.5) * 100)  # same mover at C
    assert judged[2].verdict is not None
    assert judged[2].verdict.loss == 50.0  # p2's last move lost the game: 0.5 -> 0
    unfinished = judge_game(Game(plies, None), found, 400.0)
    assert unfinished[2].verdict is None
    del found["C"]
    assert judge_game(Game(plies, outcome), found, 400.0)[1].verdict is None


def test_the_annotated_record_replays_and_keeps_the_engines_score() -> None:
    record = _record(YOXII, 1, 8)
    game = plies_of(YOXII, record, "r")
    found = {p.position: Found(Score("cp", 10), p.token, (p.token, "z"), 2) for p in game.plies}
    judged = judge_game(game, found, 400.0)
    text = format_record(annotate(record, judged))
    again = parse_record(text)
    assert again.tokens() == record.tokens()
    first = dict(again.moves[0].annotations)
    assert first[OWN_SCORE] == "cp:7"
    assert (first["score"], first["best"], first["pv"], first["ms"]) == (
        "cp:10", record.moves[0].token, f"{record.moves[0].token}~z", "5",
    )  # fmt: skip
    # analysed again: the analysis's own annotations are replaced, the engine's kept
    twice = annotate(again, [Judged(None, None) for _ in judged])
    keys = [key for key, _ in twice.moves[0].annotations]
    assert keys == ["ms", OWN_SCORE]
    plies_of(YOXII, parse_record(format_record(twice)), "r")  # replays


def test_yin_yang_plies_are_positions_as_their_mover_saw_them() -> None:
    game = games.load("yinyang")
    record = _record(game, 3, 12)
    parsed = plies_of(game, record, "yy")
    state = game.new_state()
    for ply, move in zip(parsed.plies, record.moves, strict=True):
        assert ply.position == state.view(state.to_move()).to_string()
        assert ply.mover == state.to_move()
        state.push(state.parse_move(move.token))
    assert any("?" in ply.position for ply in parsed.plies)  # the other side's laws hidden


# -- the command ---------------------------------------------------------------------------------


def test_analyse_a_record_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "game.txt"
    record = _record(YOXII, 5, 10, P1="alice", P2="bob")
    source.write_text(format_record(record))
    out = tmp_path / "analysed.txt"
    code, text, err = run_main(capsys, "analyse", "yoxii", str(source), "--depth", "1",
                               "-o", str(out))  # fmt: skip
    assert (code, err) == (0, "")
    lines = text.splitlines()
    assert lines[0].split() == ["player", "moves", "loss", "accuracy", "?!", "?", "??"]
    # bob's last move is not judged: the record stops before the game's end
    assert [line.split()[:2] for line in lines[1:]] == [["alice", "5"], ["bob", "4"]]
    analysed = parse_record(out.read_text())
    assert analysed.tokens() == record.tokens()
    for move in analysed.moves:
        notes = dict(move.annotations)
        assert {"score", "best", "pv"} <= set(notes)
        assert notes["pv"].split("~")[0] == notes["best"]
    assert "loss" in dict(analysed.moves[0].annotations)
    assert not (tmp_path / "analysed.txt.progress.jsonl").exists()
    code, text, _ = run_main(capsys, "replay", "yoxii", str(out))
    assert code == 0


def test_a_stopped_analysis_goes_on_from_its_progress_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The results kept as they came are used, not searched again; a last line cut short by
    a kill is left out."""
    source = tmp_path / "game.txt"
    record = _record(YOXII, 6, 6)
    source.write_text(format_record(record))
    first = plies_of(YOXII, record, "r").plies[0]
    progress = tmp_path / "out.txt.progress.jsonl"
    key = position_key("yoxii", first.position, Limits(depth=1))
    kept = Found(Score("cp", 4321), "e5", ("e5", "zz"), 1)
    progress.write_text(kept.to_json(key) + "\n" + '{"key": "cut sh')
    code, _, err = run_main(capsys, "analyse", "yoxii", str(source), "--depth", "1",
                            "-o", str(tmp_path / "out.txt"), "--json")  # fmt: skip
    assert (code, err) == (0, "")
    analysed = parse_record((tmp_path / "out.txt").read_text())
    assert dict(analysed.moves[0].annotations)["score"] == "cp:4321"
    assert dict(analysed.moves[0].annotations)["pv"] == "e5~zz"


def test_analyse_an_event_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "event" / "games"
    folder.mkdir(parents=True)
    for number in (1, 2):
        record = _record(YOXII, number, 6, P1=f"n{number}", P2="m")
        (folder / f"game-{number:05d}.txt").write_text(format_record(record))
    code, text, err = run_main(capsys, "analyse", "yoxii", str(tmp_path / "event"), "--depth",
                               "1", "--json")  # fmt: skip
    assert (code, err) == (0, "")
    report = json.loads(text)
    assert [g["source"].rsplit("/", 1)[1] for g in report["games"]] == [
        "game-00001.txt", "game-00002.txt",
    ]  # fmt: skip
    # each game's last move is not judged (neither game is over)
    assert {p["player"]: p["moves"] for p in report["players"]} == {"n1": 3, "m": 4, "n2": 3}
    written = sorted(p.name for p in (tmp_path / "event" / "analysis").iterdir())
    assert written == ["game-00001.txt", "game-00002.txt"]


def test_a_finished_game_with_forced_moves_is_judged_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A position with a single legal move is searched for its score all the same: every move
    of a finished game is judged, those into and out of a forced move too."""
    record = next(
        r
        for seed in range(100)
        if (r := _record(YOXII, seed, 400, P1="a", P2="b")) and _ends(r) and _forced_plies(r)
    )
    source = tmp_path / "game.txt"
    source.write_text(format_record(record))
    code, text, err = run_main(capsys, "analyse", "yoxii", str(source), "--depth", "1", "--json")
    assert (code, err) == (0, "")
    [played] = json.loads(text)["games"]
    assert len(played["plies"]) == len(record.moves)
    assert all(ply.get("loss") is not None and ply.get("score") for ply in played["plies"])


def _ends(record: Record) -> bool:
    state = games.replay(YOXII, None, record.tokens())
    return state.is_terminal()


def _forced_plies(record: Record) -> list[int]:
    state = YOXII.new_state()
    forced = []
    for number, token in enumerate(record.tokens(), 1):
        if len(state.legal_moves()) == 1:
            forced.append(number)
        state.push(state.parse_move(token))
    return forced


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# Game: yinsh\nf6\n", "a record of yinsh, not yoxii"),
        ("# Game: yoxii\nc5\nzz\n", ":3: move 2 'zz'"),
        ("# Game: yoxii\nc5 d5\n", "whitespace in move line"),
    ],
)
def test_a_bad_record_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    source = tmp_path / "bad.txt"
    source.write_text(text)
    code, out, err = run_main(capsys, "analyse", "yoxii", str(source), "--depth", "1")
    assert (code, out) == (2, "")
    assert err.startswith("enginesrv analyse: error: ")
    assert message in err
    assert err.count("\n") == 1


def test_a_missing_source_or_empty_directory_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_main(capsys, "analyse", "yoxii", str(tmp_path / "none.txt"))
    assert code == 2
    assert err.count("\n") == 1
    code, _, err = run_main(capsys, "analyse", "yoxii", str(tmp_path))
    assert code == 2
    assert "no game records (*.txt) there" in err
