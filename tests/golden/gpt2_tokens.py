#!/usr/bin/python3
"""Golden token ids for attn's GPT-2 tokenizer, from a reference byte-level BPE written here in Python.

Run with Debian's python3-regex (the `regex` module GPT-2's own encoder.py used):

    /usr/bin/python3 tests/golden/gpt2_tokens.py

It reads data/gpt2/encoder.json and data/gpt2/vocab.bpe and writes tests/golden/gpt2_tokens.json: for each
of a few hundred strings (Unicode, emoji, digits, contractions, runs of spaces, newlines, <|endoftext|>),
its token ids. tests/test_gpt2_tokenizer.cpp encodes the same strings with attn and requires the same ids.
The book's own ids (chapter 2) are checked here before anything is written.
"""
import json
import os
import random

import regex

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "data", "gpt2")
SPECIAL = "<|endoftext|>"
PATTERN = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def byte_symbols():
    """Byte -> the printable character GPT-2 writes for it."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


class Reference:
    def __init__(self):
        with open(os.path.join(DATA, "encoder.json"), encoding="utf-8") as f:
            self.ids = json.load(f)
        with open(os.path.join(DATA, "vocab.bpe"), encoding="utf-8") as f:
            lines = f.read().split("\n")
        pairs = [tuple(line.split(" ")) for line in lines[1:] if line]
        self.ranks = {pair: rank for rank, pair in reversed(list(enumerate(pairs)))}
        self.symbols = byte_symbols()

    def merge(self, word):
        parts = list(word)
        while len(parts) > 1:
            candidates = [(self.ranks[p], p) for p in zip(parts, parts[1:]) if p in self.ranks]
            if not candidates:
                break
            _, (a, b) = min(candidates)
            out, i = [], 0
            while i < len(parts):
                if i + 1 < len(parts) and parts[i] == a and parts[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(parts[i])
                    i += 1
            parts = out
        return parts

    def encode(self, text):
        ids = []
        pieces = text.split(SPECIAL)
        for n, part in enumerate(pieces):
            for piece in PATTERN.findall(part):
                word = "".join(self.symbols[b] for b in piece.encode("utf-8"))
                ids += [self.ids[s] for s in self.merge(word)]
            if n + 1 < len(pieces):
                ids.append(self.ids[SPECIAL])
        return ids


def strings():
    fixed = [
        "Your journey starts with one step",
        "Hello, do you like tea? <|endoftext|> In the sunlit terraces of someunknownPlace.",
        "Akwirw ier",
        "", " ", "  ", "   x", "a  b", "a   b  ", "\n", "\n\n", "a\nb", "a \n b", " \n\n  c", "\t\tindent", "\r\n",
        "tabs\tand\nnewlines\r\nmixed", "trailing spaces   ", "   leading", "x" * 40,
        "I'm", "you're", "they've", "she'll", "he'd", "it's", "don't", "DON'T", "I'M", "'s", "'ll've",
        "rock 'n' roll", "l'amour", "O'Neill's", "can't won't shouldn't",
        "0", "7", "123", "1234567890", "3.14159", "-42", "1,000,000", "2026-11-24", "v1.2.3", "x86_64",
        "Ⅻ", "½ ¾", "٣٤٥", "१२३", "①②③",
        "naïve café", "Ünïcödé", "straße", "Ωμέγα", "Привет, мир!", "你好，世界", "こんにちは世界", "안녕하세요",
        "مرحبا بالعالم", "שלום עולם", "हिन्दी", "ไทย", "Tiếng Việt",
        "😀", "👩‍👩‍👧‍👦", "🇩🇪🇫🇷", "I ❤️ NY", "e\u0301", "a\u200bb", "\u00a0nbsp\u00a0", "x\u3000y", "\u2028line",
        "\u0085nel", "\x1c\x1d\x1e\x1f", "\x00\x01\x7f", "tab\x0bvt\x0cff",
        "<|endoftext|>", "<|endoftext|><|endoftext|>", "a<|endoftext|>b", " <|endoftext|> ", "<|endoftext|",
        "<|endoftext|>\n", "endoftext", "<|unk|>",
        "def f(x):\n    return x ** 2  # square", "if (a && b) { c++; }", "<html><body>Hi</body></html>",
        "https://github.com/rasbt/LLMs-from-scratch", "user@example.com", "$100 & 50% off!!!", "...", "---",
        "C'est la vie", "e.g. i.e. etc.", "#hashtag @mention", "snake_case camelCase PascalCase",
        "The quick brown fox jumps over the lazy dog.", "THE QUICK BROWN FOX", "tHe QuIcK",
        "antidisestablishmentarianism", "pneumonoultramicroscopicsilicovolcanoconiosis",
    ]
    rng = random.Random(20261124)
    alphabet = (list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") + [" "] * 8 +
                list("'.,;:!?-_()[]{}\"/\\\n\t") + list("éüßøñ中文字日本語한국어Ωλ😀👍🏽€£¥…—–“”‘’") +
                ["'s", "'t", "'re", "<|endoftext|>", "  ", "\n\n"])
    generated = []
    for _ in range(300):
        n = rng.randint(1, 24)
        generated.append("".join(rng.choice(alphabet) for _ in range(n)))
    return fixed + generated


def main():
    ref = Reference()
    book = {
        "Hello, do you like tea? <|endoftext|> In the sunlit terraces of someunknownPlace.":
            [15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812, 2114, 286, 617, 34680,
             27271, 13],
        "Akwirw ier": [33901, 86, 343, 86, 220, 959],
        "Your journey starts with one step": [7120, 7002, 4940, 351, 530, 2239],
    }
    for text, ids in book.items():
        assert ref.encode(text) == ids, (text, ref.encode(text))
    cases = [{"text": s, "ids": ref.encode(s)} for s in strings()]
    with open(os.path.join(HERE, "gpt2_tokens.json"), "w", encoding="utf-8") as f:
        json.dump({"generator": "tests/golden/gpt2_tokens.py", "regex": regex.__version__, "cases": cases}, f,
                  ensure_ascii=True)
        f.write("\n")
    print(f"{len(cases)} strings written to tests/golden/gpt2_tokens.json")


if __name__ == "__main__":
    main()
