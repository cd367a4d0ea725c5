"""The token file (``enginesrv.tokens``) and a ladder's players (``enginesrv ladder add``,
``revoke``, ``list``): a token is shown once and kept only as a salted hash; a check costs one
scrypt whatever it is given; a crafted or damaged file is refused naming its line; adds from
two processes at once are both kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from enginesrv import tokens
from enginesrv.tokens import TokenFile, TokenFileError
from tests.enginesrv.test_event_files import run_main


def test_a_token_is_kept_only_as_a_salted_hash(tmp_path: Path) -> None:
    file = TokenFile(tmp_path / "tokens")
    token = file.add("alice")
    other = file.add("bob")
    assert tokens.TOKEN_CHARS.fullmatch(token)
    text = (tmp_path / "tokens").read_text()
    assert token not in text
    assert other not in text
    assert (tmp_path / "tokens").stat().st_mode & 0o777 == 0o600
    digests = [account.digest for account in file.accounts()]
    assert [account.name for account in file.accounts()] == ["alice", "bob"]
    assert len({d.split("$")[4] for d in digests}) == 2  # each its own salt
    assert file.check("alice", token)
    assert file.check("bob", other)
    assert not file.check("alice", other)
    assert not file.check("carol", token)
    assert not file.check("alice", token[:-1] + ("A" if token[-1] != "A" else "B"))
    assert not file.check("alice", token + " ")
    file.revoke("alice")
    assert not file.check("alice", token)
    assert file.check("bob", other)


def test_a_check_costs_one_scrypt_whatever_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A known name, an unknown one, a token of the wrong form: one hash each, so that the
    time of the answer does not tell which part was wrong."""
    file = TokenFile(tmp_path / "tokens")
    token = file.add("alice")
    calls: list[int] = []
    real = tokens._hash

    def counted(token: str, salt: bytes, n: int, r: int, p: int) -> bytes:
        calls.append(n)
        return real(token, salt, n, r, p)

    monkeypatch.setattr(tokens, "_hash", counted)
    for name, given in (("alice", token), ("alice", "x"), ("nobody", token), ("", "")):
        calls.clear()
        file.check(name, given)
        assert calls == [tokens.SCRYPT_N], (name, given)


def test_names_are_checked_and_taken_once(tmp_path: Path) -> None:
    file = TokenFile(tmp_path / "tokens")
    for bad in ("", "1abc", "a b", "a" * 33, "é", "a/b", "a\nb"):
        with pytest.raises(ValueError, match="a letter, then up to 31"):
            file.add(bad)
    file.add("a.b-c_1")
    with pytest.raises(ValueError, match="taken"):
        file.add("a.b-c_1")
    with pytest.raises(ValueError, match="no such account"):
        file.revoke("zed")


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("alice", "line 2: not NAME"),
        ("alice scrypt$16384$8$1$00$11 now", "line 2: not NAME"),
        ("al ice scrypt now", "line 2: not NAME"),
        ("alice scrypt$1048576$32$1$" + "0" * 32 + "$" + "0" * 64 + " now", "costs out of range"),
        ("alice scrypt$16000$8$1$" + "0" * 32 + "$" + "0" * 64 + " now", "costs out of range"),
    ],
)
def test_a_damaged_or_crafted_line_is_refused_naming_it(
    tmp_path: Path, line: str, said: str
) -> None:
    path = tmp_path / "tokens"
    TokenFile(path).add("bob")
    with path.open("a") as file:
        file.write(line + "\n")
    with pytest.raises(TokenFileError, match=said):
        TokenFile(path).accounts()
    with pytest.raises(TokenFileError):
        TokenFile(path).check("bob", "x")


def test_a_fifo_or_a_link_is_no_token_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(TokenFileError, match="is a FIFO, not a regular file"):
        TokenFile(tmp_path / "fifo").accounts()
    real = TokenFile(tmp_path / "real")
    real.add("alice")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(TokenFileError, match="is a symbolic link, which is not followed"):
        TokenFile(tmp_path / "link").accounts()


ADD_MANY = """
import sys
from pathlib import Path
from enginesrv.tokens import TokenFile
file = TokenFile(Path(sys.argv[1]))
for i in range(8):
    file.add(f"{sys.argv[2]}{i}")
"""


def test_adds_from_two_processes_at_once_are_all_kept(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    runs = [
        subprocess.Popen([sys.executable, "-c", ADD_MANY, str(path), prefix])
        for prefix in ("left", "right")
    ]
    assert [run.wait(timeout=120) for run in runs] == [0, 0]
    names = sorted(account.name for account in TokenFile(path).accounts())
    assert names == sorted(f"{side}{i}" for side in ("left", "right") for i in range(8))


def test_the_ladder_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "ladder"
    code, out, err = run_main(capsys, "ladder", "add", "alice", "--out", str(folder))
    assert code == 0, err
    token = out.strip()
    assert err == "ladder: player alice added; its token is shown only now\n"
    assert TokenFile(folder / "tokens").check("alice", token)
    code, out, err = run_main(capsys, "ladder", "list", "--out", str(folder), "--json")
    assert code == 0, err
    (listed,) = json.loads(out)
    assert listed["name"] == "alice"
    assert token not in out
    code, out, err = run_main(capsys, "ladder", "list", "--out", str(folder))
    assert out.startswith("alice  ")
    for argv, said in (
        (("add", "alice"), "name 'alice': taken"),
        (("add", "9lives"), "name '9lives': a letter"),
        (("revoke", "bob"), "name 'bob': no such account"),
    ):
        code, out, err = run_main(capsys, "ladder", *argv, "--out", str(folder))
        assert (code, out) == (2, ""), err
        assert err == f"enginesrv ladder: error: {said}" + err.split(said, 1)[1]
        assert err.count("\n") == 1
    code, out, err = run_main(capsys, "ladder", "list", "--out", str(tmp_path / "none"))
    assert (code, err) == (2, f"enginesrv ladder: error: {tmp_path / 'none'}: no such folder\n")
    code, _, err = run_main(capsys, "ladder", "revoke", "alice", "--out", str(folder))
    assert code == 0, err
    assert not TokenFile(folder / "tokens").check("alice", token)
