"""The enginesrv program: command line, server, stdio engine, sessions, worker pool, matches.

What belongs here: everything that does I/O or keeps time. It is the only package that imports
trio, and the only one that wires protocol messages to games and bots. The command-line entry
point is ``enginesrv.cli:main``.
"""

__version__ = "0.1.0"
