"""Matches and tournaments, by job: ``play`` (one game: the players, the arbiter, the limits,
openings and records), ``runners`` (where games are played: this machine or a Dask cluster),
``results`` (the store, standings, statistics and reports), and the event itself: its
configuration, schedule and the one tournament loop (``tournament``) over any runner. Knows
nothing of the server."""
