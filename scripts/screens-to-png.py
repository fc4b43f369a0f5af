#!/usr/bin/python3
"""Draws the presenter's captured screens (docs/screens/present-*.ansi, written by capture-screens.sh) as
PNG images for docs/classroom.md, cell by cell in DejaVu Sans Mono with the xterm 256-colour palette.

Only the escapes tmux's capture-pane -e writes are read: SGR 0, 1, 7, 22, 27, 39, 49, 38;5;N and 48;5;N.
A screen without colour (present-mono) is drawn black on white, as a light terminal shows it.
A developer's tool (Debian: python3-pil, fonts-dejavu-core); the tests never run it.

    /usr/bin/python3 scripts/screens-to-png.py docs/screens/present-*.ansi
"""
import re
import sys

from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
SIZE, CELL_W, CELL_H = 14, 9, 18


def xterm(n):
    """The RGB of xterm colour n."""
    base = [(0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205),
            (229, 229, 229), (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255),
            (255, 0, 255), (0, 255, 255), (255, 255, 255)]
    if n < 16:
        return base[n]
    if n < 232:
        n -= 16
        level = [0, 95, 135, 175, 215, 255]
        return level[n // 36], level[n // 6 % 6], level[n % 6]
    g = 8 + 10 * (n - 232)
    return g, g, g


def draw(path):
    text = open(path, encoding="utf-8").read().rstrip("\n").split("\n")
    rows, cols = len(text), 100
    default_fg, default_bg = (0, 0, 0), (255, 255, 255)
    img = Image.new("RGB", (cols * CELL_W, rows * CELL_H), default_bg)
    d = ImageDraw.Draw(img)
    fonts = {False: ImageFont.truetype(FONT, SIZE), True: ImageFont.truetype(BOLD, SIZE)}
    fg, bg, bold, reverse = None, None, False, False
    for y, line in enumerate(text):
        x = 0
        for token in re.split(r"(\x1b\[[0-9;]*m)", line):
            if token.startswith("\x1b["):
                codes = [int(c) if c else 0 for c in token[2:-1].split(";")]
                i = 0
                while i < len(codes):
                    c = codes[i]
                    if c == 0:
                        fg, bg, bold, reverse = None, None, False, False
                    elif c == 1:
                        bold = True
                    elif c == 22:
                        bold = False
                    elif c == 7:
                        reverse = True
                    elif c == 27:
                        reverse = False
                    elif c == 39:
                        fg = None
                    elif c == 49:
                        bg = None
                    elif c in (38, 48) and i + 2 < len(codes) and codes[i + 1] == 5:
                        if c == 38:
                            fg = xterm(codes[i + 2])
                        else:
                            bg = xterm(codes[i + 2])
                        i += 2
                    i += 1
                continue
            for ch in token:
                f, b = fg or default_fg, bg or default_bg
                if reverse:
                    f, b = b, f
                d.rectangle([x * CELL_W, y * CELL_H, (x + 1) * CELL_W - 1, (y + 1) * CELL_H - 1], fill=b)
                if ch != " ":
                    d.text((x * CELL_W, y * CELL_H + 1), ch, font=fonts[bold], fill=f)
                x += 1
        # The rest of the row in the background the line ended with (ncurses fills it so).
        if bg is not None:
            d.rectangle([x * CELL_W, y * CELL_H, cols * CELL_W - 1, (y + 1) * CELL_H - 1], fill=bg)
    out = path[:-len(".ansi")] + ".png"
    img.save(out, optimize=True)
    print(out)


for p in sys.argv[1:]:
    draw(p)
