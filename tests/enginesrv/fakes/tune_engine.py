"""An engine tuned by its options that misbehaves around ``setoption``, for the tuning attack
tests: ``python tune_engine.py MODE NAME [VALUE]``.

It plays as ``fake_engine.py good`` does (the first legal move), declares the option NAME
(a spin, 0 to 1000), refuses an option it does not know (as the server does) and misbehaves
when it is sent ``setoption name NAME value V``:

* ``mute``: it answers nothing more (no ``readyok``, no error) and stays alive, sleeping for
  at most a minute.
* ``exit``: it exits at once, answering nothing (an engine gone between two games).
* ``error``: it answers ``error 101 bad-arguments ...`` when V is VALUE, else takes it.
* ``longerror``: it answers every value but VALUE with an error whose text is just under a
  mebibyte long.
* ``flood``: it writes 2,000 lines of ``info string`` of 1,000 bytes each, then takes it.
* ``ignore``: it takes every value and plays as if it had none (an option it does not read).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.enginesrv.fakes.fake_engine import Fake, say

MODES = ("mute", "exit", "error", "longerror", "flood", "ignore")


class TuneFake(Fake):
    def __init__(self, mode: str, name: str, value: str | None) -> None:
        super().__init__("good", None)
        self.tune_mode = mode
        self.option = name
        self.bad = value

    def hello(self) -> None:
        say("id name tunefake")
        say("option name Game type string default yoxii")
        say(f"option name {self.option} type spin default 0 min 0 max 1000")
        say("ugiok")

    def setoption(self, words: list[str]) -> None:
        if "value" not in words:
            return
        at = words.index("value")
        name = " ".join(words[2:at])
        value = " ".join(words[at + 1 :])
        if name.lower() in ("game", "seed"):
            super().setoption(words)
            return
        if name.lower() != self.option.lower():
            say(f"error 101 bad-arguments setoption: unknown option {name}")
            return
        if self.tune_mode == "mute":
            time.sleep(60)
            sys.exit(0)
        if self.tune_mode == "exit":
            sys.exit(3)
        if self.tune_mode == "error" and value == self.bad:
            say(f"error 101 bad-arguments setoption: {name} does not take {value}")
        if self.tune_mode == "longerror" and value != self.bad:
            say(f"error 101 bad-arguments {'y' * 1_048_400}")
        if self.tune_mode == "flood":
            for _ in range(2000):
                say("info string " + "x" * 1000)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] not in MODES:
        sys.stderr.write(f"tune_engine: MODE NAME [VALUE]; modes: {', '.join(MODES)}\n")
        return 2
    fake = TuneFake(argv[1], argv[2], argv[3] if len(argv) > 3 else None)
    while True:
        line = sys.stdin.readline()
        if not line:
            return 0
        fake.handle(line)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
