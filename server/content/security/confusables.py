"""Letters that look alike: a skeleton under which `paypa1`, `pаypal` (Cyrillic а) and `paypal` are one word.

A small hand-made subset of Unicode's confusables (UTS #39): digits read as letters, the Cyrillic, Greek and
Armenian letters that look Latin, letter pairs that read as one letter (`rn` as `m`), accents dropped. Two
domain labels are confusable when their skeletons are equal and their spellings are not. Pure.
"""

from __future__ import annotations

import unicodedata

_SINGLE = {
    # digits and look-alike ASCII
    "0": "o",
    "1": "l",
    "3": "e",
    "4": "a",
    "5": "s",
    "7": "t",
    "8": "b",
    "9": "g",
    "i": "l",
    "|": "l",
    "-": "",
    "_": "",
    # Cyrillic
    "а": "a",
    "в": "b",
    "е": "e",
    "ё": "e",
    "к": "k",
    "м": "m",
    "н": "h",
    "о": "o",
    "р": "p",
    "с": "c",
    "т": "t",
    "у": "y",
    "х": "x",
    "ѕ": "s",
    "і": "l",
    "ї": "l",
    "ј": "j",
    "ԁ": "d",
    "ԛ": "q",
    "ԝ": "w",
    "һ": "h",
    "ӏ": "l",
    "ɡ": "g",
    "ь": "b",
    "п": "n",
    # Greek
    "α": "a",
    "β": "b",
    "ε": "e",
    "η": "n",
    "ι": "l",
    "κ": "k",
    "ν": "v",
    "ο": "o",
    "ρ": "p",
    "τ": "t",
    "υ": "u",
    "χ": "x",
    "ω": "w",
    "γ": "y",
    # Armenian and other Latin look-alikes
    "օ": "o",
    "ս": "u",
    "ց": "g",
    "հ": "h",
    "ո": "n",
    "ı": "l",
    "ł": "l",
    "ø": "o",
    "đ": "d",
    "ħ": "h",
}
_PAIRS = (("rn", "m"), ("vv", "w"), ("cl", "d"))
_LOOKALIKE_SCRIPTS = ("CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE")


def skeleton(label: str) -> str:
    """The shape of a label: `PayPa1` -> `paypal`, `pаypal` (Cyrillic а) -> `paypal`, `rnicrosoft` -> `mlcrosoft`."""
    text = unicodedata.normalize("NFKD", label.lower())
    text = "".join(_SINGLE.get(ch, ch) for ch in text if not unicodedata.combining(ch))
    for pair, single in _PAIRS:
        text = text.replace(pair, single)
    return text


def confusable(a: str, b: str) -> bool:
    """Two labels spelled differently that look the same (long enough for the likeness to mean something)."""
    return a != b and len(a) >= 4 and len(b) >= 4 and skeleton(a) == skeleton(b)


def scripts(label: str) -> set[str]:
    """The scripts of a label's letters: {"LATIN", "CYRILLIC"} for `pаypal` (Cyrillic а)."""
    found = set()
    for ch in label:
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            found.add(name.split(" ", 1)[0] if name else "UNKNOWN")
    return found


def script_trick(label: str) -> str | None:
    """What is deceptive about one (decoded) label's letters, or None.

    Latin mixed with Cyrillic, Greek or Armenian in one label is never needed by a real name; a label written
    entirely in those scripts whose every letter looks Latin (`рауран`) imitates a Latin word.
    """
    if label.isascii():
        return None
    found = scripts(label)
    mixed = found & set(_LOOKALIKE_SCRIPTS)
    if "LATIN" in found and mixed:
        return f"mixes Latin and {'/'.join(sorted(s.title() for s in mixed))} letters"
    if mixed and found <= set(_LOOKALIKE_SCRIPTS):
        shape = skeleton(label)
        if shape.isascii() and shape.isalnum() and len(shape) >= 3:
            return f"{'/'.join(sorted(s.title() for s in mixed))} letters that all look Latin ({shape!r})"
    return None
