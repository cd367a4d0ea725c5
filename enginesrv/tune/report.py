"""What a tuning run found: each parameter's final value and its spread over the last steps
(``summarize``), a table of them, the lines to paste into a player spec or a TOML event file,
a JSON object for programs, and the trajectory of every parameter as an SVG picture
(``trajectory_svg``).

The final value of a parameter is the mean of ``theta`` over the last ``TAIL`` of the steps
(at least one step), rounded for an integer parameter: SPSA's last iterate wanders by about
a step around the optimum, and the mean of the last ones is a steadier estimate (Spall's
iterate averaging). The spread is their standard deviation.
"""

from __future__ import annotations

import html
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from enginesrv.event.play.players import with_options
from enginesrv.event.results.wording import printable
from enginesrv.tune.config import TuneConfig
from enginesrv.tune.spsa import Param, engine_value
from enginesrv.tune.state import Step

TAIL = 0.1
"""The share of the last steps the final values are averaged over."""


@dataclass(frozen=True, slots=True)
class Found:
    """One parameter's outcome: its start, final value, spread and the bounds."""

    param: Param
    final: float
    spread: float
    last: float
    """``theta`` after the last step."""

    @property
    def value(self) -> str:
        """The final value as the engine takes it."""
        return engine_value(self.param, round(self.final) if self.param.integer else self.final)


def tail_count(steps: int) -> int:
    """How many of the last steps the final values are the mean of (``TAIL`` of them, at
    least one when there are any)."""
    return max(1, math.ceil(steps * TAIL)) if steps else 0


def summarize(tune: TuneConfig, steps: Sequence[Step]) -> list[Found]:
    """Each parameter's ``Found`` after ``steps`` (in the order taken); with no step, the
    start values."""
    if not steps:
        return [Found(p, p.start, 0.0, p.start) for p in tune.params]
    tail = steps[-tail_count(len(steps)) :]
    out = []
    for i, param in enumerate(tune.params):
        values = [s.theta[i] for s in tail]
        spread = statistics.pstdev(values) if len(values) > 1 else 0.0
        out.append(Found(param, statistics.fmean(values), spread, steps[-1].theta[i]))
    return out


def player_line(tune: TuneConfig, found: Sequence[Found]) -> str:
    """The tuned player's spec with the final values as options, over its own
    (``players.with_options``)."""
    return with_options(tune.player, tuple((f.param.name, f.value) for f in found))


def toml_pairs(found: Sequence[Found]) -> list[str]:
    """``NAME = VALUE`` for each parameter, as a TOML table holds them."""
    return [f"{f.param.name} = {f.value}" for f in found]


def report_json(
    tune: TuneConfig, steps: Sequence[Step], forfeits: Mapping[str, int]
) -> dict[str, Any]:
    """The run as one JSON object: ``values`` maps each parameter to its final value;
    ``forfeits`` counts the games lost by a forfeit, by reason."""
    found = summarize(tune, steps)
    return {
        "player": tune.player,
        "iterations": tune.schedule.iterations,
        "done": len(steps),
        "forfeits": dict(sorted(forfeits.items())),
        "values": {f.param.name: _json_value(f) for f in found},
        "spread": {f.param.name: f.spread for f in found},
        "last": {f.param.name: f.last for f in found},
        "spec": player_line(tune, found),
        "params": [
            {"name": p.name, "start": p.start, "min": p.low, "max": p.high, "c_end": p.c_end}
            for p in tune.params
        ],
        "trajectory": [{"k": s.k, "result": s.result, "theta": list(s.theta)} for s in steps],
    }


def _json_value(found: Found) -> float | int:
    return round(found.final) if found.param.integer else found.final


def _num(value: float) -> str:
    return f"{value:g}"


PANEL_W, PANEL_H, COLUMNS = 300, 150, 3
_MARGIN = (46, 24, 14, 26)  # left, top, right, bottom of a panel's plot area
MAX_POINTS = 600
"""The most points a parameter's line is drawn with (longer runs are thinned evenly)."""


def svg_text(text: str) -> str:
    """``text`` as the text of an SVG element: what a terminal would not show written as an
    escape (``printable``: a command line may hold a lone surrogate, which UTF-8 cannot
    write, or a bidirectional override), the two characters XML never holds too, and the
    markup escaped."""
    shown = printable(text).replace("\ufffe", "\\ufffe").replace("\uffff", "\\uffff")
    return html.escape(shown)


def trajectory_svg(tune: TuneConfig, steps: Sequence[Step]) -> str:
    """An SVG picture of every parameter's value after each step, one panel each (its own
    scale: its bounds), the start dashed and the final value as a band of its spread."""
    params = tune.params
    cols = min(COLUMNS, len(params))
    rows = math.ceil(len(params) / cols)
    width, height = cols * PANEL_W, rows * PANEL_H + 22
    title = svg_text(f"{tune.player}: {len(steps)} of {tune.schedule.iterations} iterations")
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="8" y="15" font-size="13">{title}</text>',
    ]
    found = summarize(tune, steps)
    for i, param in enumerate(params):
        x0, y0 = (i % cols) * PANEL_W, 22 + (i // cols) * PANEL_H
        parts.extend(_panel(param, found[i], [s.theta[i] for s in steps], x0, y0, tune))
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _panel(
    param: Param, found: Found, values: list[float], x0: int, y0: int, tune: TuneConfig
) -> list[str]:
    left, top, right, bottom = _MARGIN
    w, h = PANEL_W - left - right, PANEL_H - top - bottom
    total = max(1, tune.schedule.iterations)

    def x(step: float) -> float:
        return x0 + left + w * step / total

    def y(value: float) -> float:
        return y0 + top + h * (param.high - value) / (param.high - param.low)

    name = html.escape(param.name)
    out = [
        f'<text x="{x0 + left}" y="{y0 + top - 6}" font-weight="bold">{name} = '
        f"{html.escape(found.value)}</text>",
        f'<rect x="{x0 + left}" y="{y0 + top}" width="{w}" height="{h}" fill="none" '
        'stroke="#999"/>',
        f'<text x="{x0 + left - 4}" y="{y(param.high) + 4:.1f}" text-anchor="end">'
        f"{param.high:g}</text>",
        f'<text x="{x0 + left - 4}" y="{y(param.low):.1f}" text-anchor="end">{param.low:g}</text>',
        f'<text x="{x0 + left + w}" y="{y0 + top + h + 14}" text-anchor="end">{total}</text>',
        f'<text x="{x0 + left + w / 2:.1f}" y="{y0 + top + h + 14}" text-anchor="middle" '
        'fill="#666">iteration</text>',
        f'<line x1="{x0 + left}" y1="{y(param.start):.1f}" x2="{x0 + left + w}" '
        f'y2="{y(param.start):.1f}" stroke="#888" stroke-dasharray="4 3"/>',
    ]
    if values:
        band_top, band_low = found.final + found.spread, found.final - found.spread
        out.append(
            f'<rect x="{x0 + left}" y="{y(band_top):.1f}" width="{w}" '
            f'height="{max(1.0, y(band_low) - y(band_top)):.1f}" fill="#f4a261" opacity="0.35"/>'
        )
        stride = max(1, math.ceil(len(values) / MAX_POINTS))
        points = [(0, param.start)] + [
            (k + 1, v) for k, v in enumerate(values) if k % stride == 0 or k == len(values) - 1
        ]
        path = " ".join(f"{x(k):.1f},{y(v):.1f}" for k, v in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="#1d3557" stroke-width="1.3"/>')
    return out
