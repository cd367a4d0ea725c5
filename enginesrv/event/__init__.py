"""Matches and tournaments: the players, built-in or external (``players``), one game between
them under the rules and clocks (``arbiter``), whole events with their schedule, storage and
standings (``tournament``), game records (``records``) and the statistics of results
(``stats``). Knows nothing of the server."""
