"""``enginesrv selfplay``: the file it writes (every row replayed in the environment: the same
observation, a legal action played, its search's scores, the game's result), the run stopped
and resumed giving the very same file, Yin Yang (its setup played, not kept), and one-line
refusals."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import struct
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import envs
from enginesrv.selfplay import play, store
from envs.core import AGENTS
from tests.enginesrv.test_event_files import run_main

ROW_KEYS = {"observation", "action", "player", "ply", "result", "game", "moves_count"}
MOVE_KEYS = {"moves_action", "moves_expectation", "moves_kind", "moves_value", "moves_depth"}
GAME_KEYS = {"game_number", "game_winner", "game_plies"}


def selfplay(capsys: pytest.CaptureFixture[str], out: Path, *extra: str) -> str:
    code, stdout, err = run_main(capsys, "selfplay", *extra, "--out", str(out))
    assert code == 0, err
    return stdout


def load(path: Path) -> dict[str, Any]:
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def check_replay(name: str, data: dict[str, Any], random_plies: int) -> None:
    """Replay every game from its trail: each row is the observation of its player at its
    ply, its action is the one played there, legal, and among its scored moves; the result
    is the game's."""
    env = envs.make(name)
    rows = iter(range(len(data["action"])))
    row = next(rows, None)
    for g, number in enumerate(data["game_number"].tolist()):
        env.reset()
        start, plies = data["trail_offset"][g], data["game_plies"][g]
        decisions = 0
        for action in data["trail_action"][start : start + plies].tolist():
            if row is not None and data["game"][row] == number and data["ply"][row] == env.plies:
                agent = env.agent_selection
                assert decisions >= random_plies
                assert data["player"][row] == AGENTS.index(agent)
                assert np.array_equal(data["observation"][row], env.observe(agent)["observation"])
                assert data["action"][row] == action
                first, last = data["moves_offset"][row], data["moves_offset"][row + 1]
                assert last - first == data["moves_count"][row]
                scored = data["moves_action"][first:last].tolist()
                assert action in scored
                assert set(scored) <= set(env.legal_actions())
                winner = data["game_winner"][g]
                expected = 0.0 if winner < 0 else (1.0 if winner == data["player"][row] else -1.0)
                assert data["result"][row] == expected
                row = next(rows, None)
            env.step(action)
            decisions += not env.partial
        assert env.plies == plies
        if data["game_winner"][g] == store.WINNER_NONE:
            assert not env.state.is_terminal()
        else:
            outcome = env.state.outcome()
            assert outcome is not None
            seat = outcome.winner_seat
            assert data["game_winner"][g] == (store.WINNER_DRAW if seat is None else seat)
    assert row is None  # every row was met


def test_a_run_writes_rows_that_replay_in_the_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "yoxii.npz"
    said = selfplay(capsys, out, "yoxii", "--games", "4", "--depth", "1", "--random-plies", "3")
    assert said.startswith("selfplay yoxii: 4 games (p1 ")
    data = load(out)
    assert set(data) >= ROW_KEYS | MOVE_KEYS | GAME_KEYS
    rows = len(data["action"])
    assert rows > 4 * 10
    assert data["observation"].shape == (rows, *envs.adapter("yoxii").shape)
    assert data["observation"].dtype == np.float32
    assert data["moves_offset"][-1] == len(data["moves_action"]) == data["moves_count"].sum()
    assert ((data["moves_expectation"] >= 0) & (data["moves_expectation"] <= 1)).all()
    assert (data["moves_depth"] >= 1).all()
    assert data["game_number"].tolist() == [0, 1, 2, 3]
    check_replay("yoxii", data, 3)
    assert not out.with_name("yoxii.npz.parts").exists()  # the parts are joined and gone
    # another seed plays other games
    other = tmp_path / "other.npz"
    selfplay(capsys, other, "yoxii", "--games", "4", "--depth", "1", "--seed", "2")
    assert load(other)["trail_action"].tolist() != data["trail_action"].tolist()


def test_a_stopped_run_goes_on_to_the_same_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped after its third game is saved (as Ctrl-C would), the same command goes on with
    the games not saved, and the file is the one a run never stopped writes."""
    whole = tmp_path / "whole.npz"
    args = ("yinsh", "--games", "5", "--depth", "1", "--random-plies", "2", "--max-plies", "40")
    selfplay(capsys, whole, *args)
    saved: list[int] = []
    original = store.Parts.save

    def save_then_stop(self: store.Parts, number: int, arrays: dict[str, Any]) -> None:
        original(self, number, arrays)
        saved.append(number)
        if len(saved) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(store.Parts, "save", save_then_stop)
    stopped = tmp_path / "stopped.npz"
    code, _, err = run_main(capsys, "selfplay", *args, "--out", str(stopped))
    assert (code, err.splitlines()[-1]) == (130, "enginesrv selfplay: interrupted")
    parts = sorted(p.name for p in stopped.with_name("stopped.npz.parts").glob("game-*.npz"))
    assert len(parts) == 3
    assert not stopped.exists()
    played: list[int] = []

    def save_and_count(self: store.Parts, number: int, arrays: dict[str, Any]) -> None:
        played.append(number)
        original(self, number, arrays)

    monkeypatch.setattr(store.Parts, "save", save_and_count)
    selfplay(capsys, stopped, *args)
    assert sorted(played) == sorted(set(range(5)) - set(saved))
    first, again = load(whole), load(stopped)
    assert set(first) == set(again)
    for key in first:
        assert np.array_equal(first[key], again[key]), key
    check_replay("yinsh", again, 2)


_RESULTS: Any = None
"""The executor's result pipe (its writing end), for a worker forked after it is set."""


def _write_half_a_result() -> None:
    """In a worker: the start of a result on the executor's result pipe and no more, as a
    worker killed while it writes one leaves it."""
    os.write(_RESULTS.fileno(), struct.pack("!i", 1 << 20) + b"\x80")
    time.sleep(60)


def test_workers_killed_in_the_middle_of_a_result_do_not_hold_the_shutdown() -> None:
    """A run stopped (Ctrl-C) while a worker writes a game's result: ``kill_workers`` lets the
    executor's shutdown end; the executor's thread waited for the rest of the result for ever
    (a CI run hung in ``test_a_stopped_run_goes_on_to_the_same_file``)."""
    global _RESULTS  # noqa: PLW0603  (read by the forked worker)
    executor = concurrent.futures.ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("fork")
    )
    _RESULTS = executor._result_queue._writer  # type: ignore[attr-defined]
    executor.submit(_write_half_a_result)
    time.sleep(0.5)  # the executor's thread is reading the result's rest

    def stop() -> None:
        play.kill_workers(executor)
        executor.shutdown(wait=True, cancel_futures=True)

    stopping = threading.Thread(target=stop, daemon=True)
    stopping.start()
    stopping.join(20)
    assert not stopping.is_alive(), "the shutdown waits for a result that will never come"
    _RESULTS = None


def test_yin_yang_plays_its_setup_and_keeps_the_decisions_after_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "yinyang.npz"
    selfplay(capsys, out, "yinyang", "--games", "2", "--depth", "1", "--random-plies", "0",
             "--max-plies", "30")  # fmt: skip
    data = load(out)
    assert len(data["action"]) > 0
    assert (data["ply"] >= 8).all()  # the two setups (four actions each) are not rows
    check_replay("yinyang", data, 0)


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code, out, err = run_main(capsys, "selfplay", *argv)
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


def test_bad_input_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "x.npz")
    assert "game 'chess'" in refused(capsys, "chess", "--games", "1", "--out", out)
    assert "--bot 'nobody'" in refused(capsys, "yoxii", "--games", "1", "--out", out, "--bot",
                                       "nobody")  # fmt: skip
    assert "write NAME=VALUE" in refused(capsys, "yoxii", "--games", "1", "--out", out,
                                         "--option", "Hash")  # fmt: skip
    assert "--option 'Bogus=1'" in refused(capsys, "yoxii", "--games", "1", "--out", out,
                                           "--option", "Bogus=1")  # fmt: skip
    (tmp_path / "x.npz").write_bytes(b"not mine")
    assert "it exists" in refused(capsys, "yoxii", "--games", "1", "--out", out)
    assert (tmp_path / "x.npz").read_bytes() == b"not mine"


def test_a_run_goes_on_only_with_its_own_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "y.npz"
    parts = store.Parts(out)
    config = {"game": "yoxii", "games": 3, "seed": 9}
    assert parts.begin(config) == set()
    parts.close()
    err = refused(capsys, "yoxii", "--games", "3", "--out", str(out))
    assert "holds the games of other settings" in err
    assert "seed 9 (now 1)" in err
