// "How to play" for Yin Yang: plain text the page inserts with textContent.
// The diagrams are the start before the laws are written; Black's own view of turn 1 after the
// setups laws:bwbb>b.bb,..bb>bbbb,bwbw>*,bw.w>b..w and laws:wbww>w.ww,..ww>wwww,wbwb>*,.bb.>wbbw;
// and the view everyone shares after Black's first turn L1@a2.

export default {
  title: "How to play Yin Yang",
  summary:
    "Yin Yang is a two-player game on a 4×4 board in which each player also writes four secret laws that change the board when applied. Black wins with a black piece on d4 and White with a white piece on a1 at the end of a turn.",
  sections: [
    {
      heading: "The board and the pieces",
      paragraphs: [
        "The board has 16 squares, named a1 to d4 as Black sees them from the near side; White sits across the table. It starts full, with Black's 8 pieces in an L around a1 and White's 8 in an L around d4.",
        "Your goal is the corner your opponent starts in: d4 for Black, a1 for White. Both goal squares begin with an enemy piece on them.",
        "Beside the board is a reserve shared by both players, 8 black pieces and 10 white ones. Only laws that add pieces take from it, and it never fills up again.",
      ],
      diagram: {
        position: "bwww/bwww/bbbw/bbbw b setup none none 8 10 0",
        caption: "The full starting board: Black aims for d4 and White for a1.",
        marks: ["a1", "d4"],
      },
    },
    {
      heading: "Writing your laws",
      paragraphs: [
        "Before the first turn, each player writes four laws in secret, Black first and then White. A law has a cause, a 2×2 pattern in which each cell is a black piece, a white piece or empty, and an effect, what that block turns into.",
        "There are three kinds of law. A destruction removes one piece of the pattern, of either colour; a regeneration puts two new pieces of one colour, black or white, on two of its empty cells; an adaptation leaves the board alone but lets you rewrite one of your laws.",
        "Colours in a law are the real colours, whoever wrote it. You read your laws from your own side of the table, so White's laws lie on the board turned around compared with Black's.",
      ],
      diagram: {
        position: "bwww/bwww/bbbw/bbbw b start -bwbb>b.bb,-..bb>bbbb,-bwbw>*,-bw.w>b..w ?,?,?,? 8 10 1",
        caption: "Black's view of turn 1: its own four laws, White's four still secret, and its law 1 fitting the block a2, b2, a3, b3.",
        marks: ["a2", "b2", "a3", "b3"],
      },
    },
    {
      heading: "Your turn",
      paragraphs: [
        "On your turn you move a piece, apply a law, or do both, always moving first. You can never pass, and you can never apply a law and then move.",
        "A move takes one of your own pieces one square up, down, left or right onto an empty square; nothing is captured. After moving you may apply a law or simply end your turn.",
      ],
    },
    {
      heading: "Applying a law",
      paragraphs: [
        "You may apply one of your own laws on any 2×2 block of the board that matches its cause exactly, empty cells included. If it fits several blocks you pick one, and you can never use your opponent's laws.",
        "Laws stay secret until they are first applied. Applying a law reveals it to both players, and then its effect happens; it stays face up until it is rewritten.",
        "With an adaptation you may rewrite any one of your four laws, even the one you just used, into any new law, or keep them all as they are. A rewritten law is secret again.",
      ],
      diagram: {
        position: "bwww/b.ww/bbbw/bbbw w start +bwbb>b.bb,?,?,? ?,?,?,? 8 10 2",
        caption: "Black has applied law 1 on that block: the white piece on b3 is destroyed, and the law is now revealed to both players.",
        marks: ["b3"],
      },
    },
    {
      heading: "Conflicts and reserves",
      paragraphs: [
        "A law cannot be applied while any other revealed law, yours or your opponent's, has the same cause as it lies on the board. Effects do not matter, and secret laws never block.",
        "A regeneration needs at least two pieces of the colour it adds in the reserve, and takes them from there. Destroyed pieces leave the game for good and never go back to the reserve.",
      ],
    },
    {
      heading: "How the game ends",
      paragraphs: [
        "The goals are checked only when a whole turn is over. A black piece on d4 wins for Black and a white piece on a1 wins for White, however it got there and whoever's law put it there; if both happen in the same turn, the player who just played wins.",
        "A player who cannot move and has no law to apply at the start of their turn loses. Since nothing can move on the full starting board, Black loses at once if none of Black's laws fits that board.",
        "A player with no pieces left on the board is still in the game as long as one of their laws can be applied.",
      ],
    },
  ],
  mistakes: [
    "As Black, make sure at least one of your laws fits somewhere on the full starting board, or you lose before your first turn.",
    "As White, write your laws as you see the board from your own side: they are turned around compared with Black's view.",
    "Remember that applying a law reveals it, and a revealed law blocks every other law with the same cause, your own included.",
    "Don't reach a goal with a move and then apply a law that removes that piece, because the win is only checked at the end of the turn.",
    "Take care with regenerations near the corners: a white piece on a1 wins for White, even if Black's law put it there.",
    "Watch the reserves: once a colour has fewer than two pieces left, laws that add that colour stop working.",
  ],
};
