"""What a person reading an HTML mail does not see, decided element by element while it is converted to text.

Two kinds of hiding. An element can hide itself and everything inside (`display:none`, `visibility:hidden`,
the `hidden` attribute, opacity 0, a zero-size box that clips its overflow, off-screen positioning, a clip to
nothing). Or text can be unreadable where it stands: a font too small to see, or a colour equal to the colour
behind it; those depend on what is inherited (a child may restore the font size its wrapper set to 0, the
responsive pattern), so they are judged per text run from a `Look` carried down the element stack.

Colour judgements are conservative: only colours the message states count (default black text is never judged,
and links have their own colour), the background defaults to white only when no style rule we cannot match sets
backgrounds, and an unknown background (a picture, a see-through colour, a gradient) stops the judgement.
`mso-hide:all` alone hides only in Outlook for Windows; Gmail shows it, so it is not hiding here.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, replace
from re import Pattern
from typing import Any

from server.content.text.html_css import (
    WHITE,
    Colour,
    StyleSheet,
    background_of,
    colours_match,
    length_px,
    parse_colour,
)
from server.content.text.snippets import clean_snippet

MAX_SEGMENTS = 200  # hidden runs kept per message (all are counted)
MAX_SEGMENT_CHARS = 2_000  # text kept per run (its full length is counted)
TINY_FONT_PX = 3.0  # below this a glyph is a dot: nobody reads it
OFF_SCREEN_PX = -500.0
_PIXEL = {"0", "1", "0px", "1px"}
_HIDING_KEYS = frozenset(
    [
        "display",
        "visibility",
        "opacity",
        "overflow",
        "overflow-y",
        "transform",
        "left",
        "top",
        "right",
        "margin-left",
        "margin-top",
        "text-indent",
        "clip",
        "clip-path",
    ]
)
_BACKGROUND_KEYS = frozenset(("background", "background-color", "background-image"))
_FONT_SIZE_ATTR = {"1": 10.0, "2": 13.0, "3": 16.0, "4": 18.0, "5": 24.0, "6": 32.0, "7": 48.0}


def parse_attrs(src: str, pattern: Pattern[str]) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for match in pattern.finditer(src):
        value = match.group(2) if match.group(2) is not None else match.group(3)
        value = value if value is not None else match.group(4) or ""
        attrs.setdefault(match.group(1).lower(), html.unescape(value) if "&" in value else value)
    return attrs


def hidden_reason(decls: dict[str, str], attrs: dict[str, str]) -> str | None:
    """Why an element hides itself and all it holds, or None when it does not."""
    if "hidden" in attrs:
        return "hidden attribute"
    if not decls or _HIDING_KEYS.isdisjoint(decls):
        return None
    if decls.get("display") == "none":
        return "display:none"
    if decls.get("visibility") in ("hidden", "collapse"):
        return "visibility:hidden"
    opacity = decls.get("opacity")
    if opacity is not None and _number(opacity, 1.0) <= 0.05:
        return "opacity:0"
    if decls.get("overflow", decls.get("overflow-y", "")) in ("hidden", "clip") and any(
        _at_most(decls.get(key), 1.0) for key in ("max-height", "height", "max-width", "width")
    ):
        return "zero-size box"
    if "scale(0)" in decls.get("transform", "").replace(" ", ""):
        return "zero-size box"
    if any(_at_most(decls.get(key), OFF_SCREEN_PX) for key in ("left", "top", "margin-left", "margin-top")):
        return "off-screen"
    if _at_most(decls.get("text-indent"), OFF_SCREEN_PX) or _at_most(decls.get("right"), OFF_SCREEN_PX):
        return "off-screen"
    clip = decls.get("clip", "").replace(" ", "").replace(",", "")
    if decls.get("position") in ("absolute", "fixed") and (
        clip.startswith("rect(0") and clip in ("rect(0000)", "rect(0px0px0px0px)", "rect(1px1px1px1px)")
    ):
        return "clipped"
    if decls.get("clip-path", "").replace(" ", "") in ("inset(50%)", "inset(100%)", "circle(0)", "polygon(000000)"):
        return "clipped"
    return None


def is_pixel(decls: dict[str, str], attrs: dict[str, str]) -> bool:
    sizes = (attrs.get("width", ""), attrs.get("height", ""), decls.get("width", ""), decls.get("height", ""))
    return any(size.strip().lower() in _PIXEL for size in sizes)


def _number(value: str, default: float) -> float:
    try:
        return float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        return default


def _at_most(value: str | None, limit: float) -> bool:
    px = length_px(value) if value else None
    return px is not None and px <= limit


# -- inherited look ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Look:
    """What text inside an element inherits: font size, stated text colour, the background behind it."""

    font_px: float = 16.0
    colour: Colour | None = None  # None: not stated (the reader's default), never judged
    colour_depth: int = -1  # depth in the element stack of the element that stated the colour
    background: Colour | str | None = None  # None: nothing painted yet (the page), IMAGE: unknown


PAGE = Look()


def next_look(parent: Look, tag: str, decls: dict[str, str], attrs: dict[str, str], depth: int) -> Look:
    """The look inside an element at `depth` of the stack; `parent` itself when the element changes nothing."""
    changes: dict[str, Any] = {}  # fields of the parent style to replace
    size = decls.get("font-size")
    if size is not None:
        px = length_px(size, parent.font_px)
        if px is not None:
            changes["font_px"] = max(0.0, px)
    elif tag == "font" and attrs.get("size", "").strip() in _FONT_SIZE_ATTR:
        changes["font_px"] = _FONT_SIZE_ATTR[attrs["size"].strip()]
    stated = decls.get("color") or (attrs.get("color") if tag == "font" else None)
    if stated is not None and stated not in ("inherit", "currentcolor"):
        changes["colour"], changes["colour_depth"] = parse_colour(stated), depth
    elif tag == "a" and parent.colour is not None:
        changes["colour"] = None  # links take the reader's link colour unless they state their own
    if "bgcolor" in attrs or "background" in attrs or not _BACKGROUND_KEYS.isdisjoint(decls):
        painted = background_of(decls, attrs)
        if painted is not None:
            changes["background"] = painted
    return replace(parent, **changes) if changes else parent


def soft_reason(look: Look, sheet: StyleSheet, depth: int) -> str | None:
    """Why text with this look, directly inside the element at `depth`, cannot be read, or None."""
    if look.font_px < TINY_FONT_PX:
        return "tiny font"
    colour = look.colour
    if colour is None:
        return None
    if colour[3] <= 0.05:
        return "transparent text"
    if sheet.loose_colours and look.colour_depth != depth:
        return None  # a rule we cannot match may restyle the element around this text
    background = look.background
    if background is None and not sheet.loose_colours:
        background = WHITE
    if not isinstance(background, tuple):
        return None  # unknown: a picture, a see-through colour, or rules we cannot match
    return "text colour matches background" if colours_match(colour, background) else None


# -- collection ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HiddenSegment:
    """One run of text a reader would not see, where it stood and why it was hidden."""

    reason: str  # how it was hidden; several, comma-separated, when adjacent hidden elements formed one run
    text: str  # whitespace collapsed, invisible padding removed, at most MAX_SEGMENT_CHARS
    chars: int  # its full length
    visible_before: int  # characters of visible text before it (a preheader has next to none)
    toggled: bool = False  # a @media rule shows it again: a mobile-only (or desktop-only) block


class HiddenCollector:
    """Gathers hidden text into runs while the converter runs.

    Hidden elements with no visible text between them form one run (so an instruction split over several hidden
    spans is read whole); a run is finished when hidden text turns up after visible text, or at the end.
    """

    def __init__(self) -> None:
        self.segments: list[HiddenSegment] = []
        self.total_chars = 0
        self._parts: list[str] = []
        self._size = 0
        self._reason = ""
        self._toggled = False
        self._before = -1
        self._open = False

    def begin(self, reason: str, visible_before: int, toggled: bool = False) -> None:
        if self._parts and (self._before != visible_before or self._toggled != toggled):
            self.flush()
        if not self._parts:
            self._reason, self._before, self._toggled = reason, visible_before, toggled
        elif reason not in self._reason.split(", "):
            self._reason += f", {reason}"
        self.separate()
        self._open = True

    def add(self, text: str) -> None:
        if not self._open:
            return
        if self._size < MAX_SEGMENT_CHARS * 2:
            self._parts.append(text)
        self._size += len(text)

    def add_soft(self, reason: str, text: str, visible_before: int) -> None:
        """Text unreadable where it stands (a tiny font, a colour like its background)."""
        if not self._open or self._before != visible_before:
            self.begin(reason, visible_before)
        self.add(text)

    def separate(self) -> None:
        if self._parts and self._parts[-1] != " ":
            self._parts.append(" ")

    def end(self) -> None:
        self._open = False

    def flush(self) -> None:
        self._open = False
        if not self._parts:
            return
        text = clean_snippet(html.unescape("".join(self._parts)).replace("\u2800", " "), MAX_SEGMENT_CHARS * 2)
        text = text or ""
        extra = max(0, self._size - MAX_SEGMENT_CHARS * 2)
        self._parts, self._size = [], 0
        if not text:
            return
        chars = len(text) + extra
        self.total_chars += chars
        if len(self.segments) < MAX_SEGMENTS:
            kept = text if len(text) <= MAX_SEGMENT_CHARS else text[:MAX_SEGMENT_CHARS] + "…"
            self.segments.append(HiddenSegment(self._reason, kept, chars, self._before, self._toggled))
