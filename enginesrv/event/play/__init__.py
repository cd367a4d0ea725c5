"""One game: the players behind one interface (``players``: built-in bots, external engines),
the arbiter that plays a game between two of them under the rules and clocks (``arbiter``),
the limits and openings it is played from, the slots that keep an event's player instances,
the containment of external engines and their private logs, and the game records."""
