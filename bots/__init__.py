"""Bots: the engine interface, search and per-game evaluations.

What belongs here: the ``Engine`` plug-in interface with its options, limits and search
results; the built-in bots (random, greedy, alpha-beta); evaluation modules per game under
``bots.eval``. Imports ``games`` only. Search is synchronous and pure: no trio, no I/O, no
printing, no wire formats, and no clock except through the limits it is handed.
"""
