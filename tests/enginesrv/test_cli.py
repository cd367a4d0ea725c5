"""The ``enginesrv`` command line: output forms other tools rely on, and one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from enginesrv.cli import main

RECORDS = Path(__file__).parent.parent / "data" / "yinsh" / "records"
P10 = "4/7/5B2/6B2/8BW/6B2/4B1W2W/3W4W/8/7/4 w m 0-0 51"
T7 = "2wb/3wb2/3wb3/3wb4/2Wbw5/9/10/9/8/WWWW2B/BBBB w m 0-0 41"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own exits (usage errors, --help)
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code: int, out: str, err: str, *needles: str) -> None:
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err


def test_perft_count_is_the_last_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "perft", "yinsh", "2", "--pos", P10)
    assert code == 0
    assert out.splitlines()[-1] == "4705"
    assert "leaves" in err


def test_perft_divide(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "perft", "yinsh", "2", "--pos", T7, "--divide")
    lines = out.splitlines()
    assert code == 0
    assert lines[-1] == "1876"
    rows = [line.split() for line in lines[:-1]]
    assert len(rows) == 63
    assert sum(int(count) for _, count in rows) == 1876
    assert ["e3-e6", "1"] in rows  # the only reply is White's row removal


def test_perft_after_moves_and_depth_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "perft", "yinsh", "1", "--moves", "f6", "e5")
    assert (code, out.splitlines()[-1]) == (0, "83")
    code, out, _ = run(capsys, "perft", "yinsh", "0")
    assert (code, out) == (0, "1\n")


def test_moves_are_sorted_one_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "moves", "yinsh", "--pos", T7, "--moves", "e3-e6")
    assert (code, out) == (0, "x:a4-e4\n")
    code, out, _ = run(capsys, "moves", "yinsh+blitz")
    tokens = out.split()
    assert len(tokens) == 85
    assert tokens == sorted(tokens)


def test_show_draws_board_side_phase_and_outcome(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "show", "yinsh+blitz", "--pos", T7, "--moves", "e3-e6", "x:a4-e4", "r:j5"
    )
    assert code == 0
    assert " a   b   c" in out
    assert "phase:    e (game over)" in out
    assert "position: 3b/4b2/4b3/4b4/2w1bW4/9/10/9/8/1WWW2B/BBBB - e 1-0 45" in out
    assert "outcome:  p1 wins (target-reached)" in out
    code, out, _ = run(capsys, "show", "yinsh")
    assert "to act:   White (p1)" in out
    assert "outcome" not in out


@pytest.mark.parametrize(
    ("name", "final", "outcome"),
    [
        (
            "Y-DrMih-Dumbot-2026-02-20-0858.sgf",
            "4/2b4/5b2/4B1b2/4b2Bb1/7W1/4b5/4Wwwww/4b1W1/7/4 - e 2-3 40",
            "outcome p2 wins (target-reached)",
        ),
        (
            "bga_862307561.txt",
            "bwwb/b2bbbw/4wb1w/4W1wbw/b3ww1b1b/4wb1w1/4bWw1wb/5Bw1W/4bbbB/5bb/b2b - e 2-3 16",
            "outcome p2 wins",
        ),
        (
            "Y-BestBot-BOkpc-2026-03-13-1856.sgf",
            "2B1/7/5B2/W2B5/wW1B6/W3B4/W9/W8/8/7/4 b m 0-0 50",
            "outcome * (the game is not over)",
        ),
    ],
)
def test_replay_records(
    capsys: pytest.CaptureFixture[str], name: str, final: str, outcome: str
) -> None:
    code, out, err = run(capsys, "replay", "yinsh", str(RECORDS / name))
    assert code == 0, err
    assert f"final {final}\n" in out
    assert outcome in out


def test_replay_stops_at_the_first_bad_move(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    record = tmp_path / "bad.txt"
    record.write_text("# Game: yinsh\nf6\ne5\nf6\ng7\n", encoding="utf-8")
    code, out, err = run(capsys, "replay", "yinsh", str(record))
    assert_one_line_error(code, out, err, "bad.txt:4", "move 3", "'f6'", "occupied")


def test_replay_checks_the_final_header(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    record = tmp_path / "final.txt"
    record.write_text(
        "# Game: yinsh\n# Final: 4/7/8/9/10/9/10/9/8/7/4 w p 0-0 51\nf6\n", encoding="utf-8"
    )
    code, out, err = run(capsys, "replay", "yinsh", str(record))
    assert_one_line_error(code, out, err, "Final")


def test_replay_rejects_a_record_of_another_game(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    record = tmp_path / "other.txt"
    record.write_text("# Game: yinsh+blitz\nf6\n", encoding="utf-8")
    code, out, err = run(capsys, "replay", "yinsh", str(record))
    assert_one_line_error(code, out, err, "yinsh+blitz")


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        (["moves", "chess"], ["'chess'", "known games: yinsh"]),
        (
            ["perft", "yinsh", "2", "--pos", "4/7 w p 0-0 51"],
            ["'4/7 w p 0-0 51'", "board", "11 columns"],
        ),
        (["show", "yinsh", "--moves", "f6", "F7"], ["move 2", "'F7'"]),
        (["moves", "yinsh", "--pos", T7, "--moves", "e3-e8"], ["'e3-e8'", "cannot reach"]),
        (["replay", "yinsh", "/nonexistent/game.txt"], ["/nonexistent/game.txt"]),
        (["perft", "yinsh", "deep"], ["'deep'", "whole number"]),
        (["perft", "yinsh"], ["DEPTH"]),
        (["frobnicate"], ["frobnicate"]),
    ],
)
def test_errors_are_one_line_with_status_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], needles: list[str]
) -> None:
    code, out, err = run(capsys, *argv)
    assert_one_line_error(code, out, err, *needles)


def test_every_command_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("perft", "moves", "show", "replay", "bench"):
        code, out, _ = run(capsys, command, "--help")
        assert code == 0
        assert "usage: enginesrv " + command in out


def test_rules_bench_ends_with_the_signature_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "bench", "--rules", "--game", "yinsh", "--playouts", "5")
    assert code == 0
    last = out.splitlines()[-1].split()
    assert last[0] == "bench:"
    assert last[1] == "nodes"
    assert last[3] == "time"
    assert last[5] == "nps"
    assert "yinsh perft P10 depth 3: leaves 240259" in out
    _, out2, _ = run(capsys, "bench", "--rules", "--game", "yinsh", "--playouts", "5")
    assert out2.splitlines()[-1].split()[2] == last[2]  # the node signature is deterministic


def test_console_script_runs_as_a_process() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "perft", "yinsh", "1", "--pos", "bad"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1


def _serve(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "enginesrv.cli", "serve", "--workers", "1", *argv],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("--port", "99999"), "is not a port"),
        (("--port", "-1"), "is negative"),
        (("--host", "no-such-host.invalid"), "cannot listen on no-such-host.invalid:7777"),
        (("--host", "192.0.2.1", "--port", "7"), "cannot assign requested address"),
    ],
)
def test_serve_start_up_errors_are_one_line_with_status_2(
    argv: tuple[str, ...], needle: str
) -> None:
    proc = _serve(*argv)
    assert_one_line_error(proc.returncode, proc.stdout, proc.stderr, needle)


def test_serve_on_a_port_in_use_is_one_line_with_status_2() -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _serve("--port", str(port))
    assert_one_line_error(
        proc.returncode, proc.stdout, proc.stderr, f"127.0.0.1:{port}", "address already in use"
    )


def test_a_flag_that_is_not_a_number_is_named_plainly(capsys: pytest.CaptureFixture[str]) -> None:
    """The flags share one set of argument types: a word where a number belongs is refused in
    the flag's terms, never with the name of a function of the program."""
    for args, needle in [
        (
            ("match", "yoxii", "bot:random", "bot:random", "--games", "x"),
            "'x' is not a whole number",
        ),
        (("match", "yoxii", "bot:random", "bot:random", "--games", "0"), "at least 1"),
        (("serve", "--port", "x"), "'x' is not a whole number"),
    ]:
        with pytest.raises(SystemExit) as info:
            main(list(args))
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert needle in err
        assert "invalid" not in err
        assert "_" not in err.split("error:", 1)[1].split("(see")[0]
