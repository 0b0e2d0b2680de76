"""Self-play records: the Gomocup TSV with a `search` column that
`pbrain-wuzi selfplay` writes, one game a line, appended when the game ends.

Only whole lines are games: a line without its newline is a game the engine
was still writing when it stopped, and is never stored.
"""

from __future__ import annotations

from dataclasses import dataclass

HEADER = "#game_id\tyear\tleague\trule\tboard\tblack\twhite\twinner\tend\tn_opening\tn_moves\tmoves\tsearch"
COLUMNS = HEADER.count("\t") + 1


class RecordError(Exception):
    pass


@dataclass(frozen=True)
class GameSummary:
    game_id: str
    winner: str
    moves: int
    positions: int  # fully searched positions: the training targets


def game_lines(text: str) -> list[str]:
    """The game lines of a stored part's text (parts are written whole),
    without the header."""
    return [line for line in text.split("\n") if line and not line.startswith("#")]


def whole_game_lines(text: str) -> list[str]:
    """The finished game lines of a self-play file's text, without the
    header and without a partly written last line."""
    lines = text.split("\n")
    # The last element is "" when the text ends with a newline, otherwise a
    # line the writer had not finished.
    return game_lines("\n".join(lines[:-1]))


def parse_game(line: str) -> GameSummary:
    fields = line.split("\t")
    if len(fields) != COLUMNS:
        raise RecordError(f"{len(fields)} columns instead of {COLUMNS}: {line[:80]!r}")
    game_id, winner, n_opening, n_moves, moves, search = (
        fields[0], fields[7], fields[9], fields[10], fields[11], fields[12])
    if winner not in ("B", "W", "D"):
        raise RecordError(f"{game_id}: winner {winner!r}")
    try:
        opening, total = int(n_opening), int(n_moves)
    except ValueError:
        raise RecordError(f"{game_id}: move counts {n_opening!r} {n_moves!r}") from None
    move_list = moves.split()
    if len(move_list) != total or not 0 <= opening <= total:
        raise RecordError(f"{game_id}: {len(move_list)} moves where n_moves is {total}")
    entries = search.split()
    if len(entries) != total - opening:
        raise RecordError(f"{game_id}: {len(entries)} search entries for {total - opening} moves after the opening")
    positions = sum(1 for entry in entries if entry != "-")
    return GameSummary(game_id, winner, total, positions)


def file_text(lines: list[str]) -> str:
    return HEADER + "\n" + "".join(line + "\n" for line in lines)
