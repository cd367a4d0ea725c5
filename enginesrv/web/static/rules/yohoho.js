// "How to play" for Yohoho!: plain text the page inserts with textContent.
// The diagrams are the start, the start after i3-j4 i7-h6, and the start after
// m1-p4 c9-e7 k9-m7 p4-n6 g1-f2 (all legal moves).

export default {
  title: "How to play Yohoho!",
  summary:
    "Yohoho! is a sea battle between two fleets, White and Black, on a board of hexagons where the wind always blows from the east. You win by sailing your Admiral to the far side of the board or by trapping the enemy Admiral.",
  sections: [
    {
      heading: "The board and the fleets",
      paragraphs: [
        "The board has 77 hexagonal cells in 9 rows. Row 1 at the bottom is White's home row and row 9 at the top is Black's; a cell is named by its letter and its row, such as i3.",
        "Each fleet has an Admiral (strength 5), two Galleons (strength 3 each), four Chebecs (strength 2 each) and a Rock (strength 0). The fleets start on their home rows, each Admiral two rows ahead of its fleet, and White plays first.",
      ],
      diagram: {
        position: "1ccgrgcc1/8/4a4/8/9/8/4A4/8/1CCGRGCC1 w 1 1",
        caption: "The starting fleets: the White Admiral on i3 and the Black Admiral on i7 each head for the other side's home row.",
        marks: ["i3", "i7"],
      },
    },
    {
      heading: "Wind and movement",
      paragraphs: [
        "A piece moves in a straight line, and every cell it crosses or stops on must be empty: nothing ever jumps, pushes or captures by moving. The Admiral moves exactly one cell, a Galleon one or two, a Chebec one to three, and a Rock as far as it likes.",
        "The wind blows from the east edge (column q) towards the west, and no ship may ever sail straight east, into the wind; the other five directions are open. Rocks ignore the wind and move in all six directions.",
        "You move only your own Rock. Rocks are never captured, and they block the ships of both sides.",
      ],
    },
    {
      heading: "Your turn: two moves or one capture",
      paragraphs: [
        "On your turn you either capture one enemy ship, or move two different pieces of yours, one after the other. The only exception is White's very first turn, which is a single move.",
        "The second move is made on the board as the first one left it: it may cross or stop on the cell your first piece left, but not the cell that piece moved to. You may only start your turn with a move that a second move can follow, unless your Admiral reaches its goal row with it.",
      ],
      diagram: {
        position: "1ccgrgcc1/8/9/3a4/9/4A3/9/8/1CCGRGCC1 b 2:h6 0",
        caption: "Black has moved its Admiral from i7 to h6 and must now move a different piece to finish the turn.",
        marks: ["h6"],
      },
    },
    {
      heading: "Capturing",
      paragraphs: [
        "Add up the strengths of your pieces on the cells touching an enemy Galleon or Chebec. If the total is greater than that ship's own strength, you may remove the ship; an equal total is not enough.",
        "A capture is your whole turn, and nothing moves. Capturing is never compulsory, and Admirals and Rocks are never captured.",
      ],
      diagram: {
        position: "2cgr1cc1/8/2c1a1g2/6C1/9/8/4A4/2G5/1CC1RG1C1 b 1 0",
        caption: "The Black Galleon on m7 (strength 3) touches the White Chebec on n6 (strength 2), so Black may spend this turn capturing it.",
        marks: ["n6", "m7"],
      },
    },
    {
      heading: "Keeping your Admiral safe",
      paragraphs: [
        "Your Admiral is in danger on a cell where the enemy pieces touching it add up to more than 5, such as two Galleons or three Chebecs. Your Admiral may never end a move on such a cell, although your Galleons and Chebecs may move into danger.",
        "If your Admiral is in danger at the start of your turn (Arno's rule), you must deal with it straight away. Either capture a ship touching it so that the total drops to 5 or less, or begin the turn by stepping the Admiral to a safe cell and then move another piece as usual.",
      ],
    },
    {
      heading: "How the game ends",
      paragraphs: [
        "You win when your Admiral reaches the enemy's home row: row 9 for White, row 1 for Black. If it gets there with the first move of a turn, the turn and the game end right away; this win is worth 1 point.",
        "You also win if the enemy Admiral is trapped: it is in danger at the start of its turn, with no safe cell to step to and no capture that frees it. That counts as taking the Admiral and is worth 2 points.",
        "A side that has no legal turn at all, for example because only one of its pieces can still move, loses as well (2 points). There are no draws.",
      ],
    },
  ],
  mistakes: [
    "Never plan a ship move straight east: the wind forbids it for every ship, so route your fleet around it.",
    "Before moving a Galleon or Chebec, count the enemy strength around its new cell, since a Chebec next to an enemy Galleon can be taken at once.",
    "Keep the total of enemy pieces touching your Admiral at 5 or less, and watch for two Galleons or three Chebecs closing in.",
    "Remember that a normal turn moves two different pieces, so keep a second piece free to move.",
    "Use your Rock: it can cross the whole board in one move and block the enemy Admiral's way home.",
  ],
};
