"""CSS just deep enough to tell what a mail reader shows: declarations, simple `<style>` rules, colours, lengths.

Mail HTML styles itself inline, with a `<style>` block of class rules on top; mail clients support little more.
So a stylesheet here keeps rules whose selector is one simple selector (`td`, `.cls`, `td.cls`, `#id`, `*`) and
merges them in specificity order. What it cannot match it records as a doubt instead: a rule with a compound
selector that sets a colour or background makes colour judgements unsafe, and the checks above hold back.
Rules inside `@media`/`@supports` are conditional (a phone, dark mode): they never hide anything here, but a
class they make visible is "toggled", the responsive pattern of mobile-only blocks; so is a class a compound
rule displays (`#menu:checked ~ .panel`, the interactive-mail pattern). Pure; linear time.
"""

from __future__ import annotations

import re
from functools import lru_cache

Colour = tuple[int, int, int, float]  # r, g, b (0-255), alpha (0-1)

MAX_SHEET_CHARS = 200_000  # CSS a message may declare; the rest is ignored
MAX_RULES = 2_000
_SIMPLE = re.compile(r"(\*|[a-z][a-z0-9]*)?(?:\.([\w-]+))?")
_ID = re.compile(r"#([\w-]+)")
_COMBINATOR = re.compile(r"[\s>+~]+")
_CLASS_IN = re.compile(r"""\.([\w-]+)|\[class[~*|^]?=["']?([\w-]+)""")
_HEX = re.compile(r"#([0-9a-f]{3,8})\b")
_FUNC = re.compile(r"rgba?\(([^)]*)\)")
_LENGTH = re.compile(r"(-?\d*\.?\d+)(px|pt|em|rem|%|pc|in|cm|mm|ex|ch|vw|vh)?$")
_COLOUR_KEYS = frozenset(("color", "background", "background-color", "background-image"))

WHITE: Colour = (255, 255, 255, 1.0)
IMAGE = "image"  # a background picture: the colour behind text is unknown
_NAMED = {
    "black": (0, 0, 0),
    "white": (255, 255, 255),
    "red": (255, 0, 0),
    "green": (0, 128, 0),
    "blue": (0, 0, 255),
    "gray": (128, 128, 128),
    "grey": (128, 128, 128),
    "silver": (192, 192, 192),
    "yellow": (255, 255, 0),
    "orange": (255, 165, 0),
    "purple": (128, 0, 128),
    "navy": (0, 0, 128),
    "maroon": (128, 0, 0),
    "teal": (0, 128, 128),
    "aqua": (0, 255, 255),
    "cyan": (0, 255, 255),
    "fuchsia": (255, 0, 255),
    "magenta": (255, 0, 255),
    "lime": (0, 255, 0),
    "olive": (128, 128, 0),
    "whitesmoke": (245, 245, 245),
    "snow": (255, 250, 250),
    "ivory": (255, 255, 240),
    "ghostwhite": (248, 248, 255),
    "floralwhite": (255, 250, 240),
    "mintcream": (245, 255, 250),
    "azure": (240, 255, 255),
    "aliceblue": (240, 248, 255),
    "seashell": (255, 245, 238),
    "honeydew": (240, 255, 240),
    "lavenderblush": (255, 240, 245),
    "oldlace": (253, 245, 230),
    "linen": (250, 240, 230),
    "beige": (245, 245, 220),
    "gainsboro": (220, 220, 220),
    "lightgray": (211, 211, 211),
    "lightgrey": (211, 211, 211),
    "darkgray": (169, 169, 169),
    "darkgrey": (169, 169, 169),
    "dimgray": (105, 105, 105),
    "dimgrey": (105, 105, 105),
}
_FONT_KEYWORDS = {"xx-small": 9.0, "x-small": 10.0, "small": 13.0, "medium": 16.0, "large": 18.0, "x-large": 24.0}


def declarations(style: str | None) -> dict[str, str]:
    """`"Color: #FFF; font-size: 0 !important"` -> {"color": "#fff", "font-size": "0"} (lower case).

    Mail repeats the same style attribute hundreds of times, so short ones are parsed once; the dict returned
    is shared and must not be changed.
    """
    if not style:
        return {}
    return _declarations(style) if len(style) <= 500 else _declarations.__wrapped__(style)


@lru_cache(maxsize=1024)
def _declarations(style: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for decl in style.lower().split(";"):
        key, colon, value = decl.partition(":")
        if colon:
            found[key.strip()] = " ".join(value.replace("!important", " ").split())
    return found


class StyleSheet:
    """The simple rules of a message's `<style>` blocks, and what the rest of them leaves uncertain."""

    def __init__(self) -> None:
        self.rules: dict[str, dict[str, str]] = {}
        self.toggled: set[str] = set()  # classes a conditional (@media) rule shows again
        self.loose_colours = False  # a rule we cannot match sets a colour or a background
        self.tags: set[str] = set()  # tags with a rule of their own (elements without attributes need a lookup)
        self._chars = self._count = 0

    def add(self, css: str) -> None:
        css = _strip_comments(css[: max(0, MAX_SHEET_CHARS - self._chars)].lower())
        self._chars += len(css)
        depth, start, conditional_depth = 0, 0, 0
        for match in re.finditer(r"[{}]", css):
            if match.group() == "{":
                prelude = css[start : match.start()].rsplit(";", 1)[-1].strip()
                depth += 1
                if prelude.startswith(("@media", "@supports", "@document", "@container")):
                    conditional_depth = conditional_depth or depth
                elif prelude.startswith("@"):
                    conditional_depth = conditional_depth or depth  # @font-face, @keyframes: never hide text
                else:
                    self._selectors(prelude, match.end(), css, conditional=bool(conditional_depth))
            else:
                if depth == conditional_depth:
                    conditional_depth = 0
                depth = max(0, depth - 1)
            start = match.end()

    def _selectors(self, prelude: str, body_start: int, css: str, *, conditional: bool) -> None:
        end = css.find("}", body_start)
        decls = declarations(css[body_start : end if end >= 0 else len(css)])
        if not decls or self._count >= MAX_RULES:
            return
        self._count += 1
        for selector in prelude.split(","):
            selector = selector.strip()
            if conditional:
                tail = _trailing_class(selector)
                if tail and _shows(decls):
                    self.toggled.add(tail)
                continue
            key = _simple_key(selector)
            if key is None:
                self.loose_colours = self.loose_colours or not _COLOUR_KEYS.isdisjoint(decls)
                tail = _trailing_class(selector)
                if tail and decls.get("display", "none") != "none":  # `#menu:checked ~ .panel`: interactive
                    self.toggled.add(tail)
                continue
            self.rules.setdefault(key, {}).update(decls)
            if key[0] not in ".#":
                self.tags.add(key.split(".", 1)[0])

    def applies(self, tag: str, attrs: dict[str, str]) -> bool:
        return bool(self.rules) and (tag in self.tags or "*" in self.tags or "class" in attrs or "id" in attrs)

    def matching(self, tag: str, attrs: dict[str, str]) -> dict[str, str]:
        """Declarations of the simple rules that match an element, the most specific last (winning)."""
        merged: dict[str, str] = {}
        classes = attrs.get("class", "").lower().split()[:16]
        keys = ["*", tag, *(f".{c}" for c in classes), *(f"{tag}.{c}" for c in classes)]
        if attrs.get("id"):
            keys.append("#" + attrs["id"].lower())
        for key in keys:
            rule = self.rules.get(key)
            if rule:
                merged.update(rule)
        return merged

    def is_toggled(self, attrs: dict[str, str]) -> bool:
        return bool(self.toggled) and any(c in self.toggled for c in attrs.get("class", "").lower().split())


def _strip_comments(css: str) -> str:
    parts, pos = [], 0
    while True:
        start = css.find("/*", pos)
        if start < 0:
            parts.append(css[pos:])
            return "".join(parts)
        parts.append(css[pos:start])
        end = css.find("*/", start + 2)
        if end < 0:
            return "".join(parts)
        pos = end + 2


def _trailing_class(selector: str) -> str | None:
    """The last class of the element a selector picks: `.body .mobile:hover` -> `mobile`."""
    compound = _COMBINATOR.split(selector.strip())[-1]
    classes = _CLASS_IN.findall(compound)
    return (classes[-1][0] or classes[-1][1]) if classes else None


def _simple_key(selector: str) -> str | None:
    if selector.startswith("#"):
        match = _ID.fullmatch(selector)
        return f"#{match.group(1)}" if match else None
    match = _SIMPLE.fullmatch(selector)
    if not match or not selector:
        return None
    tag, cls = match.group(1), match.group(2)
    if cls:
        return f"{tag}.{cls}" if tag and tag != "*" else f".{cls}"
    return tag


def _shows(decls: dict[str, str]) -> bool:
    display = decls.get("display")
    return (
        (display is not None and display != "none")
        or decls.get("visibility") == "visible"
        or any(key in decls and decls[key] not in ("0", "0px") for key in ("max-height", "height", "font-size"))
    )


# -- values --------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1024)
def parse_colour(value: str | None) -> Colour | None:
    """A CSS colour (`#fff`, `#ffffffcc`, `rgb(1,2,3)`, `rgba(1 2 3 / 50%)`, a common name); None if unknown."""
    if not value:
        return None
    value = value.strip().lower()
    if value == "transparent":
        return (0, 0, 0, 0.0)
    named = _NAMED.get(value)
    if named:
        return (*named, 1.0)
    hex_match = _HEX.fullmatch(value)
    if hex_match:
        digits = hex_match.group(1)
        if len(digits) in (3, 4):
            digits = "".join(ch * 2 for ch in digits)
        if len(digits) not in (6, 8):
            return None
        alpha = int(digits[6:8], 16) / 255 if len(digits) == 8 else 1.0
        return (int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16), alpha)
    func = _FUNC.fullmatch(value)
    if func:
        numbers = [n for n in re.split(r"[\s,/]+", func.group(1).strip()) if n]
        try:
            channels = [round(float(n[:-1]) * 2.55) if n.endswith("%") else round(float(n)) for n in numbers[:3]]
            alpha = 1.0
            if len(numbers) > 3:
                alpha = float(numbers[3][:-1]) / 100 if numbers[3].endswith("%") else float(numbers[3])
        except ValueError:
            return None
        if len(channels) == 3:
            r, g, b = (min(255, max(0, c)) for c in channels)
            return (r, g, b, min(1.0, max(0.0, alpha)))
    return None


def background_of(decls: dict[str, str], attrs: dict[str, str]) -> Colour | str | None:
    """The background an element paints: a colour, IMAGE (unknown colour), or None (it paints none)."""
    image = decls.get("background-image")
    if attrs.get("background") or (image and image != "none"):
        return IMAGE
    shorthand = decls.get("background", "")
    if "url(" in shorthand or "gradient(" in shorthand:
        return IMAGE
    colour = parse_colour(decls.get("background-color")) or _first_colour(shorthand)
    if colour is None and attrs.get("bgcolor"):
        colour = parse_colour(attrs["bgcolor"]) or parse_colour("#" + attrs["bgcolor"].strip().lstrip("#"))
    if colour is None and ("background-color" in decls or shorthand):
        return None if decls.get("background-color", shorthand) in ("inherit", "none", "initial") else IMAGE
    if colour is not None and colour[3] < 1.0:
        return None if colour[3] == 0 else IMAGE  # see-through: transparent shows its parent, partial is unknown
    return colour


def _first_colour(shorthand: str) -> Colour | None:
    for token in re.findall(r"rgba?\([^)]*\)|#[0-9a-f]+|[a-z]+", shorthand):
        colour = parse_colour(token)
        if colour is not None:
            return colour
    return None


@lru_cache(maxsize=1024)
def length_px(value: str | None, parent_px: float = 16.0) -> float | None:
    """A CSS length in pixels (`0`, `1px`, `8pt`, `0.1em`, `50%`, `small`); None when not a plain length."""
    if not value:
        return None
    value = value.strip()
    if value in _FONT_KEYWORDS:
        return _FONT_KEYWORDS[value]
    match = _LENGTH.fullmatch(value)
    if not match:
        return None
    number, unit = float(match.group(1)), match.group(2) or "px"
    scale = {"px": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 37.8, "mm": 3.78, "rem": 16.0, "vw": 4.0}
    if unit in ("em", "ex", "ch"):
        return number * parent_px * (1.0 if unit == "em" else 0.5)
    if unit == "%":
        return number * parent_px / 100
    return number * scale.get(unit, 8.0)


def colours_match(text: Colour, background: Colour) -> bool:
    """Text a person cannot read on its background: every channel within a few steps of it."""
    return max(abs(a - b) for a, b in zip(text[:3], background[:3], strict=True)) <= 20
