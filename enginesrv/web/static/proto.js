// The protocol over a WebSocket, in the text framing (docs/protocol.md, docs/web.md).
//
// Each request goes out in one message together with a barrier, `ping N`; the reply lines that
// come before `pong N` are its answer (the server answers in order). A search's `info` and
// `bestmove` lines come when they come, so they go to the running search instead.

const KEEPALIVE_MS = 30000;

/** The close code of a socket whose token the server refused (docs/web.md, "Signing in"). */
export const CLOSE_AUTH = 4401;

export class ProtocolError extends Error {}

/**
 * A server that takes tokens (docs/web.md, "Signing in"): ``token()`` resolves with the word
 * every socket of the page sends as its first message, `auth WORD`, once the person has given
 * one; ``refused(reason, word)`` is told of a socket the server closed for its token ``word``.
 * Both stay null on a server without tokens, whose sockets send nothing first. The word goes
 * in a message on the socket, never in its address, which proxies and logs keep.
 */
export const signIn = { token: null, refused: null };

/** The word a new socket is to send first, once there is one; null without tokens. */
export async function credential() {
  return signIn.token ? signIn.token() : null;
}

/** Sends ``word``, if any, as the first message of ``socket``, just opened. */
export function sendCredential(socket, word) {
  if (word !== null) socket.send(`auth ${word}`);
}

/** Tells the page a socket that sent ``word`` was closed for it (``event``: its close). */
export function closedFor(event, word) {
  if (event.code === CLOSE_AUTH && word !== null && signIn.refused) {
    signIn.refused(event.reason || `the server refused the token (code ${event.code})`, word);
  }
}

const encoder = new TextEncoder();

/** One protocol session on a WebSocket. */
export class Session {
  constructor(url) {
    this.url = url;
    this.socket = null;
    this.nextToken = 1;
    this.waiting = []; // [{token, lines, resolve}] in the order sent
    this.search = null; // {onInfo, resolve} of the running search
    this.analyses = new Map(); // id -> the answer of an analysed position still to come
    this.closed = false;
    this.closeReason = "";
    this.closeCode = null; // the close code, once closed (CLOSE_AUTH: its token was refused)
    this.onclose = null;
    this.ontable = null; // called with the values of each `table` notification (a game between two pages)
    this.keepalive = null;
  }

  /** The server's `line` limit in bytes (its handshake's `limit line`), for every session of
   * the page; null until a handshake has told it. */
  static lineLimit = null;

  /** Opens the socket, on a server with tokens once the person has signed in, and sends the
   * token first; resolves once it is open, rejects with the server's reason. */
  async open() {
    const word = await credential();
    if (this.closed) throw new ProtocolError(this.closeReason);
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url);
      this.socket = socket;
      let opened = false;
      socket.onopen = () => {
        opened = true;
        sendCredential(socket, word);
        this.keepalive = setInterval(() => this.ping(), KEEPALIVE_MS);
        resolve(this);
      };
      socket.onmessage = (event) => this.received(String(event.data));
      socket.onclose = (event) => {
        this.closed = true;
        this.closeCode = event.code;
        this.closeReason = event.reason || `the connection closed (code ${event.code})`;
        clearInterval(this.keepalive);
        const error = new ProtocolError(this.closeReason);
        for (const wait of this.waiting) wait.reject(error);
        this.waiting = [];
        if (this.search) this.search.reject(error);
        this.search = null;
        for (const answer of this.analyses.values()) answer.reject(error);
        this.analyses.clear();
        closedFor(event, word);
        if (!opened) reject(error);
        else if (this.onclose) this.onclose(this.closeReason);
      };
    });
  }

  /** Whether the server closed the socket for its token. */
  get refused() {
    return this.closeCode === CLOSE_AUTH;
  }

  close() {
    if (!this.socket) {
      // closed while it waits for the person to sign in: it is never opened
      this.closed = true;
      this.closeReason ||= "closed by the page";
    } else if (!this.closed) {
      this.socket.close(1000, "closed by the page");
    }
  }

  received(text) {
    for (const line of text.split("\n")) {
      if (line) this.line(line);
    }
  }

  line(line) {
    if (line.startsWith("table ")) {
      if (this.ontable) this.ontable(line.slice(6));
      return;
    }
    if (line.startsWith("pong ")) {
      const token = Number(line.slice(5));
      const index = this.waiting.findIndex((wait) => wait.token === token);
      if (index >= 0) {
        const [wait] = this.waiting.splice(index, 1);
        wait.resolve(wait.lines);
        return;
      }
    }
    const analysed = /^analysis(info|ok) id (\S+)/.exec(line);
    if (analysed && this.analyses.has(analysed[2])) {
      const answer = this.analyses.get(analysed[2]);
      if (analysed[1] === "info") {
        answer.info.push(line);
      } else {
        this.analyses.delete(analysed[2]);
        answer.resolve({ info: answer.info, ok: line });
      }
      return;
    }
    if (this.search && (line.startsWith("info ") || line.startsWith("bestmove"))) {
      if (line.startsWith("bestmove")) {
        const search = this.search;
        this.search = null;
        search.resolve(line);
      } else {
        this.search.onInfo(line);
      }
      return;
    }
    if (this.waiting.length) this.waiting[0].lines.push(line);
  }

  send(text) {
    if (this.closed) throw new ProtocolError(this.closeReason || "the connection is closed");
    // a line over the server's limit would end the connection (error 102): it is not sent
    const limit = Session.lineLimit;
    for (const line of limit ? text.split("\n") : []) {
      const size = line.length > limit / 3 ? encoder.encode(line).length : 0;
      if (size > limit) {
        throw new ProtocolError(`a request of ${size.toLocaleString("en")} bytes is over the server's limit of ${limit.toLocaleString("en")} bytes a line, and was not sent`);
      }
    }
    this.socket.send(text);
  }

  /** Sends commands (one or several lines) and resolves with the lines they were answered. */
  request(commands) {
    const token = this.nextToken++;
    const lines = Array.isArray(commands) ? commands : [commands];
    return new Promise((resolve, reject) => {
      this.waiting.push({ token, lines: [], resolve, reject });
      try {
        this.send([...lines, `ping ${token}`].join("\n"));
      } catch (error) {
        this.waiting.pop();
        reject(error);
      }
    });
  }

  ping() {
    if (!this.closed) this.request("isready").catch(() => {});
  }

  /** The value of `response` to one command; throws with the error line otherwise. */
  async response(command) {
    const lines = await this.request(command);
    const found = lines.find((line) => line === "response" || line.startsWith("response "));
    if (found !== undefined) return found.slice(9);
    throw new ProtocolError(errorText(lines) || `${command}: no answer`);
  }

  /** Sends a command that answers nothing on success; throws with the error if there is one. */
  async command(command) {
    const problem = errorText(await this.request(command));
    if (problem) throw new ProtocolError(problem);
  }

  /**
   * Starts a search (`go ARGS`) and resolves with its `bestmove` line; `onInfo` gets each
   * `info` line. The errors the `go` itself got (a refusal) reject it.
   */
  go(args, onInfo = () => {}) {
    if (this.search) return Promise.reject(new ProtocolError("a search is already running"));
    return new Promise((resolve, reject) => {
      // settled once both the barrier after the go and its bestmove (if any) have come
      const state = { best: null, problem: null, answered: false };
      const settle = () => {
        if (!state.answered) return;
        if (state.problem && (state.best === null || state.best === "bestmove none")) {
          if (this.search === search) this.search = null;
          reject(new ProtocolError(state.problem));
        } else if (state.best !== null) {
          resolve(state.best);
        }
      };
      const search = {
        onInfo,
        resolve: (best) => {
          state.best = best;
          settle();
        },
        reject,
      };
      this.search = search;
      this.request(args ? `go ${args}` : "go").then((lines) => {
        state.answered = true;
        state.problem = errorText(lines) || null;
        settle();
      }, reject);
    });
  }

  /**
   * Analyses positions in one `analyse` request (each `{id, position}`, with `limits` such as
   * `movetime 100`): resolves with a Map of each id to `{info: [analysisinfo lines], ok}` once
   * every position is answered; rejects with the request's error, refused whole.
   */
  async analyse(positions, limits) {
    const answers = positions.map(({ id }) => new Promise((resolve, reject) => {
      this.analyses.set(id, { info: [], resolve, reject });
    }));
    for (const answer of answers) answer.catch(() => {}); // awaited below, unless refused
    const request = `analyse ${positions.map(({ id, position }) => `id ${id} ${limits} fen ${position}`).join(" ")}`;
    const problem = errorText(await this.request(request));
    if (problem) {
      for (const { id } of positions) this.analyses.delete(id);
      throw new ProtocolError(problem);
    }
    const done = await Promise.all(answers);
    return new Map(positions.map(({ id }, i) => [id, done[i]]));
  }

  stop() {
    if (!this.closed) this.send("stop");
  }
}

/** The text of the first error or invalidmove line, or "". */
export function errorText(lines) {
  for (const line of lines) {
    if (line.startsWith("error ")) return line.split(" ").slice(3).join(" ") || line;
    if (line.startsWith("invalidmove ")) {
      const [, move, ...reason] = line.split(" ");
      return `${move}: ${reason.join(" ")}`;
    }
  }
  return "";
}

/** `key=value key=value` as an object (query outcome, query clock). */
export function pairs(text) {
  const out = {};
  for (const part of text.split(" ")) {
    const at = part.indexOf("=");
    if (at > 0) out[part.slice(0, at)] = part.slice(at + 1);
  }
  return out;
}

/** The handshake's games, bots and options: {games: [{name, colours, start}], bots: [...]} */
export async function handshake(session) {
  const lines = await session.request("ugi");
  const games = [];
  const bots = [];
  const options = [];
  const limits = {};
  for (const line of lines) {
    const words = line.split(" ");
    if (words[0] === "game") {
      const at = words.indexOf("start");
      games.push({
        name: words[1],
        colours: [words[3], words[4]],
        start: words.slice(at + 1).join(" "),
      });
    } else if (words[0] === "bot") {
      bots.push({ name: words[1], games: words.slice(3) });
    } else if (words[0] === "analysis") {
      // analysis <bot> <feature> ...: what the bot's searches offer beyond one line
      const bot = bots.find((b) => b.name === words[1]);
      if (bot) bot.analysis = words.slice(2);
    } else if (words[0] === "level") {
      // level <n> name <name> bot <bot> [game <game> elo <elo> interval <i>]
      const field = (key) => (words.indexOf(key) > 0 ? words[words.indexOf(key) + 1] : null);
      const bot = bots.find((b) => b.name === field("bot"));
      if (bot) {
        bot.levels ||= [];
        const elo = field("elo");
        bot.levels.push({
          level: Number(words[1]),
          name: field("name"),
          game: field("game"),
          elo: elo === null ? null : Number(elo),
          interval: elo === null ? null : Number(field("interval")),
        });
      }
    } else if (words[0] === "expectation" && words.length === 6) {
      // expectation <bot> game <game> scale <n>: the bot's `cp v` is 1 / (1 + exp(-v / n))
      const bot = bots.find((b) => b.name === words[1]);
      if (bot) (bot.expectations ||= {})[words[3]] = Number(words[5]);
    } else if (words[0] === "option") {
      options.push(line);
    } else if (words[0] === "limit" && words.length === 3) {
      limits[words[1]] = Number(words[2]);
    }
  }
  if (limits.line > 0) Session.lineLimit = limits.line;
  return { games, bots, options, limits };
}
