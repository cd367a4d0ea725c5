// Signing in to a server that takes tokens (`enginesrv serve --tokens`; docs/web.md, "Signing
// in"). The person pastes the token the server's operator gave them (`enginesrv token add`
// prints it, NAME:TOKEN) into a form; the page keeps it in the tab's session storage and each
// socket it opens sends it as its first message (proto.js, `signIn`). It is never put in an
// address (the page's, a socket's, a link's), in the browser's lasting storage or in a cookie.
// A socket the server closes for its token makes the page forget it and ask again, saying why.

import { signIn } from "../proto.js";
import { $ } from "./state.js";

const KEY = "enginesrv-token";
const WORD = /^[^\s:]+:\S+$/; // NAME:TOKEN, as `enginesrv token add` prints it

const form = $("#signin");
const field = $("#signin-token");
const problem = $("#signin-problem");
const signOut = $("#sign-out");

let kept = null; // the token when the browser keeps no data for this site (the page's only)
let active = false; // whether the server takes tokens
let started = false; // whether the page is in use (a refusal then hides nothing of it)
const waiting = []; // the sockets to open once the person has signed in

function stored() {
  try {
    return sessionStorage.getItem(KEY) || kept;
  } catch {
    return kept;
  }
}

function store(word) {
  try {
    sessionStorage.setItem(KEY, word);
    kept = null;
  } catch {
    kept = word; // the browser keeps nothing for this site: this page holds it until a reload
  }
}

function forget() {
  kept = null;
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // nothing was kept there
  }
}

/** The page's sockets sign in: called once /config.json says the server takes tokens. */
export function requireSignIn() {
  signIn.token = token;
  signIn.refused = refused;
  active = true;
  showState();
}

/** The page is in use (its session is open, or its feed speaks): a later refusal shows the
 * form above it rather than in its place. */
export function pageStarted() {
  started = true;
  if (active) showState();
}

/** The word for a new socket; the form is shown, and the socket waits, while there is none. */
function token() {
  const word = stored();
  if (word) return Promise.resolve(word);
  ask("");
  return new Promise((resolve) => waiting.push(resolve));
}

/** A socket that sent ``word`` was refused for it: the token is forgotten (unless another has
 * been given since) and the form says why. */
function refused(reason, word) {
  if (stored() !== word) return;
  forget();
  ask(`Not signed in: ${reason}.`);
}

function ask(text) {
  const shown = !form.hidden;
  form.hidden = false;
  if (text || !shown) problem.textContent = text;
  showState();
  if (!shown || text) field.focus();
}

function showState() {
  const asking = !form.hidden;
  document.body.dataset.auth = asking ? (started ? "again" : "signin") : "in";
  signOut.hidden = asking;
}

form.addEventListener("submit", (event) => {
  event.preventDefault(); // the field has no name: even a form sent by the browser carries no token
  const word = field.value.trim();
  if (!WORD.test(word)) {
    problem.textContent = word
      ? "A token is one word, NAME:TOKEN, as `enginesrv token add` printed it."
      : "Paste the token you were given, NAME:TOKEN.";
    field.focus();
    return;
  }
  store(word);
  field.value = "";
  problem.textContent = "";
  form.hidden = true;
  showState();
  for (const resolve of waiting.splice(0)) resolve(word);
});

signOut.addEventListener("click", () => {
  forget();
  // the page's sockets close with it; the form greets whoever uses the tab next
  location.assign("/");
});
