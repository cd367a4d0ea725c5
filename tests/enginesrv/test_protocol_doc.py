"""The transcripts of docs/protocol.md (§10), and examples/ugi-session.txt, replayed against a
live server in the framing each shows, every answer compared with what the transcript says.

How a transcript is read is written at the top of docs/protocol.md §10; in short: ``> `` lines
are sent, each once the ``< `` lines before it have come; ``< `` lines must come, in order in the
text framing (by request id in msgpack, where responses may overtake each other); a ``# ...``
comment stands for lines the transcript leaves out; `` ... `` inside a line (or a bare ``...``
in a frame) stands for the rest of it; progress (``info depth ...``) and the best move of a
search are matched by their shape, since their values depend on the search. A transcript that
cannot be replayed says so in a ``# not replayed: REASON`` line (none does), and its test is
reported as skipped with that reason. The example sessions of the notation pages
(docs/GAME.md) are read the same way.

The server is configured as ``enginesrv serve`` starts by default (two workers, no default
game, alphabeta), with the searches run in threads of the test process. Also here: the
cutegames recipe (docs/cutegames.md) holds together, and examples/ugi_session.py shows a real
search.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgpack
import pytest
import trio

import games
from enginesrv.serve.auth import Keeper
from enginesrv.serve.connection import Limits
from enginesrv.serve.server import Server
from enginesrv.serve.settings import SessionConfig
from enginesrv.tokens import TokenFile, digest_of
from tests.enginesrv.peer import TextPeer, ThreadRunner, open_stream, serving
from tests.trio_run import trio_test

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "protocol.md"
SESSION = ROOT / "examples" / "ugi-session.txt"
TIMEOUT = 10.0
"""Seconds the test waits for an answer the transcript shows before it fails."""
WORKERS = 2
"""The workers of ``enginesrv serve`` by default: the handshake shows their hash share."""
HASH_BUDGET = 512
BARRIER = 2**31
"""The request id of the ``ping`` a msgpack replay ends with (no transcript uses it)."""
CLOSING = (102, 103, 302, 304, 307)
"""Error codes after which the server closes the connection (§6)."""
Framing = Literal["text", "msgpack"]


# --- reading transcripts -------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One line of a transcript: ``send`` (``>``), ``expect`` (``<``) or ``skip`` (``# ...``)."""

    kind: Literal["send", "expect", "skip"]
    text: str
    line: int
    """Where it starts in its file (1-based), for failure messages."""


@dataclass
class Transcript:
    title: str
    path: Path
    line: int
    steps: list[Step] = field(default_factory=list)
    not_replayed: str | None = None

    @property
    def framing(self) -> Framing:
        first = next(step.text for step in self.steps if step.kind == "send")
        return "msgpack" if first.startswith(("[", "{")) else "text"

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line} ({self.title})"


def read_block(lines: list[str], start: int, title: str, path: Path) -> Transcript:
    """The transcript in ``lines`` (a fenced block's lines, the first at file line ``start``)."""
    transcript = Transcript(title, path, start)
    for number, raw in enumerate(lines, start):
        if not raw.strip():
            continue
        if raw.startswith((" ", "\t")):  # a msgpack frame continued on the next line
            assert transcript.steps, f"{path.name}:{number}: a continuation with nothing before"
            last = transcript.steps[-1]
            transcript.steps[-1] = Step(last.kind, f"{last.text} {raw.strip()}", last.line)
        elif raw.startswith("> "):
            transcript.steps.append(Step("send", raw[2:], number))
        elif raw.startswith("< ") or raw == "<":
            transcript.steps.append(Step("expect", raw[2:], number))
        elif raw.startswith("# not replayed:"):
            transcript.not_replayed = raw.removeprefix("# not replayed:").strip()
        elif raw.startswith("# ..."):
            transcript.steps.append(Step("skip", raw, number))
        elif not raw.startswith("#"):
            raise AssertionError(f"{path.name}:{number}: not a transcript line: {raw!r}")
    return transcript


def doc_transcripts(path: Path = DOC) -> list[Transcript]:
    """Every fenced block of ``path`` whose first line is sent by the client (``> ``)."""
    found: list[Transcript] = []
    title = ""
    block: list[str] | None = None
    start = 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if block is None:
            if line.startswith("#"):
                title = line.lstrip("#").strip()
            elif line.startswith("```"):
                block, start = [], number + 1
        elif line.startswith("```"):
            content = [x for x in block if x.strip()]
            if content and content[0].startswith("> "):
                found.append(read_block(block, start, title, path))
            block = None
        else:
            block.append(line)
    return found


def session_transcript() -> Transcript:
    lines = SESSION.read_text(encoding="utf-8").splitlines()
    return read_block(lines, 1, "examples/ugi-session.txt", SESSION)


# --- matching text lines -------------------------------------------------------------------

PROGRESS_FIELDS = ("depth", "seldepth", "multipv", "nodes", "nps", "time", "hashfull")
PROGRESS = re.compile(
    r"info(?: depth \d+)?(?: seldepth \d+)?(?: multipv \d+)?"
    r"(?: score (?:cp|win|loss) -?\d+(?: lowerbound| upperbound)?)?"
    r"(?: nodes \d+)?(?: nps \d+)?(?: time \d+)?(?: hashfull \d+)?(?: pv \S+(?: \S+)*?)?"
    r"(?: string .*)?"
)
"""A progress line as docs/protocol.md §4.1 defines it."""


def is_progress(line: str) -> bool:
    return line.startswith("info ") and not line.startswith("info string ")


def progress_pattern(shown: str) -> re.Pattern[str]:
    """A progress line of the shape ``shown`` has, whatever its values."""
    tokens = shown.split(" ")
    parts: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in PROGRESS_FIELDS:
            parts.append(f"{token} \\d+")
            i += 2
        elif token == "score":
            parts.append(r"score (?:cp|win|loss) -?\d+(?: lowerbound| upperbound)?")
            i += 3
            if i < len(tokens) and tokens[i] in ("lowerbound", "upperbound"):
                i += 1
        elif token == "pv":
            end = tokens.index("string", i) if "string" in tokens[i:] else len(tokens)
            parts.append(r"pv \S+(?: \S+)*?")
            i = end
        elif token == "string":
            parts.append(re.escape(" ".join(tokens[i:])))
            break
        else:
            parts.append(re.escape(token))
            i += 1
    return re.compile(" ".join(parts))


ANALYSED_END = re.compile(r"analysisok id (?P<id>\S+) bestmove (?P<move>\S+)(?P<rest>.*)")
"""The end of an analysed position's answer (``analysisok``)."""


def analysed_pattern(shown: str) -> re.Pattern[str] | None:
    """What an ``analysisinfo`` or ``analysisok`` line stands for (None: neither): a line of
    the shape of a progress line; any move but none, any nodes and time."""
    words = shown.split(" ")
    if shown.startswith("analysisinfo id ") and len(words) > 3:
        head = re.escape(" ".join(words[:3]))
        progress = progress_pattern("info " + " ".join(words[3:])).pattern
        return re.compile(head + progress.removeprefix("info"))
    end = ANALYSED_END.fullmatch(shown)
    if end is None:
        return None
    move = re.escape(end["move"]) if end["move"] == "none" else r"(?!none(?: |$))\S+"
    rest = re.sub(r"(nodes|time) \d+", r"\1 \\d+", re.escape(end["rest"]).replace("\\ ", " "))
    return re.compile(f"analysisok id {re.escape(end['id'])} bestmove {move}{rest}")


def line_pattern(shown: str) -> re.Pattern[str]:
    """What an answer line ``shown`` in a transcript stands for."""
    if is_progress(shown):
        return progress_pattern(shown)
    analysed = analysed_pattern(shown)
    if analysed is not None:
        return analysed
    if shown.startswith("bestmove ") and shown != "bestmove none":
        return re.compile(r"bestmove (?!none$)\S+")  # a search's choice
    tokens = shown.split(" ")
    return re.compile(" ".join(".*" if t == "..." else re.escape(t) for t in tokens))


# --- reading and matching msgpack frames ---------------------------------------------------

ANY = ...
"""In a frame: any value; as the last element of a list, any further elements; as a key of a
map (the ``...`` entry), any further keys."""
FRAME_TOKEN = re.compile(
    r'\s*(?:(?P<string>"(?:[^"\\]|\\.)*")|(?P<number>-?\d+)|(?P<word>true|false|null)'
    r"|(?P<more>\.\.\.)|(?P<mark>[\[\]{}:,]))"
)


def parse_frame(text: str) -> Any:
    """A frame as written in a transcript: JSON, where ``...`` may stand for what is left out."""
    tokens: list[tuple[str, str]] = []
    at = 0
    while text[at:].strip():
        found = FRAME_TOKEN.match(text, at)
        assert found is not None, f"cannot read the frame {text!r} at {text[at:]!r}"
        kind = found.lastgroup
        assert kind is not None
        tokens.append((kind, found.group(kind)))
        at = found.end()
    value, rest = _value(tokens)
    assert not rest, f"trailing text in the frame {text!r}"
    return value


def _value(tokens: list[tuple[str, str]]) -> tuple[Any, list[tuple[str, str]]]:
    (kind, text), rest = tokens[0], tokens[1:]
    if kind == "string":
        return json.loads(text), rest
    if kind == "number":
        return int(text), rest
    if kind == "word":
        return {"true": True, "false": False, "null": None}[text], rest
    if kind == "more":
        return ANY, rest
    if text == "[":
        items: list[Any] = []
        while rest[0] != ("mark", "]"):
            item, rest = _value(rest)
            items.append(item)
            if rest[0] == ("mark", ","):
                rest = rest[1:]
        return items, rest[1:]
    if text == "{":
        entries: dict[Any, Any] = {}
        while rest[0] != ("mark", "}"):
            if rest[0][0] == "more":
                entries[ANY] = ANY
                rest = rest[1:]
            else:
                key, rest = _value(rest)
                assert rest[0] == ("mark", ":"), f"a map key without a value: {key!r}"
                entries[key], rest = _value(rest[1:])
            if rest[0] == ("mark", ","):
                rest = rest[1:]
        return entries, rest[1:]
    raise AssertionError(f"unexpected {text!r} in a frame")


def matches(shown: Any, actual: Any, *, search: bool = False) -> bool:
    """Whether the frame value ``actual`` is what ``shown`` stands for; in a map of search
    figures (``search``) the values depend on the search and only their kinds must agree."""
    if shown is ANY:
        return True
    if isinstance(shown, dict):
        return isinstance(actual, dict) and _matches_map(shown, actual, search=search)
    if isinstance(shown, list):
        return isinstance(actual, list) and _matches_list(shown, actual)
    return type(shown) is type(actual) and shown == actual


def _matches_map(shown: dict[Any, Any], actual: dict[Any, Any], *, search: bool) -> bool:
    """A shown map against a frame's: the same keys (or more, after ``...``), each value
    matching (or, for search figures, of the same kind)."""
    if ANY not in shown and set(shown) != set(actual):
        return False
    for key, value in shown.items():
        if key is ANY:
            continue
        if key not in actual:
            return False
        if search and not _same_kind(key, value, actual[key]):
            return False
        if not search and not matches(value, actual[key]):
            return False
    return True


def _matches_list(shown: list[Any], actual: list[Any]) -> bool:
    """A shown list against a frame's: item by item, with a trailing ``...`` standing for any
    further items."""
    if shown and shown[-1] is ANY:
        head = shown[:-1]
        return len(actual) >= len(head) and all(map(matches, head, actual))
    return len(shown) == len(actual) and all(map(matches, shown, actual))


def _same_kind(key: str, shown: Any, actual: Any) -> bool:
    if key in PROGRESS_FIELDS:
        return type(actual) is int
    if key == "score":
        if not isinstance(actual, dict):
            return False
        kinds = set(actual) - {"bound"}
        return (
            len(kinds) == 1 and kinds <= {"cp", "win", "loss"} and type(actual[min(kinds)]) is int
        )
    if key == "lines":  # an analysed position's lines: each of the kind shown
        return (
            isinstance(shown, list)
            and isinstance(actual, list)
            and len(shown) == len(actual)
            and all(matches(a, b, search=True) for a, b in zip(shown, actual, strict=True))
        )
    if key in ("pv", "move"):  # the search's choice; a move of nil stays nil
        if shown is None or actual is None:
            return shown is actual
        if isinstance(shown, list):
            return isinstance(actual, list) and all(isinstance(x, str) for x in actual)
        return isinstance(actual, str)
    return matches(shown, actual)


def is_info(frame: Any) -> bool:
    return isinstance(frame, list) and len(frame) == 3 and frame[:2] == [2, "info"]


def is_analysis(frame: Any) -> bool:
    return isinstance(frame, list) and len(frame) == 3 and frame[:2] == [2, "analysis"]


# --- replaying -----------------------------------------------------------------------------


class TranscriptError(AssertionError):
    """The server's answers differ from a transcript's (the message says where and how)."""


class TextReplay:
    """Replays a text transcript over ``stream``: answer lines in order, progress lines
    anywhere between their search's ``go`` and its ``bestmove``."""

    def __init__(self, stream: trio.SocketStream, where: str) -> None:
        self.stream = stream
        self.where = where
        self.buffer = b""
        self.lines: list[str] = []
        self.used = 0
        """Answer lines (not progress) before this index are matched."""
        self.searches = 0
        """Searches started whose ``bestmove`` has not come yet."""
        self.started_at: list[int] = []
        """For each ``go`` sent, how many lines had come by then."""
        self.eof = False

    def fail(self, step: Step | None, message: str) -> TranscriptError:
        place = f"line {step.line}" if step is not None else "at the end"
        return TranscriptError(f"{self.where}, {place}: {message}")

    async def pull(self, step: Step | None) -> None:
        """Read one more line (the test fails after TIMEOUT or at the end of the stream)."""
        with trio.move_on_after(TIMEOUT) as scope:
            while b"\n" not in self.buffer:
                try:
                    data = await self.stream.receive_some(65536)
                except trio.BrokenResourceError:
                    data = b""
                if not data:
                    self.eof = True
                    raise self.fail(step, f"the connection closed; unread: {self.buffer!r}")
                self.buffer += data
        if scope.cancelled_caught:
            raise self.fail(step, f"no answer within {TIMEOUT:.0f} s (after {self.lines[-3:]})")
        raw, _, self.buffer = self.buffer.partition(b"\n")
        line = raw.decode()
        if is_progress(line):
            if self.searches <= 0:
                raise self.fail(step, f"progress while no search runs: {line!r}")
            if not PROGRESS.fullmatch(line):
                raise self.fail(step, f"a progress line not of the shape of §4.1: {line!r}")
        elif line.startswith("bestmove"):
            self.searches -= 1
        self.lines.append(line)

    async def send(self, step: Step) -> None:
        if step.text.split(" ")[0] == "go":
            self.searches += 1
            self.started_at.append(len(self.lines))
        await self.stream.send_all(step.text.encode() + b"\n")

    async def expect(self, step: Step, skipping: bool) -> None:
        if is_progress(step.text):
            await self._expect_progress(step)
            return
        pattern = line_pattern(step.text)
        while True:
            while not any(not is_progress(x) for x in self.lines[self.used :]):
                await self.pull(step)
            index = next(
                i for i in range(self.used, len(self.lines)) if not is_progress(self.lines[i])
            )
            self.used = index + 1
            if pattern.fullmatch(self.lines[index]):
                return
            if not skipping:
                raise self.fail(step, f"expected {step.text!r}, got {self.lines[index]!r}")

    async def _expect_progress(self, step: Step) -> None:
        if not self.started_at:
            raise self.fail(step, "progress shown before any go")
        pattern = progress_pattern(step.text)
        start = self.started_at[-1]
        while True:
            since = self.lines[start:]
            if any(is_progress(x) and pattern.fullmatch(x) for x in since):
                return
            if any(x.startswith("bestmove") for x in since):
                raise self.fail(step, f"no progress like {step.text!r} before {since}")
            await self.pull(step)

    async def finish(self, closes: bool, skipping: bool) -> None:
        """Check the server sends nothing the transcript does not show: up to the end of the
        connection if it closes, else up to the answer of one more ``isready``."""
        if closes:
            while not self.eof:
                try:
                    await self.pull(None)
                except TranscriptError:
                    if not self.eof:
                        raise
        else:
            before = self.lines.count("readyok")
            await self.stream.send_all(b"isready\n")
            while self.lines.count("readyok") == before:
                await self.pull(None)
        rest = [x for x in self.lines[self.used :] if not is_progress(x)]
        if not closes:
            rest.pop()  # the readyok of the isready above, the last line to come
        if rest and not skipping:
            raise self.fail(None, f"lines the transcript does not show: {rest}")


class MsgpackReplay:
    """Replays a msgpack transcript: responses matched by request id (they may come in any
    order), other notifications wherever they come, progress while its search runs."""

    def __init__(self, stream: trio.SocketStream, where: str) -> None:
        self.stream = stream
        self.where = where
        self.unpacker = msgpack.Unpacker(raw=False)
        self.frames: list[Any] = []
        self.used: set[int] = set()
        self.searches: set[int] = set()
        """Request ids of the searches whose response has not come yet."""
        self.eof = False

    def fail(self, step: Step | None, message: str) -> TranscriptError:
        place = f"line {step.line}" if step is not None else "at the end"
        return TranscriptError(f"{self.where}, {place}: {message}")

    async def pull(self, step: Step | None) -> None:
        count = len(self.frames)
        with trio.move_on_after(TIMEOUT) as scope:
            while len(self.frames) == count:
                try:
                    data = await self.stream.receive_some(65536)
                except trio.BrokenResourceError:
                    data = b""
                if not data:
                    self.eof = True
                    raise self.fail(step, "the connection closed")
                self.unpacker.feed(data)
                for frame in self.unpacker:
                    self._note(step, frame)
        if scope.cancelled_caught:
            raise self.fail(step, f"no answer within {TIMEOUT:.0f} s (after {self.frames[-3:]})")

    def _note(self, step: Step | None, frame: Any) -> None:
        if is_info(frame):
            search = frame[2][0].get("search") if frame[2] else None
            if search not in self.searches:
                raise self.fail(step, f"progress of no running search: {frame}")
        elif isinstance(frame, list) and frame[:1] == [1]:
            self.searches.discard(frame[1])
        self.frames.append(frame)

    async def send(self, step: Step) -> None:
        frame = parse_frame(step.text)
        if isinstance(frame, list) and frame[:1] == [0] and frame[2] == "go":
            self.searches.add(frame[1])
        await self.stream.send_all(msgpack.packb(frame))

    async def expect(self, step: Step, skipping: bool) -> None:
        del skipping  # frames are found by id, not by order
        shown = parse_frame(step.text)
        while True:
            for index, frame in enumerate(self.frames):
                if index in self.used:
                    continue
                if not self._fits(shown, frame):
                    if shown[0] == 1 and isinstance(frame, list) and frame[:2] == shown[:2]:
                        raise self.fail(step, f"expected {step.text}, got {frame}")
                    continue
                if not is_info(shown):
                    self.used.add(index)
                return
            if is_info(shown):
                search = shown[2][0]["search"]
                if search not in self.searches:
                    raise self.fail(step, f"no progress like {step.text} before the answer")
            await self.pull(step)

    def _fits(self, shown: Any, frame: Any) -> bool:
        if is_info(shown) or is_analysis(shown):
            return frame[:2] == shown[:2] and matches(shown[2][0], frame[2][0], search=True)
        if not isinstance(frame, list) or frame[:1] != shown[:1]:
            return False
        if shown[0] == 1:  # a response: by id; a search's figures by their kinds
            if frame[1] != shown[1] or len(frame) != 4:
                return False
            is_search = isinstance(shown[3], dict) and "move" in shown[3]
            return matches(shown[2], frame[2]) and matches(shown[3], frame[3], search=is_search)
        return matches(shown, frame)

    async def finish(self, closes: bool, skipping: bool) -> None:
        del skipping
        if closes:
            while not self.eof:
                try:
                    await self.pull(None)
                except TranscriptError:
                    if not self.eof:
                        raise
        else:
            await self.stream.send_all(msgpack.packb([0, BARRIER, "ping", [{"token": 1}]]))
            while not any(f[:2] == [1, BARRIER] for f in self.frames if isinstance(f, list)):
                await self.pull(None)
        rest = [
            f
            for i, f in enumerate(self.frames)
            if i not in self.used and not is_info(f) and f[:2] != [1, BARRIER]
        ]
        if rest:
            raise self.fail(None, f"frames the transcript does not show: {rest}")


def closes_at_end(transcript: Transcript) -> bool:
    """Whether the server ends the connection after the transcript's last line: a quit was
    sent last, or the last answer is an error that closes."""
    sent = [s for s in transcript.steps if s.kind == "send"][-1].text
    if transcript.framing == "text":
        return sent == "quit"
    frame = parse_frame(sent)
    last = [s for s in transcript.steps if s.kind == "expect"][-1].text
    answer = parse_frame(last)
    is_quit = isinstance(frame, list) and "quit" in frame[:3]
    is_fatal = answer[:2] == [2, "error"] and answer[2][0].get("code") in CLOSING
    refused = answer[0] == 1 and isinstance(answer[2], list) and answer[2][0] in CLOSING
    return is_quit or is_fatal or refused


DOC_TOKEN = "2L-V8xUMESwZth4fdidPtrsAk0e5U77irsyyQi0k8dw"
"""alice's token in the transcripts of a server with tokens."""


def make_server(tokens: Path | None = None) -> Server:
    """The server ``enginesrv serve`` starts by default; with ``tokens`` (a folder), as
    ``--tokens`` starts it, its file holding alice with the transcripts' token."""
    limits = Limits(peer_searches=max(1, WORKERS // 2), hash_mb=HASH_BUDGET)
    keeper = None
    if tokens is not None:
        file = tokens / "tokens"
        file.write_text(f"alice {digest_of(DOC_TOKEN)} 2026-12-05T00:00:00Z\n")
        keeper = Keeper(TokenFile(file))
    config = SessionConfig(
        default_game=None,
        default_bot="alphabeta",
        limits=limits.announced(),
        hash_limit=HASH_BUDGET // WORKERS,
        hash_budget=HASH_BUDGET,
        auth=None if keeper is None else "token",
    )
    return Server(config, ThreadRunner(), limits, keeper=keeper)


def with_tokens(transcript: Transcript) -> bool:
    """Whether a transcript shows a server with tokens (it presents one)."""
    return any(step.kind == "send" and "auth" in step.text for step in transcript.steps)


async def replay(transcript: Transcript, folder: Path | None = None) -> None:
    """Replay ``transcript`` on a connection of its own to a fresh server (with tokens, kept
    in ``folder``, when the transcript presents one)."""
    failure: TranscriptError | None = None
    server = make_server(folder if with_tokens(transcript) else None)
    async with serving(server) as port:
        stream = await open_stream(port)
        replayer: TextReplay | MsgpackReplay
        if transcript.framing == "text":
            replayer = TextReplay(stream, transcript.where)
        else:
            replayer = MsgpackReplay(stream, transcript.where)
        skipping = False
        try:
            for step in transcript.steps:
                if step.kind == "skip":
                    skipping = True
                elif step.kind == "send":
                    await replayer.send(step)
                else:
                    await replayer.expect(step, skipping)
                    skipping = False
            await replayer.finish(closes_at_end(transcript), skipping)
        except TranscriptError as exc:
            failure = exc  # raised below, outside the server's nursery
    if failure is not None:
        raise failure


DOC_TRANSCRIPTS = doc_transcripts()
GAME_PAGES = [ROOT / "docs" / f"{name}.md" for name in ("yinsh", "yinyang", "yohoho", "yoxii")]
PAGE_TRANSCRIPTS = [t for page in GAME_PAGES for t in doc_transcripts(page)]


@pytest.mark.parametrize(
    "transcript", DOC_TRANSCRIPTS, ids=[t.title.split(" ")[0] for t in DOC_TRANSCRIPTS]
)
@trio_test
async def test_a_transcript_of_the_protocol_doc_replays(
    transcript: Transcript, tmp_path: Path
) -> None:
    if transcript.not_replayed is not None:
        pytest.skip(f"{transcript.where}: not replayed: {transcript.not_replayed}")
    await replay(transcript, tmp_path)


@pytest.mark.parametrize(
    "transcript", PAGE_TRANSCRIPTS, ids=[t.path.stem for t in PAGE_TRANSCRIPTS]
)
@trio_test
async def test_the_session_of_a_game_page_replays(transcript: Transcript) -> None:
    """The example sessions of the notation pages (docs/GAME.md) read as §10 says."""
    assert transcript.not_replayed is None
    await replay(transcript)


@trio_test
async def test_the_example_ugi_session_replays_with_a_real_search() -> None:
    transcript = session_transcript()
    shown = [s.text for s in transcript.steps if s.kind == "expect"]
    assert any(is_progress(x) for x in shown), "the session shows no progress of its search"
    assert any(x.startswith("bestmove ") and x != "bestmove none" for x in shown)
    await replay(transcript)


def test_the_doc_has_its_transcripts_in_both_framings() -> None:
    titles = [t.title for t in DOC_TRANSCRIPTS]
    assert len(DOC_TRANSCRIPTS) >= 6, titles
    assert {t.framing for t in DOC_TRANSCRIPTS} == {"text", "msgpack"}
    assert all(t.not_replayed is None for t in DOC_TRANSCRIPTS), "replay them all"


def test_the_matching_rules_can_fail() -> None:
    """The wildcards stand for what they say and no more."""
    assert line_pattern("response a b ...").fullmatch("response a b c d")
    assert not line_pattern("response a b ...").fullmatch("response a c d")
    assert line_pattern("response a ... z").fullmatch("response a b c z")
    assert not line_pattern("bestmove e5").fullmatch("bestmove none")
    assert not line_pattern("bestmove none").fullmatch("bestmove e5")
    shown = "info depth 1 seldepth 1 score cp 12 nodes 52 nps 26000 time 2 hashfull 0 pv c3"
    assert progress_pattern(shown).fullmatch(
        "info depth 7 seldepth 9 score win 3 nodes 1 nps 0 time 0 hashfull 4 pv a1 b2 c3"
    )
    assert not progress_pattern(shown).fullmatch("info depth 1 score cp 1 pv c3")
    frame = parse_frame('[1, 4, null, {"move": "e5", "depth": 2, "pv": ["e5"], ...}]')
    assert matches(frame[3], {"move": "f6", "depth": 9, "pv": ["f6", "g7"], "x": 1}, search=True)
    assert not matches(frame[3], {"move": None, "depth": 9, "pv": []}, search=True)
    assert not matches(parse_frame('{"a": 1}'), {"a": 1, "b": 2})
    assert matches(parse_frame("[1, [...], ...]"), [1, [2, 3], 4, 5])


# --- the cutegames recipe ------------------------------------------------------------------


def test_the_cutegames_recipe_holds_together() -> None:
    """docs/cutegames.md: the engine is started with its game, the settings ask whose turn it
    is, every option sent is one the engine has (as a string), none sets the game, and every
    opening is one cutegames can send."""
    text = (ROOT / "docs" / "cutegames.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(\w*)\n(.*?)```", text, re.S)
    settings = json.loads(next(body for lang, body in blocks if lang == "json"))
    script = next(body for lang, body in blocks if lang == "sh" and "exec " in body)
    command = shlex.split(script.split("exec ", 1)[1].split("2>")[0])
    assert command[1:3] == ["engine", "--game"], command
    game = games.load(command[3])
    assert settings["game"] == "generic"
    assert settings["protocol"]["askturn"] is True
    assert [settings["pgn"]["colour1"], settings["pgn"]["colour2"]] == list(game.colours)
    known = {line.split(" ")[2].lower() for line in handshake_lines() if line.startswith("option")}
    sent = [settings["options"], *(e.get("options", {}) for e in settings["engines"])]
    for options in sent:
        for name, value in options.items():
            assert name.lower() in known - {"game"}, name
            assert isinstance(value, str), (name, value)
    for engine in settings["engines"]:
        assert engine["protocol"] == "UGI"
        assert engine["path"].endswith(name_of(script)), engine["path"]
    openings = next(
        b for _, b in blocks if b.startswith("#") and name_of(b) == settings["openings"]["path"]
    )
    for line in openings.splitlines()[1:]:
        assert line == "startpos" or game.state_from_string(line).to_string() == line, line
    assert re.search(r"^timeout \d+ cutegames --settings \S+\.json$", text, re.M)


def name_of(body: str) -> str:
    """The file name a block of the docs gives in its first comment (``# NAME: ...``)."""
    found = re.search(r"^# (\S+?):?(?: |$)", body, re.M)
    assert found is not None, body
    return found.group(1)


def handshake_lines() -> list[str]:
    """The server's answer to ``ugi``."""

    async def ask() -> list[str]:
        async with serving(make_server()) as port:
            peer = TextPeer(await open_stream(port))
            await peer.send("ugi")
            return await peer.until("ugiok")

    return trio.run(ask)


# --- where the examples keep their events --------------------------------------------------


def test_the_examples_write_their_events_under_an_ignored_folder() -> None:
    """Every event the README and docs/tournaments.md write (``--out``, ``-o``, ``out =``) goes
    under a folder that .gitignore lists, so that trying them leaves the checkout clean."""
    ignored = {
        line.strip().rstrip("/")
        for line in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
        if line.strip().endswith("/")
    }
    paths: list[str] = []
    for name in ("README.md", "docs/tournaments.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        for block in re.findall(r"```(?:sh|toml)\n(.*?)```", text, re.S):
            found = re.finditer(r'(?:--out|-o) (\S+)|^out = "([^"]+)"', block, re.M)
            paths += [m.group(1) or m.group(2) for m in found]
    assert len(paths) >= 10, paths
    for path in paths:
        assert path == "-" or path.split("/")[0] in ignored, path


# --- the example session program -----------------------------------------------------------


def test_the_example_session_program_waits_for_the_bestmove() -> None:
    """examples/ugi_session.py sends the session to a stdio engine, and the search it shows
    is a real one: progress, then the best move, before the quit."""
    proc = subprocess.run(
        [sys.executable, "examples/ugi_session.py", str(SESSION)],
        capture_output=True, text=True, timeout=120, check=False, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "> go movetime 1000" in lines
    after = lines[lines.index("> go movetime 1000") + 1 :]
    assert after[0].startswith("< info depth 1 "), after[:3]
    best = next(i for i, x in enumerate(after) if x.startswith("< bestmove "))
    assert after[best] != "< bestmove none"
    assert all(x.startswith("< info depth ") for x in after[:best])
    assert after.index("> quit") > best
