"""``enginesrv export`` (an event's records into one file), ``enginesrv replay`` of a file of
several records with ``--game``, ``--ply`` and ``--step``, the Yinsh board's legend and the
wording of ``bench --rules``."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import games
from enginesrv.cli import main
from enginesrv.cli.rules import describe
from enginesrv.event.play import sgf
from enginesrv.event.play.records import RecordError, parse_record, parse_records
from enginesrv.search import bench

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "tests" / "data" / "yinsh" / "records"
GAMES = 4


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own exits (usage errors, --help)
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished match of four Yoxii games (random against greedy at depth 1)."""
    out = tmp_path_factory.mktemp("event") / "ev"
    proc = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "match", "yoxii", "bot:random", "bot:greedy",
         "--depth", "1", "--games", str(GAMES), "--out", str(out)],
        capture_output=True, text=True, check=False, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture
def event(played: Path, tmp_path: Path) -> Path:
    """A copy of the match, for a test to damage."""
    copy = tmp_path / "ev"
    shutil.copytree(played, copy)
    return copy


def stored_texts(event: Path) -> list[str]:
    return [(event / "games" / f"game-{n:05d}.txt").read_text() for n in range(1, GAMES + 1)]


# -- export ------------------------------------------------------------------------------------


def test_export_writes_every_record_in_game_order(
    capsys: pytest.CaptureFixture[str], event: Path, tmp_path: Path
) -> None:
    target = tmp_path / "all.txt"
    code, out, err = run(capsys, "export", str(event), "-o", str(target))
    assert code == 0, err
    assert out == ""
    assert f"{GAMES} games" in err
    text = target.read_text()
    records = parse_records(text, str(target))
    assert records == [parse_record(t) for t in stored_texts(event)]
    # each record begins with its Game header, the first on the first line
    starts = [n for n, line in enumerate(text.splitlines(), 1) if line.startswith("# Game:")]
    assert starts == [r.line for r in records]
    assert starts[0] == 1
    assert [r.headers["P1"] for r in records] == ["random", "greedy", "random", "greedy"]


def test_export_to_stdout_is_the_same_text(
    capsys: pytest.CaptureFixture[str], event: Path, tmp_path: Path
) -> None:
    target = tmp_path / "all.txt"
    assert run(capsys, "export", str(event), "-o", str(target))[0] == 0
    code, out, _ = run(capsys, "export", str(event), "-o", "-")
    assert code == 0
    assert out == target.read_text()


def test_export_replaces_an_existing_file(
    capsys: pytest.CaptureFixture[str], event: Path, tmp_path: Path
) -> None:
    target = tmp_path / "all.txt"
    target.write_text("old contents that are longer than nothing\n" * 1000)
    assert run(capsys, "export", str(event), "-o", str(target))[0] == 0
    assert "old contents" not in target.read_text()
    assert len(parse_records(target.read_text())) == GAMES


def test_export_of_a_game_without_its_record_fails_or_skips_it(
    capsys: pytest.CaptureFixture[str], event: Path, tmp_path: Path
) -> None:
    (event / "games" / "game-00003.txt").unlink()
    target = tmp_path / "all.txt"
    target.write_text("kept\n")
    code, out, err = run(capsys, "export", str(event), "-o", str(target))
    one_line_error(code, err, "game 3", "game-00003.txt", "missing", "--skip-missing")
    assert target.read_text() == "kept\n"  # a failed export writes nothing

    code, out, err = run(capsys, "export", str(event), "-o", "-", "--skip-missing")
    assert code == 0
    assert "warning: game 3 left out" in err
    assert "1 left out" in err
    assert len(parse_records(out)) == GAMES - 1


def test_export_of_a_damaged_record_names_it_and_its_line(
    capsys: pytest.CaptureFixture[str], event: Path
) -> None:
    path = event / "games" / "game-00002.txt"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines) + "\nnot a move\n")
    code, _, err = run(capsys, "export", str(event), "-o", "-")
    one_line_error(code, err, "game 2", f"game-00002.txt:{len(lines) + 1}", "whitespace")


def test_export_of_a_record_with_annotations_but_no_token_names_it_and_its_line(
    capsys: pytest.CaptureFixture[str], event: Path
) -> None:
    # a line that is all annotations reads as no move at all, and could not be written again
    path = event / "games" / "game-00002.txt"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines) + "\n  ; ms=1\n")
    code, _, err = run(capsys, "export", str(event), "-o", "-")
    one_line_error(code, err, "game 2", f"game-00002.txt:{len(lines) + 1}", "no move token")
    with pytest.raises(RecordError, match="no move token"):
        parse_record("# Game: yoxii\nc5\n  ; ms=1\n")


@pytest.mark.parametrize(
    ("output", "needles"),
    [
        ("{tmp}/no/such/dir/all.txt", ["cannot write", "No such file or directory"]),
        ("{tmp}", ["cannot write", "directory"]),
        ("{event}/results.sqlite", ["the event's own results.sqlite"]),
        ("{event}/games/all.txt", ["the event's own games"]),
    ],
)
def test_export_output_errors_are_one_line(
    capsys: pytest.CaptureFixture[str],
    event: Path,
    tmp_path: Path,
    output: str,
    needles: list[str],
) -> None:
    before = (event / "results.sqlite").read_bytes()
    target = output.format(tmp=tmp_path, event=event)
    code, out, err = run(capsys, "export", str(event), "-o", target)
    one_line_error(code, err, f"-o {target}", *needles)
    assert out == ""
    assert (event / "results.sqlite").read_bytes() == before
    assert not (event / "games" / "all.txt").exists()


def test_export_of_a_directory_without_an_event(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, "export", str(tmp_path), "-o", "-")
    one_line_error(code, err, str(tmp_path / "results.sqlite"), "not an event directory")
    assert out == ""


# -- parse_records -----------------------------------------------------------------------------

TWO = """\
# a comment before the first record
# Game: yinsh
# P1: a
e5
f6  ; ms=3
# a comment after its moves

# Game: yinsh
# Result: p1 did not start
# Game: yinsh
d4
"""


def test_parse_records_splits_at_each_game_header_and_keeps_the_line_numbers() -> None:
    first, second, third = parse_records(TWO)
    assert (first.line, second.line, third.line) == (1, 8, 10)
    assert first.tokens() == ["e5", "f6"]
    assert first.comments == ["a comment before the first record", "a comment after its moves"]
    assert second.headers == {"Game": "yinsh", "Result": "p1 did not start"}
    assert second.moves == []  # a record of no moves ends at the next Game header
    assert third.tokens() == ["d4"]
    assert third.moves[0].line == 11


def test_parse_records_of_one_record_is_parse_record() -> None:
    text = (RECORDS / "bga_862307561.txt").read_text()
    assert parse_records(text) == [parse_record(text)]
    assert parse_records("") == [parse_record("")]


def test_parse_records_errors_name_the_line_of_the_whole_text() -> None:
    with pytest.raises(RecordError) as info:
        parse_records(TWO + "bad move\n", "all.txt")
    assert (info.value.source, info.value.line) == ("all.txt", 12)


# -- replay of several records -----------------------------------------------------------------


def test_replay_checks_every_game_of_an_export(
    capsys: pytest.CaptureFixture[str], event: Path, tmp_path: Path
) -> None:
    target = tmp_path / "all.txt"
    run(capsys, "export", str(event), "-o", str(target))
    code, out, err = run(capsys, "replay", "yoxii", str(target))
    assert code == 0, err
    records = parse_records(target.read_text())
    heads = [line for line in out.splitlines() if line.startswith("game ")]
    assert heads == [
        f"game {n} (line {r.line}): {r.headers['P1']} vs {r.headers['P2']}"
        for n, r in enumerate(records, 1)
    ]
    finals = [line.removeprefix("final ") for line in out.splitlines() if line.startswith("final")]
    assert finals == [r.final for r in records]
    assert out.splitlines()[-1] == f"checked {GAMES} games, 0 bad"


def _spoil(text: str, game: int, move: int, token: str) -> tuple[str, int]:
    """``text`` with move ``move`` of record ``game`` replaced by ``token``; and its line."""
    record = parse_records(text)[game - 1]
    line = record.moves[move - 1].line
    lines = text.split("\n")
    lines[line - 1] = token
    return "\n".join(lines), line


def test_replay_reports_each_bad_game_and_fails_naming_the_first(
    capsys: pytest.CaptureFixture[str], event: Path, tmp_path: Path
) -> None:
    text = "\n".join(stored_texts(event))
    text, line2 = _spoil(text, 2, 5, "zz9")
    text, line4 = _spoil(text, 4, 3, "g9")
    target = tmp_path / "bad.txt"
    target.write_text(text)
    code, out, err = run(capsys, "replay", "yoxii", str(target))
    one_line_error(code, err, f"bad.txt:{line2}: game 2: move 5 'zz9'", "first of 2 bad games")
    blocks = out.split("\n\n")
    assert blocks[1].splitlines()[-1].startswith(f"error line {line2}: move 5 'zz9'")
    assert blocks[3].splitlines()[-1].startswith(f"error line {line4}: move 3 'g9'")
    assert blocks[0].splitlines()[1].startswith("plies ")  # the good ones are summed up
    assert out.splitlines()[-1] == f"checked {GAMES} games, 2 bad"

    # one game picked: only it is checked
    code, out, err = run(capsys, "replay", "yoxii", str(target), "--game", "3")
    assert code == 0, err
    assert out.startswith("game 3 (line ")
    assert "checked" not in out
    code, out, err = run(capsys, "replay", "yoxii", str(target), "--game", "4")
    one_line_error(code, err, f"bad.txt:{line4}: game 4: move 3 'g9'")
    code, out, err = run(capsys, "replay", "yoxii", str(target), "--game", "5")
    one_line_error(code, err, "--game 5", f"holds {GAMES} games")


def test_replay_of_a_bad_final_names_the_game_and_its_first_line(
    capsys: pytest.CaptureFixture[str], event: Path, tmp_path: Path
) -> None:
    texts = stored_texts(event)
    texts[1] = texts[1].replace("# Final: ", "# Final: 3/5/7/3T3/7/5/3 w t w:5553 b:5553\n# X: ")
    target = tmp_path / "bad.txt"
    target.write_text("\n".join(texts))
    line = parse_records(target.read_text())[1].line
    code, _, err = run(capsys, "replay", "yoxii", str(target))
    one_line_error(code, err, f"bad.txt:{line}: game 2: the moves lead to")


def _show(capsys: pytest.CaptureFixture[str], game: str, tokens: list[str]) -> str:
    code, out, err = run(capsys, "show", game, *(["--moves", *tokens] if tokens else []))
    assert code == 0, err
    return out


def test_replay_ply_draws_the_board_as_show_does(
    capsys: pytest.CaptureFixture[str], played: Path
) -> None:
    path = played / "games" / "game-00001.txt"
    record = parse_record(path.read_text())
    code, out, err = run(capsys, "replay", "yoxii", str(path), "--ply", "3")
    assert code == 0, err
    label, _, rest = out.partition("\n")
    entry = record.moves[2]
    assert label.startswith(f"ply 3: {entry.token} by ")
    assert "ms=" in label  # the move's annotations
    board = _show(capsys, "yoxii", record.tokens()[:3])
    assert rest.startswith(board + "\n")
    assert rest.removeprefix(board + "\n").startswith(f"plies {len(record.moves)}\n")

    code, out, _ = run(capsys, "replay", "yoxii", str(path), "--ply", "0")
    assert out.startswith("ply 0 (start)\n" + _show(capsys, "yoxii", []))


def test_replay_step_draws_every_ply(capsys: pytest.CaptureFixture[str], played: Path) -> None:
    path = played / "games" / "game-00002.txt"
    record = parse_record(path.read_text())
    code, out, err = run(capsys, "replay", "yoxii", str(path), "--step")
    assert code == 0, err
    labels = [line for line in out.splitlines() if line.startswith("ply ")]
    assert len(labels) == len(record.moves) + 1
    assert labels[-1].startswith(f"ply {len(record.moves)}: {record.moves[-1].token} by ")
    game = games.load("yoxii")
    final = games.replay(game, None, record.tokens())
    assert describe(final) in out


def test_replay_ply_beyond_the_end(
    capsys: pytest.CaptureFixture[str], event: Path, tmp_path: Path
) -> None:
    plies = len(parse_record(stored_texts(event)[0]).moves)
    path = event / "games" / "game-00001.txt"
    code, out, err = run(capsys, "replay", "yoxii", str(path), "--ply", str(plies + 1))
    one_line_error(code, err, f"--ply {plies + 1}: the game has {plies} plies")
    assert out == ""
    # checking a whole file, a shorter game is said so and still checked
    target = tmp_path / "all.txt"
    run(capsys, "export", str(event), "-o", str(target))
    longest = max(len(r.moves) for r in parse_records(target.read_text()))
    code, out, err = run(capsys, "replay", "yoxii", str(target), "--ply", str(longest))
    assert code == 0, err
    assert f"checked {GAMES} games, 0 bad" in out
    lines = out.splitlines()
    boards = [line for line in lines if line.startswith(f"ply {longest}: ")]
    notes = [line for line in lines if line.startswith(f"--ply {longest}: the game has ")]
    assert len(boards) >= 1
    assert len(boards) + len(notes) == GAMES


def test_replay_ply_of_an_sgf_record(capsys: pytest.CaptureFixture[str]) -> None:
    path = RECORDS / "Y-DrMih-Dumbot-2026-02-20-0858.sgf"
    code, out, err = run(capsys, "replay", "yinsh", str(path), "--ply", "10")
    assert code == 0, err
    assert out.startswith("ply 10: ")
    assert "final 4/2b4/5b2/4B1b2/4b2Bb1/7W1/4b5/4Wwwww/4b1W1/7/4 - e 2-3 40" in out


def test_help_of_export_and_replay(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "export", "--help")
    assert code == 0
    assert "usage: enginesrv export" in out
    assert "--skip-missing" in out
    code, out, _ = run(capsys, "replay", "--help")
    assert "--ply" in out
    assert "--step" in out


# -- show and bench ----------------------------------------------------------------------------


def test_yinsh_board_has_a_legend(capsys: pytest.CaptureFixture[str]) -> None:
    out = _show(capsys, "yinsh", ["e5", "f6"])
    [legend] = [line for line in out.splitlines() if line.startswith("W/B = ")]
    assert "White/Black ring" in legend
    assert "White/Black marker" in legend
    assert ". = empty" in legend


def test_bench_playouts_say_how_the_games_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(bench.BENCH, "yohoho", ())  # the playouts only
    out = io.StringIO()
    bench.run_bench(["yohoho"], deep=False, playouts=4, out=out, err=io.StringIO())
    line = out.getvalue().splitlines()[0]
    finished, _ = bench.random_playouts(games.load("yohoho"), 4, max_turns=200)
    assert line.startswith(f"yohoho playouts 4: {finished} played to the end of the game")
    if finished < 4:
        assert f"{4 - finished} stopped at the 200-turn cap" in line
    assert "finished" not in line
    assert bench.playout_ends(5, 5, None) == "5 played to the end of the game"
    assert bench.playout_ends(5, 3, None) == (
        f"3 played to the end of the game, 2 stopped at the {bench.MAX_PLAYOUT_PLIES}-ply "
        "safety net"
    )


def test_a_file_too_large_for_records_is_refused_unread(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A file longer than the cap is one error, not a read that fills the memory; a device
    that never ends (/dev/zero) is refused as no regular file, before a byte is read."""
    monkeypatch.setattr(sgf, "MAX_RECORDS_FILE", 1 << 10)
    big = tmp_path / "big.txt"
    big.write_text("# Game: yoxii\n" + "c3\n" * 1000)
    one_line_error(*run(capsys, "replay", "yoxii", str(big))[::2], "larger than")
    code, _, err = run(capsys, "replay", "yoxii", "/dev/zero")
    one_line_error(code, err, "/dev/zero", "is a character device, not a regular file")
