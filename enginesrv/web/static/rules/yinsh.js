// "How to play" for Yinsh and Yinsh blitz: plain text the page inserts with textContent.
// Every diagram position is reached from the start by legal moves (rings placed e2 e3 b2 k8 h4
// g10 i10 d8 c7 j6, then b2-b1 e3-e4 h4-h5 e4-e5 i10-i9 e5-f5, then e2-e6 k8-k9 e6-f6).

export default {
  title: "How to play Yinsh",
  summary:
    "Yinsh is a two-player game of rings and two-coloured markers, White against Black. Line up five markers of your colour to take one of your own rings off the board: the first player to take off three rings wins.",
  sections: [
    {
      heading: "The board and the pieces",
      paragraphs: [
        "The board is a hexagon of 85 points where the lines cross, and the pieces stand on these points. The columns are lettered a to k and the points of each column are numbered from the bottom up, so the centre is f6.",
        "Each player has 5 rings of their own colour. Beside the board lies a shared supply of 51 markers, each white on one face and black on the other: a marker belongs to the colour that faces up, and that can change many times.",
        "A point holds at most one piece, either a ring or a marker.",
      ],
    },
    {
      heading: "Setting up",
      paragraphs: [
        "The board starts empty. White puts a ring on any empty point, then Black does, and so on until all ten rings are on the board.",
        "No markers are used while the rings go in. As soon as the tenth ring is down, White makes the first ring move.",
      ],
      diagram: {
        position: "4/1W5/6W1/7B1/1WB7/9/8B1/1W7/6W1/1B5/1B2 w m 0-0 51",
        caption: "All ten rings are placed, the supply still holds all 51 markers, and White moves first.",
      },
    },
    {
      heading: "Moving a ring",
      paragraphs: [
        "On your turn, take a marker from the supply and lay it with your colour up inside one of your rings, then move that ring in a straight line in one of the six directions. The marker stays behind on the point the ring left.",
        "A ring slides over as many empty points as you like. It may also jump a group of markers of any colour that lie next to each other, but then it must stop on the very first empty point beyond them; a ring can never cross or land on another ring, and never stops on a marker.",
        "Every marker the ring jumps is turned over to the other colour. Markers never move: they only change colour.",
      ],
      diagram: {
        position: "4/Ww5/6W1/7B1/1Wbbb5/3B5/8B1/1wW6/5Ww1/1B5/1B2 w m 0-0 45",
        caption: "The White ring on e2 can jump the black markers on e3, e4 and e5, must land on e6, and turns all three white.",
        marks: ["e2", "e6"],
      },
    },
    {
      heading: "Rows of five",
      paragraphs: [
        "Five markers of your colour side by side on one straight line make a row, and you must remove it. The five markers go back to the supply, and then you take any one of your rings off the board, even the one that just moved.",
        "In a line longer than five you choose which five neighbouring markers to remove. If one move makes several rows, remove them one at a time, each with its own ring; a row that shared a marker with one you removed is broken and no longer counts.",
        "A flip can also finish a row for your opponent. Once you have dealt with your own rows, your opponent removes those rows, each with one of their rings, before making their own move.",
      ],
      diagram: {
        position: "4/Ww5/6W1/7B1/1wwwww4/3BW4/8B1/1wW6/5Ww1/1B5/1bB1 w x 0-0 42",
        caption: "After the jump to e6 and the move e6-f6, White has a row from e2 to e6 and now removes it, then one of its rings.",
        marks: ["e2", "e3", "e4", "e5", "e6"],
      },
    },
    {
      heading: "How the game ends",
      paragraphs: [
        "The first player to take off a third ring wins at once, even if other rows are still on the board. The player who moved always removes rows first, so if one move gives both players their last row, the mover wins.",
        "If the supply has run out when someone is about to move a ring, the game ends and the player who has taken off more rings wins; equal counts are a draw. The move that uses the last marker is still played out, and if it makes a row, those markers return to the supply and play goes on.",
        "If none of your rings can move, you pass. If your opponent then cannot move either, the game ends and is decided the same way as when the supply runs out.",
      ],
    },
    {
      heading: "Yinsh blitz",
      paragraphs: [
        "Yinsh blitz is the short version: the first player to take off a single ring wins. Everything else stays the same, so one row decides the game, and a row you make for your opponent can cost you the game.",
      ],
    },
  ],
  mistakes: [
    "Check every marker your ring will jump, because each one flips and a flip can finish a row for your opponent.",
    "Remember that after jumping markers a ring must stop on the very next empty point; it cannot slide on.",
    "Count the marker your ring leaves on its starting point, since it is often the fifth marker of a row.",
    "Keep your rings free to move: a ring boxed in by other rings and markers is of little use.",
    "Choose which ring to take off with care, because every ring you remove also leaves you fewer moves.",
  ],
};
