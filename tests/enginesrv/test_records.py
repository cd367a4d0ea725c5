"""Tests of enginesrv.event.play.records: the text record format and the boardspace SGF importer."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from enginesrv.event.play.records import (
    HEADER_KEYS,
    Record,
    RecordError,
    RecordMove,
    format_record,
    parse_record,
)
from enginesrv.event.play.sgf import import_boardspace_sgf, read_record_file

RECORDS = Path(__file__).parent.parent / "data" / "yinsh" / "records"

# name -> (plies, winner, p1 name, p2 name), from the table in RECORDS / "README.md".
GAMES = {
    "Y-DrMih-Dumbot-2026-02-20-0858": (56, "p2", "DrMih", "Dumbot"),
    "Y-DrMih-Dumbot-2026-02-23-1415": (53, "p1", "DrMih", "Dumbot"),
    "Y-BraveCombo-Dumbot-2026-03-20-0237": (76, "p2", "BraveCombo", "Dumbot"),
    "Y-phiulbrich-BestBot-2026-03-21-2221": (46, "p2", "phiulbrich", "BestBot"),
    "Y-BestBot-BOkpc-2026-03-13-1856": (11, "p1", "BestBot", "BOkpc"),
    "bga_862307561": (80, "p2", None, None),
}
SGF_GAMES = [name for name in GAMES if name.startswith("Y-")]
RESIGNED = {"Y-phiulbrich-BestBot-2026-03-21-2221": "p2", "Y-BestBot-BOkpc-2026-03-13-1856": "p1"}


def _error(excinfo: pytest.ExceptionInfo[RecordError], line: int) -> RecordError:
    error = excinfo.value
    assert error.line == line
    assert str(error).startswith(f"{error.source}:{line}: ")
    return error


# --- the existing .txt records ---------------------------------------------------------------


@pytest.mark.parametrize("name", list(GAMES))
def test_txt_record_reads(name: str) -> None:
    plies, winner, _, _ = GAMES[name]
    record = read_record_file(RECORDS / f"{name}.txt")
    assert len(record.tokens()) == plies
    assert f"Plies: {plies} " in "\n".join(record.comments)
    assert record.game == "yinsh"  # from the old `Variant` key
    assert record.final is not None
    assert record.final == record.headers["Final"]
    assert len(record.final.split()) == 5  # the final position string is read whole
    assert record.result().winner == winner
    assert record.result().text.startswith(("White (p1", "Black (p2"))
    assert record.start_position() is None
    assert not any(key.startswith("p1") for key in record.headers)  # `# p1 (White): ...`
    assert all(move.line > 0 and not move.annotations for move in record.moves)


def test_txt_record_line_numbers_and_comments() -> None:
    path = RECORDS / "Y-BestBot-BOkpc-2026-03-13-1856.txt"
    record = read_record_file(path)
    assert [move.line for move in record.moves] == list(range(10, 21))
    assert record.comments[2].startswith("  as published")  # continuation lines kept as is
    assert "p1 (White): BestBot" in record.comments
    assert format_record(record) != path.read_text(encoding="utf-8")  # canonical header order
    assert parse_record(format_record(record)) == record


# --- the boardspace .sgf files ---------------------------------------------------------------


@pytest.mark.parametrize("name", SGF_GAMES)
def test_sgf_import_matches_txt_twin(name: str) -> None:
    _, _, p1, p2 = GAMES[name]
    sgf_text = (RECORDS / f"{name}.sgf").read_text(encoding="utf-8")
    imported = import_boardspace_sgf(sgf_text, f"{name}.sgf")
    expected = read_record_file(RECORDS / f"{name}.txt")
    assert imported.tokens() == expected.tokens()
    assert imported.headers["Game"] == "yinsh"
    assert (imported.headers["P1"], imported.headers["P2"]) == (p1, p2)
    assert imported.headers["Event"] == name
    assert imported.headers["Date"].endswith(" 2026")
    assert imported.comments == ["source: boardspace sgf"]
    assert read_record_file(RECORDS / f"{name}.sgf") == imported  # chosen by the .sgf suffix
    assert parse_record(format_record(imported)) == imported
    if name in RESIGNED:
        assert imported.result().winner == RESIGNED[name]
        assert imported.headers["Reason"] == "resign"
    else:
        assert imported.result().winner is None  # RE[...] is never interpreted
        assert "Reason" not in imported.headers


def test_sgf_move_lines_point_at_the_sgf() -> None:
    path = RECORDS / "Y-BraveCombo-Dumbot-2026-03-20-0237.sgf"
    lines = path.read_text(encoding="utf-8").split("\n")
    record = read_record_file(path)
    assert "wr  E 6" in lines[record.moves[0].line - 1]
    assert "place w  B 1" in lines[record.moves[10].line - 1]  # b1-b2: the pick-up node
    assert "remove w E 8 A 4" in lines[record.moves[record.tokens().index("x:a4-e8")].line - 1]


def _sgf(*commands: str) -> str:
    body = "".join(f"; {command}\n" for command in commands)
    return f'(;GM[24]SU[Yinsh]\nP0[id "Ann"]P1[id "Bob Smith"]\n; P0[0 Start White]\n{body})\n'


@pytest.mark.parametrize(
    ("command", "token"),
    [
        ("P0[1 place wr  F 6]", "f6"),
        ("P1[place br K 10]", "k10"),
        ("P0[7 move G 9 F 9]TM[12]", "g9-f9"),
        ("P0[remove w H 9 H 5]", "x:h5-h9"),
        ("P1[remove b E 10 E 6]", "x:e6-e10"),  # rows compare as numbers
        ("P1[remove b E 8 A 4]", "x:a4-e8"),
        ("P0[remove b C 3 G 7]", "x:c3-g7"),
        ("P0[remove wr E 10]", "r:e10"),
        ("P1[remove br  A 2]", "r:a2"),
    ],
)
def test_sgf_single_commands(command: str, token: str) -> None:
    record = import_boardspace_sgf(_sgf(command, "P0[Done ]"))
    assert record.tokens() == [token]
    assert record.moves[0].line == 4
    assert (record.headers["P1"], record.headers["P2"]) == ("Ann", "Bob Smith")


def test_sgf_pick_and_drop() -> None:
    record = import_boardspace_sgf(
        _sgf(
            "P0[1 place w  K 8]",
            "P0[2 pick w]",
            "P0[3 drop board  K 9]",
            "P0[4 Done ]",
            "P1[5 pickb D 2]",
            "P1[6 dropb D 2]",  # put back where it was: no move
            "P1[7 pickb D 2]",
            "P1[8 dropb D 5]",
            "P1[9 Done ]",
            "P0[10 place w C 3]",  # still held when the record ends: no move
        )
    )
    assert record.tokens() == ["k8-k9", "d2-d5"]
    assert [move.line for move in record.moves] == [4, 10]


def test_sgf_resign_ends_the_record() -> None:
    record = import_boardspace_sgf(_sgf("P0[place wr E 1]", "P1[Resign ]", "P0[place wr E 2]"))
    assert record.tokens() == ["e1"]
    assert record.result().winner == "p1"
    assert record.headers["Reason"] == "resign"


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("P1[12 frobnicate C 6]", "unknown boardspace command"),
        ("P1[place xr C 6]", "unknown boardspace command"),
        ("P0[move E 1 E]", "unknown boardspace command"),
        ("P0[place wr 5 E]", "bad point"),
        ("P0[drop board E 2]", "drop with no ring picked up"),
        ("P0[]", "unknown boardspace command"),
    ],
)
def test_sgf_bad_command(command: str, reason: str) -> None:
    text = _sgf("P0[place wr E 1]", "P1[place br E 9]", command)
    with pytest.raises(RecordError) as excinfo:
        import_boardspace_sgf(text, "game.sgf")
    error = _error(excinfo, 6)
    assert error.source == "game.sgf"
    assert reason in error.reason
    assert command.partition("]")[0] + "]" in error.reason


def test_sgf_unfinished_ring_move() -> None:
    with pytest.raises(RecordError, match=r"^<string>:5: the ring picked up at e1 was not") as e:
        import_boardspace_sgf(_sgf("P0[place w E 1]", "P0[move E 1 E 2]"))
    _error(e, 5)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("(;GM[1]\n;P0[move A 1 A 2])", 1),
        ("(;GM[24]\n;P0[move A 1 A 2]\n", 3),  # no closing ')'
        ("(;GM[24]\n;P0[move A 1 A 2]\n(;P0[Done]))", 3),  # a variation
        ("(;GM[24]\n;P0[move A 1 A 2\n)", 2),  # unterminated value
        ("(GM[24])", 1),
        ("", 0),
    ],
)
def test_sgf_malformed(text: str, line: int) -> None:
    with pytest.raises(RecordError) as excinfo:
        import_boardspace_sgf(text)
    assert excinfo.value.line == line


def test_sgf_escaped_bracket_and_crlf() -> None:
    text = '(;GM[24]GN[a \\] b]\r\nP0[id "X"]\r\n; P0[move A 1 A 2]\r\n)'
    record = import_boardspace_sgf(text)
    assert record.headers["Event"] == "a ] b"
    assert record.moves == [RecordMove("a1-a2", (), 3)]
    assert record.moves[0].line == 3


# --- the text format ---------------------------------------------------------------------------


def test_parse_new_format() -> None:
    text = (
        "# Game: yinsh+blitz\n"
        "# Start: startpos\n"
        "# a comment\n"
        "#\n"
        "# P1: alpha\n"
        "# Result: p2 on time\n"
        "# Reason: time-forfeit\n"
        "\n"
        "e6\r\n"
        "f7  ; ms=1200 score=-35 depth=9 nodes=123456\n"
        "   \n"
        "# comments may follow moves\n"
        "e6-e8  ; note=a=b\n"
    )
    record = parse_record(text)
    assert record.headers == {
        "Game": "yinsh+blitz",
        "Start": "startpos",
        "P1": "alpha",
        "Result": "p2 on time",
        "Reason": "time-forfeit",
    }
    assert record.game == "yinsh+blitz"
    assert record.start == "startpos"
    assert record.start_position() is None
    assert record.final is None
    assert record.comments == ["a comment", "", "comments may follow moves"]
    assert record.tokens() == ["e6", "f7", "e6-e8"]
    assert record.moves[1].annotations == (
        ("ms", "1200"), ("score", "-35"), ("depth", "9"), ("nodes", "123456"),
    )  # fmt: skip
    assert record.moves[2].annotations == (("note", "a=b"),)
    assert [move.line for move in record.moves] == [9, 10, 13]
    assert record.result().winner == "p2"


def test_start_position() -> None:
    assert Record().start_position() is None
    assert Record(headers={"Start": ""}).start_position() is None
    assert Record(headers={"Start": "4/7 w p 0-0 51"}).start_position() == "4/7 w p 0-0 51"


@pytest.mark.parametrize(
    ("text", "winner"),
    [
        ("p1", "p1"),
        ("p2 wins 3-2", "p2"),
        ("draw by repetition", "draw"),
        ("*", "*"),
        ("* adjourned", "*"),
        ("Black (p2, Dumbot) wins 3-2: Black removes his third ring.", "p2"),
        ("White (p1) wins; p2 resigned", "p1"),
        ("the winner is p1, the loser p2", "p1"),
        ("Draw agreed", "draw"),
        ("Game won by Dumbot", None),
        ("p10 wins", None),
        ("", None),
    ],
)
def test_result_tag(text: str, winner: str | None) -> None:
    tag = Record(headers={"Result": text}).result()
    assert (tag.winner, tag.text) == (winner, text)


def test_result_absent() -> None:
    tag = Record().result()
    assert (tag.winner, tag.text) == (None, "")


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("# Game: yinsh\ne6\n\n# Result: p1\n", 4, "header 'Result' after the first move"),
        ("# Variant: yinsh\n# Game: yinsh\n", 2, "repeated header 'Game'"),
        ("e6\nf7  ; ms=12 depth\n", 2, "malformed annotation 'depth'"),
        ("e6  ; ms=\n", 1, "malformed annotation 'ms='"),
        ("e6  ; =3\n", 1, "malformed annotation '=3'"),
        ("e6  ; \n", 1, "malformed annotation ''"),
        ("e6  ; ms=1  depth=2\n", 1, "malformed annotation ''"),
        ("e6  ; ms=1\tdepth=2\n", 1, "malformed annotation"),
        ("# a\n\ne6 f7\n", 3, "whitespace in move line"),
        ("e6 ; ms=1\n", 1, "whitespace in move line"),
        ("e6  ;ms=1\n", 1, "whitespace in move line"),
        (" e6\n", 1, "whitespace in move line"),
        ("e6 \n", 1, "whitespace in move line"),
        ("  # indented comment\n", 1, "whitespace in move line"),
    ],
)
def test_parse_errors(text: str, line: int, reason: str) -> None:
    with pytest.raises(RecordError) as excinfo:
        parse_record(text, "game.txt")
    error = _error(excinfo, line)
    assert error.source == "game.txt"
    assert reason in error.reason


def test_record_error() -> None:
    error = RecordError("a.txt", 0, "cannot read file")
    assert str(error) == "a.txt: cannot read file"
    assert isinstance(error, ValueError)
    copy = pickle.loads(pickle.dumps(RecordError("<string>", 7, "bad")))
    assert (copy.source, copy.line, copy.reason) == ("<string>", 7, "bad")
    assert str(copy) == "<string>:7: bad"


def test_format_order_and_layout() -> None:
    record = Record(
        headers={"Final": "f", "Result": "p1", "Game": "yinsh", "Custom": "x", "P2": "b"},
        moves=[RecordMove("e6", (("ms", "5"), ("score", "1"))), RecordMove("f7")],
        comments=["hello", ""],
    )
    assert format_record(record) == (
        "# Game: yinsh\n# P2: b\n# Result: p1\n# Final: f\n# Custom: x\n"
        "# hello\n# \ne6  ; ms=5 score=1\nf7\n"
    )
    # Unknown keys are written, but come back as comments.
    assert parse_record(format_record(record)).comments == ["Custom: x", "hello", ""]


@pytest.mark.parametrize(
    "record",
    [
        Record(headers={"Game": "two\nlines"}),
        Record(headers={"Game": " padded"}),
        Record(headers={"A:B": "x"}),
        Record(comments=["Result: p1"]),  # would read back as a header
        Record(comments=["carriage\rreturn"]),
        Record(moves=[RecordMove("")]),
        Record(moves=[RecordMove("e6 f7")]),
        Record(moves=[RecordMove("#e6")]),
        Record(moves=[RecordMove("e6", (("ms", ""),))]),
        Record(moves=[RecordMove("e6", (("m=s", "1"),))]),
        Record(moves=[RecordMove("e6", (("ms", "1 2"),))]),
    ],
)
def test_format_refuses_what_would_not_read_back(record: Record) -> None:
    with pytest.raises(RecordError, match=r"^<record>: cannot write"):
        format_record(record)


# --- round trip ------------------------------------------------------------------------------

_NO_BREAKS = st.characters(exclude_categories=["Cs"], exclude_characters="\r\n")
_WORD = (
    st.text(st.characters(exclude_categories=["Cs", "Cc", "Zs", "Zl", "Zp"]), min_size=1)
    .filter(lambda text: not any(char.isspace() for char in text))
)  # fmt: skip
_VALUE = st.text(_NO_BREAKS).map(str.strip)
_COMMENT = st.text(_NO_BREAKS).filter(lambda text: not parse_record(f"# {text}").headers)
_MOVE = st.builds(
    RecordMove,
    token=_WORD.filter(lambda word: not word.startswith("#")),
    annotations=st.lists(
        st.tuples(_WORD.filter(lambda word: "=" not in word), _WORD), max_size=4
    ).map(tuple),
    line=st.integers(0, 10_000),  # not part of equality
)
_RECORD = st.builds(
    Record,
    headers=st.dictionaries(st.sampled_from(HEADER_KEYS), _VALUE),
    moves=st.lists(_MOVE, max_size=8),
    comments=st.lists(_COMMENT, max_size=4),
)


@given(_RECORD)
def test_round_trip(record: Record) -> None:
    text = format_record(record)
    assert parse_record(text) == record
    assert format_record(parse_record(text)) == text
    assert re.fullmatch(r"(?:[^\n]*\n)*", text)


# --- files -----------------------------------------------------------------------------------


def test_read_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.txt"
    with pytest.raises(RecordError) as excinfo:
        read_record_file(path)
    assert excinfo.value.line == 0
    assert excinfo.value.source == str(path)
    assert str(excinfo.value).startswith(f"{path}: cannot read file")


def test_read_directory(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="cannot read file"):
        read_record_file(tmp_path)


def test_read_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes("# Event: Café\ne6\n".encode("latin-1"))
    with pytest.raises(RecordError) as excinfo:
        read_record_file(path)
    assert excinfo.value.line == 0
    assert str(excinfo.value) == f"{path}: not UTF-8 text (bad byte at offset 12)"


def test_read_detects_format(tmp_path: Path) -> None:
    sgf = tmp_path / "game.record"
    sgf.write_text("\n  " + _sgf("P0[place wr E 1]"), encoding="utf-8")
    assert read_record_file(sgf).tokens() == ["e1"]
    text = tmp_path / "game.txt"
    text.write_bytes(b"\xef\xbb\xbf# Game: yinsh\r\ne1\r\n")  # BOM and CRLF
    record = read_record_file(str(text))
    assert record.game == "yinsh"
    assert record.moves == [RecordMove("e1", (), 2)]
    assert record.moves[0].line == 2
    bad = tmp_path / "bad.SGF"
    bad.write_text("e1\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"bad\.SGF:1: malformed SGF"):
        read_record_file(bad)


# mostly pieces that can be written, now and then one character that may spoil one
_PIECE = st.one_of(
    st.text(alphabet=st.sampled_from("ab1é;"), min_size=1, max_size=4),
    st.text(alphabet=st.sampled_from("ab1é;"), max_size=3).flatmap(
        lambda text: st.sampled_from("=# \t\n\r\x1c\u2003\u00a0").map(
            lambda bad: text[:1] + bad + text[1:]
        )
    ),
)


def _writable_piece_by_piece(moves: list[RecordMove]) -> bool:
    """The rule for move lines, piece by piece: what ``format_record`` must agree with."""
    for move in moves:
        token = move.token
        if not token or any(c.isspace() for c in token) or token.startswith("#"):
            return False
        for key, value in move.annotations:
            if not key or "=" in key or any(c.isspace() for c in key):
                return False
            if not value or any(c.isspace() for c in value):
                return False
    return True


# a line break inside a piece would read back as two move lines
@example([RecordMove("1\n1")])
@example([RecordMove("e6", (("ms", "1\n2"),))])
@given(
    st.lists(
        st.builds(RecordMove, _PIECE, st.lists(st.tuples(_PIECE, _PIECE), max_size=3).map(tuple)),
        max_size=4,
    )
)
def test_move_lines_are_refused_exactly_when_a_piece_would_not_read_back(
    moves: list[RecordMove],
) -> None:
    # the moves are checked in one pass over their text; the pieces' rule is the reference
    record = Record(headers={"Game": "yoxii"}, moves=moves)
    if _writable_piece_by_piece(moves):
        assert parse_record(format_record(record)).moves == moves
    else:
        with pytest.raises(RecordError):
            format_record(record)
