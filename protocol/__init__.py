"""The enginesrv wire protocol, sans I/O.

What belongs here: the message model (requests, replies, notifications), the text-line codec
(a superset of UGI), the msgpack-RPC codec, the shared table of error codes, and incremental
decoders with explicit limits. Imports msgpack only, none of our packages: moves and positions
are opaque strings here, and no code in this package knows a rule of any game.
"""
