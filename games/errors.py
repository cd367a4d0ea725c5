"""The error taxonomy of the rules layer.

Four classes, each raised at one boundary only. All of them are ``ValueError`` subclasses, so a
caller that only wants "bad input" can catch ``ValueError``; callers that answer differently per
kind (the protocol maps them to different error codes) catch the specific class.
"""

from __future__ import annotations


class GameError(ValueError):
    """Base class of every error the rules layer raises on bad input.

    Attributes:
        text: the offending input, quoted in the message.
        reason: why it was rejected, in a few words.
    """

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"{text!r}: {reason}")
        self.text = text
        self.reason = reason


class UnknownGameError(GameError):
    """Raised by ``games.load`` for a name that is not registered.

    The reason lists the registered names. Never raised for a registered game whose module is
    merely slow to import.
    """


class InvalidMoveError(GameError):
    """Raised by ``State.parse_move`` when the text is not a move token of the game at all.

    Wrong syntax, an unknown point, a non-canonical spelling (uppercase, reversed row ends,
    leading zeros). Not raised for a well-formed token that is merely illegal here: that is
    ``IllegalMoveError``.
    """


class IllegalMoveError(GameError):
    """Raised by ``State.parse_move`` for a well-formed token that is not legal in this position.

    Includes any token on a finished game. ``State.push`` never raises it: ``push`` trusts its
    input and must only be given moves from ``legal_moves()`` or ``parse_move()``.
    """


class ReplayError(GameError):
    """Raised by ``games.replay`` for a token of the list that is not a move where it comes.

    Attributes:
        number: the token's place in the list (1 for the first, or as ``replay`` was told).
        error: the ``InvalidMoveError`` or ``IllegalMoveError`` behind it; ``text`` and
            ``reason`` are its.
    """

    def __init__(self, number: int, error: GameError) -> None:
        super().__init__(error.text, error.reason)
        self.number = number
        self.error = error
        self.args = (f"move {number} {error.text!r}: {error.reason}",)

    def __str__(self) -> str:
        return str(self.args[0])


class InvalidPositionError(GameError):
    """Raised by ``Game.state_from_string`` for a position string that breaks the grammar or a
    validity rule of the game's rule file.

    The message names the field and the reason (``field`` holds the field's name).
    """

    def __init__(self, text: str, field: str, reason: str) -> None:
        super().__init__(text, f"{field}: {reason}")
        self.field = field
