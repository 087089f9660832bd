"""Letters that look alike: a skeleton under which `paypa1`, `pаypal` (Cyrillic а) and `paypal` are one word.

A small hand-made subset of Unicode's confusables (UTS #39): digits read as letters, the Cyrillic, Greek and
Armenian letters that look Latin, letter pairs that read as one letter (`rn` as `m`), accents dropped. Two
domain label imitates a name when their skeletons are equal and it is not simply the name in ASCII. Pure.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

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


# _SINGLE's ASCII entries as a translation table: ASCII text is its own NFKD form and holds no combining mark.
_ASCII_SINGLE = str.maketrans({ch: shape for ch, shape in _SINGLE.items() if ch.isascii()})


@lru_cache(maxsize=4096)
def skeleton(label: str) -> str:
    """The shape of a label: `PayPa1` -> `paypal`, `pаypal` (Cyrillic а) -> `paypal`, `rnicrosoft` -> `mlcrosoft`."""
    text = label.lower()
    text = text.translate(_ASCII_SINGLE) if text.isascii() else _look_alikes(text)
    for pair, single in _PAIRS:
        text = text.replace(pair, single)
    return text


def _look_alikes(text: str) -> str:
    """Each character of the NFKD form replaced by the letter it looks like, combining marks dropped."""
    text = unicodedata.normalize("NFKD", text)
    return "".join(_SINGLE.get(ch, ch) for ch in text if not unicodedata.combining(ch))


def imitates(label: str, target: str) -> bool:
    """A sender's domain label that looks like `target` without being its honest spelling.

    `paypa1`, `pаypal` (Cyrillic а) and `rnicrosoft` imitate `paypal` and `microsoft`; `cafe-lumiere` spells
    `Café Lumière` the only way a domain can (accents and spaces dropped) and imitates nothing. Both at least
    four characters, so that a likeness means something.
    """
    label, target = label.lower(), target.lower()
    if label == target or len(label) < 4 or len(target) < 4:
        return False
    # Shapes first: they differ for nearly every pair, and the honest spelling only matters where they agree.
    return skeleton(label) == skeleton(target) and label.replace("-", "") != _plain(target)


@lru_cache(maxsize=4096)
def _plain(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch) and ch not in "- _.'")


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
