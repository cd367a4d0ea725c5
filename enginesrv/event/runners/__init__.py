"""Where an event's games are played: each runner plays one scheduled game at a time for the
tournament loop (``base.GameRunner``): on this machine or on a Dask cluster."""
