"""What an event's games leave: the store (SQLite and the records beside it), the standings,
the statistics (Elo, LOS, SPRT), ratings, and the reports and words that present them."""
