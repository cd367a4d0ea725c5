// Shared helpers of the board modules, and the contract every board module keeps.
//
// A board module (games/<game>.js) default-exports an object:
//
//   names: string[]
//       the registry names it draws ("yinsh", "yinsh-blitz").
//   parse(position: string): Model
//       the position string (a full position or a player's view) as a plain object the other
//       functions take; throws Error(message) on a string it cannot read.
//   draw(svg: SVGSVGElement, model: Model, opts: {flipped: boolean, colours: [string, string]})
//       empties the svg and draws the board as the game looks. Every place a piece can stand
//       gets exactly one element with data-square="<its name in the game's notation>" and the
//       class "sq", drawn last (on top), filled transparent, so that it is the click target
//       and the page can mark it through CSS. An element with data-choice="<choice>" (a piece
//       in stock that is also a value to pick) acts as that choice's button when the choice is
//       a next step; the page marks it data-legal then: [data-legal="true"], [data-picked="true"],
//       [data-last="true"] (touched by a decision of the last turn) and [data-best="true"]
//       are set by the page after draw.
//       An element with data-place="<name>" is a place that is not a click target (a Yin Yang
//       law card): the page marks it [data-last="true"] as it marks squares, when `cells` or
//       `squares` name it.
//   steps(token: string, model: Model): Step[]
//       the clicks that make a legal move token, in order. A Step is {square: "e5"} (a click
//       on that data-square) or {choice: "<token or part>", label: "<button text>"} (a button
//       the page shows under the board with data-choice="<choice>"). No token's steps may be a
//       proper prefix of another legal token's steps, and two tokens never have the same
//       steps (add a final choice where needed).
//   hint(model: Model): string
//       what the side to act has to do now, for the status line ("move a ring", "remove a
//       row", "place a piece: pick its value").
//   squares(token: string, model: Model): string[]
//       the places a token played in model's position touched, to mark the last move and an
//       analysis' moves (may be []); the last one is where the move goes.
//   stepHint?(model: Model, picked: Step[]): string | null
//       the status line once some steps of a move are picked ("move the ring on e5: click
//       where it goes"), or null for the page's own ("e5 picked: click a marked place").
//   toAct(model: Model): 0 | 1 | null
//       the seat to act in the position (null: no one). The page groups the decisions of a
//       turn by it: a ply is made by the seat to act in the position before it.
//   cells(model: Model): {[square: string]: string}
//       what stands on each occupied place, as any string (equal strings: the same thing).
//       The page marks every place whose contents a turn changed, by comparing the positions
//       before and after it: pieces moved, placed, flipped or removed.
//   ending?(outcome: {winner, reason, ...scores}, names: [string, string]): string | null
//       the end of a game by the rules in words ("White wins: White's Admiral reached row 9
//       (1 point)"), or null for an ending it does not know (the page then says it).
//       outcome is `query outcome`'s pairs, as strings; names are the seats' colours.
//   hidden?: boolean
//       true for a game of hidden information: two people at one screen get a hand-over
//       screen between their turns.
//   compose?(model, container: HTMLElement, description: string, play: (token) => void)
//       only for a decision whose moves are too many to list (query moves answers
//       "count N <description>"): builds a form in container that ends by calling play(token).
//
// The page knows no rules: it gets the legal tokens from `query moves`, filters them by the
// steps clicked so far, and sends the one token left.

export const SVG_NS = "http://www.w3.org/2000/svg";

/** A new SVG element with its attributes (numbers are written as they are). */
export function el(tag, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(key, String(value));
  }
  if (parent) parent.appendChild(node);
  return node;
}

/** Removes every child of an element. */
export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

/** A text label (centred on x, y). */
export function label(parent, x, y, text, attrs = {}) {
  const node = el(
    "text",
    { x, y, "text-anchor": "middle", "dominant-baseline": "central", ...attrs },
    parent,
  );
  node.textContent = text;
  return node;
}

/** A new HTML element with its attributes (as strings) and children (text stays text). */
export function html(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(key, String(value));
  }
  node.append(...children);
  return node;
}
