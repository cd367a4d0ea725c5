"""The standings of an event: each pairing's wins, draws and losses from the first-named
player's side, and the game pairs (colours swapped) its pentanomial counts."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from enginesrv.event.config import EventConfig, EventError
from enginesrv.event.play.players import PlayerSpecError, parse_player
from enginesrv.event.results import stats
from enginesrv.event.results.rows import GameRow
from enginesrv.event.results.store import stored_event
from enginesrv.event.results.summary import PairingStats, summarize
from enginesrv.event.schedule import display_names, pairings


@dataclass
class PairingResult:
    """The games of one pairing from the first-named player's side."""

    first: str
    second: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    pairs: dict[int, list[float]] = field(default_factory=dict)

    def add(self, row: GameRow) -> None:
        if row.first_points == 1:
            self.wins += 1
        elif row.first_points == 0:
            self.losses += 1
        else:
            self.draws += 1
        self.pairs.setdefault(row.pair, []).append(row.first_points)

    def summary(self, sprt: stats.SprtParams | None = None) -> PairingStats:
        """W/D/L, Elo, LOS, the pentanomial of complete pairs, and the LLR when SPRT runs."""
        trinomial = stats.Trinomial(self.wins, self.draws, self.losses)
        complete = [(p[0], p[1]) for p in self.pairs.values() if len(p) == 2]
        # one pair says nothing of the spread between pairs: the trinomial is used until two
        penta = stats.pentanomial_from_pairs(complete) if len(complete) >= 2 else None
        return summarize(trinomial, penta, sprt)

    def to_json(self, sprt: stats.SprtParams | None = None) -> dict[str, object]:
        out: dict[str, object] = {"p1": self.first, "p2": self.second}
        out.update(self.summary(sprt).to_json())
        return out


def pairing_results(
    rows: Iterable[GameRow], names: list[str], gauntlet: bool
) -> list[PairingResult]:
    """One ``PairingResult`` per pairing of the event, in schedule order."""
    out = [PairingResult(names[i], names[j]) for i, j in pairings(len(names), gauntlet)]
    for row in rows:
        if 0 <= row.pairing < len(out):
            out[row.pairing].add(row)
    return out


def load_results(out_dir: Path) -> tuple[EventConfig, list[PairingResult], list[GameRow]]:
    """The configuration, standings and games of a stored event.

    Raises:
        EventError: no event there, or a damaged one.
    """
    config, rows = stored_event(out_dir, f"no event results in {out_dir}")
    try:
        names = display_names(parse_player(text) for text in config.players)
        config.sprt_params()
    except (PlayerSpecError, EventError) as exc:
        raise EventError(
            f"{out_dir / 'results.sqlite'}: the results database is damaged (the stored "
            f"configuration is not valid: {exc}); it is kept as it is"
        ) from None
    return config, pairing_results(rows, names, config.gauntlet), rows


def decided(pairing: PairingResult, sprt: stats.SprtParams) -> bool:
    """Whether the pairing's SPRT has crossed a bound (never before ``MIN_SPRT_GAMES``)."""
    return pairing.summary(sprt).decision is not None
