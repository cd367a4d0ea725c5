"""An external engine tuned by its options: a real ``enginesrv engine --bot noisy`` process,
which is sent ``setoption name Aim value V`` with its side's value before each game (the
``--debug`` traces hold every line sent), and forfeits a game whose value it refuses, with a
reason that names the option."""

from __future__ import annotations

import sys
from pathlib import Path

from enginesrv.event.play.records import parse_record
from enginesrv.event.play.trace import trace_file_name
from tests.enginesrv.test_debug_trace import entries
from tests.enginesrv.tune_support import play, prepared, probes, rows, steps, tune_config

ENGINE = f"name=eng:cmd:{sys.executable} -m enginesrv.cli engine --bot noisy"


def test_an_engine_is_given_each_games_values_and_forfeits_one_it_refuses(
    tmp_path: Path,
) -> None:
    """``Aim`` around 990 with c_end 10, over [0, 1100] while the engine takes 0 to 1000, and
    a learning rate so small that theta stays at 990: iteration 1 probes 990 +- 10.72, so one
    side is sent 1001 and refuses it; iteration 2 probes 990 +- 10 (1000 and 980), both
    taken. The games end at 12 plies: what they show is how they begin."""
    tune = tune_config(4, "Aim=990:0:1100:10", player=ENGINE, r_end=1e-6)
    out = tmp_path / "run"
    play(prepared(tune, out, concurrency=1, debug=True, max_plies=12), out)
    stored = probes(out)
    assert sorted(stored[1]["plus"] + stored[1]["minus"]) == [979, 1001]
    assert sorted(stored[2]["plus"] + stored[2]["minus"]) == [980, 1000]
    games = rows(out)
    assert sorted(games) == [1, 2, 3, 4]
    assert len(steps(out)) == 2
    plus, minus = tune.names
    logs = out / "logs"
    for game_id in (1, 2, 3, 4):
        entry = stored[(game_id + 1) // 2]
        seats = ((plus, entry["plus"][0]), (minus, entry["minus"][0]))
        if game_id % 2 == 0:
            seats = (seats[1], seats[0])  # the - side moves first in a pair's second game
        refused = next((seat for seat in (0, 1) if seats[seat][1] > 1000), None)
        for seat, (name, value) in enumerate(seats):
            path = logs / trace_file_name(game_id, seat, name)
            if refused == 0 and seat == 1:
                # p1 refused, so the game was over before p2 was told of it
                assert not path.exists()
                continue
            trace = entries(path)
            sent = [line for way, line in trace if way == ">" and "name Aim " in line]
            assert sent == [f"setoption name Aim value {value:.0f}"], (game_id, seat, sent)
            errors = [line for way, line in trace if way == "<" and line.startswith("error")]
            assert errors == (
                [f"error 101 bad-arguments setoption: option 'Aim': {value:.0f} is not in 0..1000"]
                if seat == refused
                else []
            ), (game_id, seat)
            # each played with its value once both took theirs
            assert any(way == ">" and line.startswith("go ") for way, line in trace) == (
                refused is None
            )
        record = parse_record((out / "games" / f"game-{game_id:05d}.txt").read_text())
        p1, p2, _, reason = games[game_id]
        assert (p1, p2) == (seats[0][0], seats[1][0])
        if refused is None:
            assert reason != "crash"
            assert len(record.moves) > 0
            continue
        # the side that refused loses at once, and the record says why, naming the option
        assert reason == "crash"
        assert record.headers["Result"] == ("p2" if refused == 0 else "p1")
        assert len(record.moves) == 0
        name, value = seats[refused]
        assert (
            f"p{refused + 1} {name}: setoption name Aim value {value:.0f} was refused: "
            f"error 101 bad-arguments: setoption: option 'Aim': {value:.0f} is not in 0..1000"
        ) in record.comments
    # the side sent 1001 lost both games of its pair: the result is -2 along its side
    first = steps(out)[0]
    assert (first["k"], first["result"]) == (1, -2 if 1001 in stored[1]["plus"] else 2)
