"""``enginesrv analyse``: every ply of game records searched on the worker pool, each move
played judged against the best line (``judge``), and the records written back annotated."""
