"""The ladder (docs/ladder.md): players are accounts with tokens, kept as salted hashes in the
ladder folder's token file (``accounts``, over ``enginesrv.tokens``)."""
