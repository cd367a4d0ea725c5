"""``enginesrv selfplay``: games of a bot against itself on worker processes, each decision kept
for learners as the environment's observation (``envs``, from the acting player's view), the
search's score of every first decision, and the game's result (``play``); each game kept as it
ends in a part file, and the parts joined into one columnar ``.npz`` file at the end
(``store``). docs/envs.md, "Self-play data", defines the file."""
