// Yin Yang's law editor: the form a player writes their four laws in at setup (the decision
// too large to list; the board module's `compose`).

import { el, clear, label, html } from "./board.js";
import { DOM_W, DOM_H, paint, drawDomino } from "./yinyang_draw.js";
import {
  CELL_NAMES, CELL_WORDS, COLOUR_WORD, GLYPH, LAW_RE, absCause, allLaws, lawKind, whyInvalid, windowPatterns,
} from "./yinyang_model.js";

/** Whether a law (owner's view) matches some window of the board now. */
const fitsBoard = (law, owner, board) => windowPatterns(board).includes(absCause(law, owner));

/** An effect of `kind` for `cause`, keeping what it can of the previous effect `prev`. */
function makeEffect(kind, cause, prev, own) {
  if (kind === "adaptation") return null;
  const effect = [...cause];
  const before = prev || [];
  if (kind === "destruction") {
    const pieces = [0, 1, 2, 3].filter((i) => cause[i] !== ".");
    const i = pieces.find((j) => before[j] === ".") ?? pieces[0];
    if (i !== undefined) effect[i] = ".";
  } else {
    const empties = [0, 1, 2, 3].filter((i) => cause[i] === ".");
    const kept = empties.filter((i) => before[i] === "b" || before[i] === "w");
    const colour = kept.length ? before[kept[0]] : own;
    const pick = [...kept, ...empties.filter((i) => !kept.includes(i))].slice(0, 2);
    if (pick.length === 2) for (const i of pick) effect[i] = colour;
  }
  return effect;
}

/** The laws last edited by each side, kept when the page builds the editor again. */
const drafts = [null, null];

/**
 * The setup form: four laws, each a cause grid, an effect grid (or * for an adaptation), a kind
 * and its text. The grids are laid out as the board is drawn (turned 180 degrees when the writer
 * is White and the board is not flipped, or Black and it is), while the controls' names and the
 * token follow the notation: "L1.cause.TL" is always the law's first cell as its owner reads it.
 */
function compose(model, container, description, play) {
  const owner = model.side;
  const own = owner ? "w" : "b";
  const turned = (owner === 1) !== Boolean(model.drawnFlipped);
  const names = ["Black", "White"];
  const slots = [];
  clear(container);
  const root = html("div", { class: "yy-editor" });
  root.append(html("p", { class: "yy-editor-intro" },
    `${names[owner]}, write your four laws. The cells are laid out as the board is drawn above. ` +
    `A law either removes one piece (destruction), adds two pieces of one colour on empty cells ` +
    `(regeneration), or rewrites a law (adaptation, effect *).`));

  const random = () => {
    const laws = allLaws();
    const pick = (list) => list[Math.floor(Math.random() * list.length)];
    const out = [0, 1, 2, 3].map(() => pick(laws));
    // One law at least fits the board as it is now, so the set can act on its first turn.
    if (!out.some((l) => fitsBoard(l, owner, model.board))) {
      const fit = laws.filter((l) => fitsBoard(l, owner, model.board));
      if (fit.length) out[Math.floor(Math.random() * 4)] = pick(fit);
    }
    return out;
  };

  const status = html("p", { class: "yy-editor-status", "data-status": "editor", role: "status" });
  const submit = html("button", { type: "button", "data-choice": "submit", class: "yy-submit" }, "write these laws");

  function refresh() {
    const texts = slots.map((s) => s.text());
    drafts[owner] = texts;
    const bad = slots.map((s, k) => [k, s.why()]).filter(([, why]) => why);
    root.dataset.token = bad.length ? "" : `laws:${texts.join(",")}`;
    if (bad.length) {
      status.textContent = `law ${bad[0][0] + 1} is not valid yet: ${bad[0][1]}`;
    } else if (!texts.some((t) => fitsBoard(t, owner, model.board))) {
      status.textContent = owner
        ? "note: none of these laws fits the board as it is now"
        : "note: none of these laws fits the full start board: Black would have no first action and lose";
    } else {
      status.textContent = "";
    }
  }

  const lawBoxes = html("div", { class: "yy-laws" });
  root.append(lawBoxes);
  for (let k = 0; k < 4; k++) {
    const id = `L${k + 1}`;
    const s = { cause: [".", ".", ".", "."], effect: null, kind: "adaptation", typed: null };
    s.text = () => s.typed ?? `${s.cause.join("")}>${s.effect ? s.effect.join("") : "*"}`;
    s.why = () => {
      const text = s.text();
      const why = whyInvalid(text);
      if (!why || s.typed !== null || s.free || !s.effect || s.effect.join("") !== s.cause.join("")) return why;
      // Edited by the grids and the effect equals the cause: say what the chosen kind needs.
      if (s.kind === "destruction") {
        return s.cause.includes("b") || s.cause.includes("w")
          ? "the effect changes nothing: choose the piece it removes (an effect cell)"
          : "a destruction needs a piece in the cause to remove";
      }
      return s.cause.filter((c) => c === ".").length >= 2
        ? "the effect changes nothing: choose the two empty cells it fills (effect cells)"
        : "a regeneration needs two empty cells in the cause";
    };
    slots.push(s);

    const box = html("fieldset", { class: "yy-law" }, html("legend", {}, `law ${k + 1}`));
    const preview = el("svg", { viewBox: `0 0 ${DOM_W + 4} ${DOM_H + 4}`, class: "yy-law-preview", "font-family": "sans-serif",
      style: `width:${DOM_W - 10}px;height:${DOM_H - 8}px`, "aria-hidden": "true" });
    const grid = (part) => {
      const g = html("div", { class: "yy-cells", role: "group", "aria-label": part });
      const buttons = CELL_NAMES.map((name, i) => {
        const b = html("button", { type: "button", class: "yy-cell", "data-choice": `${id}.${part}.${name}` });
        b.addEventListener("click", () => cycle(part, i));
        return b;
      });
      g.append(...(turned ? [...buttons].reverse() : buttons)); // reversed = turned 180 degrees
      return [g, buttons];
    };
    const [causeGrid, causeButtons] = grid("cause");
    const [effectGrid, effectButtons] = grid("effect");
    const kind = html("select", { "data-choice": `${id}.kind`, "aria-label": `law ${k + 1} kind` },
      ...["destruction", "regeneration", "adaptation"].map((v) => html("option", { value: v }, v)));
    const input = html("input", { type: "text", "data-choice": `${id}.text`, size: 11, spellcheck: "false",
      "aria-label": `law ${k + 1} as text` });
    const again = html("button", { type: "button", "data-choice": `${id}.random`, class: "yy-small" }, "random");
    const msg = html("p", { class: "yy-law-status", "data-status": id, role: "status" });

    function show() {
      const text = s.text();
      input.value = text;
      kind.value = s.kind;
      for (const [part, buttons, cells] of [["cause", causeButtons, s.cause], ["effect", effectButtons, s.effect]]) {
        buttons.forEach((b, i) => {
          const c = cells ? cells[i] : "*";
          b.textContent = GLYPH[c] || c;
          b.dataset.cell = c;
          b.disabled = !cells;
          b.setAttribute("aria-label", `law ${k + 1} ${part} ${CELL_WORDS[turned ? 3 - i : i]}: ${COLOUR_WORD[c] || "*"}`);
        });
      }
      effectGrid.classList.toggle("yy-adapt", !s.effect);
      const why = s.why();
      msg.textContent = why;
      box.classList.toggle("yy-invalid", Boolean(why));
      clear(preview);
      const entry = LAW_RE.test(text) ? { state: "-", text } : null;
      if (entry && !why) drawDomino(preview, 2, 2, k + 1, entry, turned, { b: paint("black"), w: paint("white") });
      else label(preview, (DOM_W + 4) / 2, (DOM_H + 4) / 2, "invalid", { "font-size": 12, fill: "#a33" });
      refresh();
    }

    function cycle(part, i) {
      s.typed = null;
      s.free = false;
      if (part === "cause") {
        const order = ".bw";
        s.cause[i] = order[(order.indexOf(s.cause[i]) + 1) % 3];
        s.effect = makeEffect(s.kind, s.cause, s.effect, own);
      } else if (s.effect) {
        // An effect cell offers what the rules allow: a piece may only go, an empty cell may fill.
        const options = s.cause[i] === "." ? [".", "b", "w"] : [s.cause[i], "."];
        s.effect[i] = options[(options.indexOf(s.effect[i]) + 1) % options.length];
        const found = lawKind(s.text());
        if (found) s.kind = found;
      }
      show();
    }

    s.set = (text, free = false) => {
      s.cause = text.slice(0, 4).split("");
      s.effect = text[5] === "*" ? null : text.slice(5).split("");
      s.kind = lawKind(text) || s.kind;
      s.typed = null;
      s.free = free; // typed as text: its reason is the text's own
      show();
    };
    kind.addEventListener("change", () => {
      s.typed = null;
      s.free = false;
      s.kind = kind.value;
      s.effect = makeEffect(s.kind, s.cause, s.effect, own);
      show();
    });
    input.addEventListener("change", () => {
      const text = input.value.trim().toLowerCase();
      if (LAW_RE.test(text)) s.set(text, true); // the grids show it, valid or not
      else {
        s.typed = text; // not even a law: shown with its reason until corrected
        show();
      }
    });
    again.addEventListener("click", () => s.set(random()[0]));

    box.append(
      html("div", { class: "yy-law-row" },
        html("div", { class: "yy-part" }, html("span", {}, "cause"), causeGrid), html("span", { class: "yy-arrow" }, "→"),
        html("div", { class: "yy-part" }, html("span", {}, "effect"), effectGrid), preview),
      html("div", { class: "yy-law-row" }, kind, input, again),
      msg,
    );
    lawBoxes.append(box);
  }

  const shuffle = html("button", { type: "button", "data-choice": "random" }, "random laws");
  shuffle.addEventListener("click", () => random().forEach((text, k) => slots[k].set(text)));
  submit.addEventListener("click", () => {
    refresh();
    if (root.dataset.token) play(root.dataset.token);
  });
  root.append(html("div", { class: "yy-editor-actions" }, shuffle, submit), status);
  if (description) root.append(html("details", {}, html("summary", {}, "notation"), html("p", {}, description)));
  container.append(root);
  const start = drafts[owner] && drafts[owner].every((t) => !whyInvalid(t)) ? drafts[owner] : random();
  start.forEach((text, k) => slots[k].set(text));
}

export { compose };
