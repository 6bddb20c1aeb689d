"""A small terminal emulator: what a terminal shows after the bytes rich writes (and the keys it echoes).

It knows what a live display uses: printable characters with the deferred line wrap of VT100/xterm (a
character written in the last column leaves the cursor there until the next one), CR, LF (as CR LF, which a
tty's output processing makes of it), cursor up/down/left/right/column, and erase in line. Colours, cursor
visibility and other modes are ignored. There is no bottom edge: lines scroll into an endless page.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"\x1b\[([?0-9;]*)([A-Za-z])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|([\r\n])")


class Screen:
    def __init__(self, width: int) -> None:
        self.width = width
        self.rows: list[list[str]] = [[]]
        self.row = 0
        self.col = 0
        self.wrap_pending = False

    def feed(self, data: str) -> None:
        position = 0
        for match in _CONTROL.finditer(data):
            self._text(data[position : match.start()])
            position = match.end()
            params, final, newline = match.group(1), match.group(2), match.group(3)
            if newline == "\r":
                self.col, self.wrap_pending = 0, False
            elif newline == "\n":
                self._down(1)
                self.col = 0
            elif final is not None and final in "ABCDGK" and params.isdigit() | (params == ""):
                self._csi(int(params or ("0" if final == "K" else "1")), final)
        self._text(data[position:])

    def lines(self) -> list[str]:
        """The screen's text, line by line, without trailing blanks or trailing empty lines."""
        lines = ["".join(row).rstrip() for row in self.rows]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    def _csi(self, n: int, final: str) -> None:
        self.wrap_pending = False
        if final == "A":
            self.row = max(self.row - n, 0)
        elif final == "B":
            self._down(n)
        elif final == "C":
            self.col = min(self.col + n, self.width - 1)
        elif final == "D":
            self.col = max(self.col - n, 0)
        elif final == "G":
            self.col = min(max(n - 1, 0), self.width - 1)
        elif final == "K":
            line = self.rows[self.row]
            if n == 2:
                line.clear()
            elif n == 0:
                del line[self.col :]
            elif n == 1:
                line[: self.col + 1] = [" "] * min(self.col + 1, len(line))

    def _down(self, n: int) -> None:
        self.row += n
        self.wrap_pending = False
        while len(self.rows) <= self.row:
            self.rows.append([])

    def _text(self, text: str) -> None:
        for char in text:
            if char < " ":
                continue
            if self.wrap_pending:
                self._down(1)
                self.col = 0
            line = self.rows[self.row]
            line.extend(" " * (self.col + 1 - len(line)))
            line[self.col] = char
            if self.col == self.width - 1:
                self.wrap_pending = True
            else:
                self.col += 1
