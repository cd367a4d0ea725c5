// "How to play" for Yoxii: plain text the page inserts with textContent.
// The diagrams are the start, the start after d5 3@d4 c5 2@c6, and the finished game
// e3 3@e2 d2 3@e1 c1 4@d2 c2 3@c1 d1 2@c2 (all legal moves).

export default {
  title: "How to play Yoxii",
  summary:
    "Yoxii is a two-player game around a shared Totem: on each turn you move the Totem, then place one of your numbered pieces next to it. When the player to move can no longer move the Totem, the game ends and the player with the higher total of piece values around the Totem wins.",
  sections: [
    {
      heading: "The board and the pieces",
      paragraphs: [
        "The board is an octagon of 37 squares: a 7 by 7 grid with its corners cut off. Files run from a to g, left to right, and ranks from 1 to 7, bottom to top.",
        "The Totem belongs to nobody. White and Black each have 18 pieces worth 1 to 4 points: five 1s, five 2s, five 3s and three 4s.",
        "The pieces you have not placed yet form your stock, and both stocks are open for everyone to see.",
      ],
    },
    {
      heading: "Setting up",
      paragraphs: [
        "At the start only the Totem is on the board, on the centre square d4, and both stocks are full. White takes the first turn.",
      ],
      diagram: {
        position: "3/5/7/3T3/7/5/3 w t w:5553 b:5553",
        caption: "The starting position: the Totem alone on d4, and White to move it.",
        marks: ["d4"],
      },
    },
    {
      heading: "Moving the Totem",
      paragraphs: [
        "Every turn starts with a Totem move, and it is compulsory: there is no passing. The Totem may step one square in any of the eight directions, straight or diagonal, onto an empty square, but it never slides further.",
        "It may also jump in a straight line over one or more of your own pieces standing next to each other, landing on the first empty square behind them. It can never jump your opponent's pieces, not even one inside a line of yours, and it cannot jump off the board.",
      ],
      diagram: {
        position: "3/1b3/2T4/3C3/7/5/3 w t w:5543 b:5453",
        caption: "White can step the Totem from c5 to an empty neighbour or jump over White's 3 on d4 to land on e3; Black's 2 on c6 blocks the way up.",
        marks: ["d4", "e3"],
      },
    },
    {
      heading: "Placing a piece",
      paragraphs: [
        "After moving the Totem, place one piece from your stock, of any value you still have, on an empty square touching the Totem. The square the Totem has just left counts too whenever it touches the Totem's new square.",
        "If every square around the Totem is already taken, you may instead put your piece on any empty square of the board. Pieces stay where they are put for the rest of the game: nothing ever moves or removes them.",
      ],
    },
    {
      heading: "How the game ends",
      paragraphs: [
        "If the player about to start a turn cannot move the Totem at all, the game ends at once. Being stuck does not lose by itself: the pieces around the Totem decide.",
        "Each player adds up the values of their own pieces on the squares touching the Totem (4 to 8 squares, depending on where it stands). The higher total wins; if the totals are equal, the player with more pieces there wins, and if that is equal too, the game is a draw.",
        "Pieces anywhere else on the board and pieces left in the stock do not count.",
      ],
      diagram: {
        position: "3/5/7/7/7/1BDC1/cTc b t w:5442 b:5533",
        caption: "Black cannot move the Totem on d1, so the game is over: White has 2 + 4 + 3 = 9 around it, Black 3 + 3 = 6, and White wins.",
        marks: ["c1", "c2", "d2", "e2", "e1"],
      },
    },
  ],
  mistakes: [
    "Don't plan a jump past an enemy piece: a single one blocks the Totem in that direction.",
    "Before placing, look at where your opponent can send the Totem next, since your pieces are bridges for you but walls for them.",
    "Keep an eye on the squares around the Totem on every turn, because the game can end suddenly when it gets boxed in.",
    "Save some high values for the end: you have only three 4s, and they count only if they stand next to the Totem's last square.",
    "Count the score around the Totem before you close its last gap: being stuck does not lose, the totals decide.",
  ],
};
