"""An event's configuration as its store keeps it (JSON in the ``meta`` table), read back
and checked before anything is built from it: the store is a file anyone may have written."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from typing import get_type_hints

from enginesrv.event.config import EventConfig
from enginesrv.event.results.rows import fits, short

MAX_CONFIG_NESTING = 8
"""The deepest nesting of lists and objects read in a stored configuration: it holds lists
of strings in an object; a deeper one is refused before it is parsed (Python's parser
recurses, and a text of a hundred thousand ``[`` would end in a ``RecursionError``)."""

# possessive: one pass, no state kept per character or escape (a string of a million escapes
# would otherwise cost some 60 MB)
_JSON_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)
_JSON_BRACKETS = re.compile(r"[\[\]{}]")


class StoredConfigError(ValueError):
    """A stored configuration that no run writes; the message says what is wrong with it."""


def read_config(text: str) -> EventConfig:
    """The configuration stored as ``text``, checked field by field and as a whole.

    Raises:
        StoredConfigError: too deeply nested, not JSON, not an object, a field of the wrong
            type, a value out of range, or fewer than two players.
    """
    if _nesting(text) > MAX_CONFIG_NESTING:
        raise StoredConfigError(
            f"the stored configuration nests lists or objects more than {MAX_CONFIG_NESTING} deep"
        )
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise StoredConfigError(
            f"the stored configuration is not JSON: {short(str(exc))}"
        ) from None
    if not isinstance(raw, dict):
        raise StoredConfigError("the stored configuration is not a JSON object")
    hints = get_type_hints(EventConfig)
    for f in fields(EventConfig):
        if f.name not in raw:
            continue
        value = raw[f.name]
        if not fits(tuple(value) if isinstance(value, list) else value, hints[f.name]):
            raise StoredConfigError(
                f"the stored configuration has {f.name} = {short(json.dumps(value))}"
            )
    try:
        config = EventConfig.from_json(text)
        config.check()  # each value's range: games = 10**18 would build a schedule for ever
    except (TypeError, ValueError, AttributeError) as exc:
        raise StoredConfigError(f"the stored configuration is not valid: {exc}") from None
    if len(config.players) < 2:
        raise StoredConfigError("the stored configuration has fewer than two players")
    return config


def _nesting(text: str) -> int:
    """How deep lists and objects nest in the JSON ``text`` (its strings left out), read in
    one pass without parsing it."""
    depth = deepest = 0
    for bracket in _JSON_BRACKETS.findall(_JSON_STRING.sub("", text)):
        if bracket in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest
