"""Pipe tables: their rows read as GFM does, shown as a grid or, when too wide, a list."""

from __future__ import annotations

import re

from bot.render._inline import inline_mrkdwn, plain_text
from bot.render._text import escape

_DELIMITER_CELL_RE = re.compile(r"^\s*:?-+:?\s*$")
#: widest grid shown as a code block; wider tables wrap badly on phones, so become a list
MAX_GRID_WIDTH = 72
_CELL_SPLIT_RE = re.compile(r"(?<!\\)\|")


def split_row(line: str) -> list[str]:
    """The cells of a pipe-table row; `\\|` is a pipe inside a cell (as in GFM)."""
    text = line.strip()
    cells = [cell.replace("\\|", "|") for cell in _CELL_SPLIT_RE.split(text)]
    if text.startswith("|"):
        cells = cells[1:]  # the empty text before the leading pipe
    if len(cells) > 1 and text.endswith("|") and not text.endswith("\\|"):
        cells = cells[:-1]  # the empty text after the trailing pipe
    return [cell.strip() for cell in cells]


def is_delimiter_row(line: str, header: str) -> bool:
    if "-" not in line or ("|" not in line and "|" not in header):
        return False
    cells = split_row(line)
    return (
        bool(cells)
        and all(_DELIMITER_CELL_RE.match(cell) for cell in cells)
        and len(cells) == len(split_row(header))
    )


def table_lines(
    header: list[str], rows: list[list[str]], base_url: str | None
) -> tuple[list[str], bool]:
    """The lines of a grid for a code block (True) if it is narrow enough, else a list (False)."""
    plain_header = [_cell_plain(cell) for cell in header]
    plain_rows = [[_cell_plain(cell) for cell in row] for row in rows]
    columns = max([len(plain_header), *(len(row) for row in plain_rows)])
    widths = [0] * columns
    for row in [plain_header, *plain_rows]:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], len(cell))
    grid_width = sum(widths) + 3 * (columns - 1)
    if grid_width <= MAX_GRID_WIDTH:
        return _grid(plain_header, plain_rows, widths), True
    return _row_list(header, rows, base_url), False


def _cell_plain(cell: str) -> str:
    return " ".join(plain_text(cell).split())


def _grid(header: list[str], rows: list[list[str]], widths: list[int]) -> list[str]:
    def line(cells: list[str]) -> str:
        padded = [cells[i].ljust(w) if i < len(cells) else " " * w for i, w in enumerate(widths)]
        return escape(" | ".join(padded).rstrip())

    rule = "-+-".join("-" * w for w in widths)
    return [line(header), rule, *(line(row) for row in rows)]


def _row_list(header: list[str], rows: list[list[str]], base_url: str | None) -> list[str]:
    labels = [escape(_cell_plain(cell)) for cell in header]
    lines = []
    for row in rows or [header]:
        shown = []
        for index, cell in enumerate(row):
            if not cell:
                continue
            value = inline_mrkdwn(cell, base_url)
            label = labels[index] if index < len(labels) and rows else ""
            shown.append(f"*{label}:* {value}" if label else value)
        lines.append("• " + " · ".join(shown))
    return lines
