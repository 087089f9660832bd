"""Quoted reply history in mail text: find it and drop it, never the author's own text. Pure, total.

What counts as history (built for the class of input, not for one client's wording):
- an attribution ("On ... wrote:", "Il giorno ... ha scritto:", "... napisał(a):", Gmail's verbless
  "ср, 30 апр. 2025 г. в 15:19, Name <addr>:"), possibly wrapped over up to four lines, followed by ">" lines:
  the attribution and those lines go, author text after them (interleaved answers, a signature) stays;
- an attribution not followed by ">" lines (history pasted unquoted) when it is unmistakable (an address, or a
  leading date word and a time): everything from it on goes;
- a separator such as "-----Original Message-----" or "-------- Messaggio originale --------" in any of the
  usual languages, and an Outlook/Hotmail header block (From/Date/To/Subject keys in ~25 languages, bold or
  not, "De :" with French spacing): everything from it on goes;
- ">" lines at the very end.

A forwarded message ("---------- Forwarded message ---------", "Begin forwarded message:" and localized forms)
is content the sender chose to share, not history of this conversation: it is kept whole, and nothing after the
forward marker is stripped. Outlook writes forwards with the same header block as replies, so those are cut.
"""

from __future__ import annotations

import functools
import re

from server.content.text.quote_blocks import COLON as _COLON
from server.content.text.quote_blocks import MAX_LINE as _MAX_LINE
from server.content.text.quote_blocks import SPACE as _SPACE
from server.content.text.quote_blocks import TIME as _TIME
from server.content.text.quote_blocks import clean as _clean
from server.content.text.quote_blocks import forward_marker as _forward_marker
from server.content.text.quote_blocks import history_start as _history_start

# Reply verbs of attributions, Latin and Cyrillic scripts (matched as whole words), then scripts without spaces.
_VERBS = (
    r"wrote|writes|has\s+written|a\s+[ée]crit|schrieb|schreibt|geschrieben|escribi[óo]|ha\s+scritto|scrisse|"
    r"escreveu|schreef|geschreven|skrev|skriver|skrifaði|kirjoitti|kirjutas|napisa[łl]\s*\(a\)|napisa[łl]a?|"
    r"pisze|napsal\s*\(a\)|naps[aá]la?|nap[íi]sal\s*\(a\)|nap[íi]sala?|napisao|napisala|je\s+napisal(?:/a)?|"
    r"ra[šs][ėe]|rakst[īi]ja|[íi]rta|yazd[ıi]|menulis|đã\s+viết|va\s+escriure|a\s+scris|έγραψε|"
    r"написал\s*\(а\)|написала?|написав\s*\(ла\)|написав|написа|пишет|пише|написао"
)
_VERB = re.compile(
    rf"(?:(?<![^\W\d_])(?:{_VERBS})(?![^\W\d_])|写道|寫道|님이\s*작성|작성|كتب|כתב|เขียนว่า|ने\s+लिखा|نوشت)"
    rf"(?P<tail>.{{0,160}}?)(?:{_COLON}|(?<=작성)\s*$)",
    re.I,
)
_EMAIL = re.compile(r"[^\s<>()\[\]@:;,]+@[^\s<>()\[\]@:;,]+\.[^\s<>()\[\]@:;,]+")
_ANGLE_ADDRESS = re.compile(rf"<{_SPACE}*[^\s<>()\[\]@]+@[^\s<>()\[\]@]+{_SPACE}*>")
_DATE = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)|\d{1,4}[./-]\d{1,2}[./-]\d{1,4}|\d\s*[年月日년월일]")
_LEAD = re.compile(
    r"^(?:on|le|am|el|il|em|op|den|dne|dňa|dana|dnia|w\s+dniu|på|στις|pada|vào|în|в|在|\d)(?![^\W\d_])", re.I
)
# Horde/IMP and friends: "Quoting Carol <c@x>:", "Zitat von Carol <c@x>:".
# How attributions start: a lead word or a digit, or a weekday abbreviation before the date ("pon., 4", "ma 4.").
_STARTS = re.compile(rf"{_LEAD.pattern}|[^\W\d_]{{1,4}}\.?,?\s+\d", re.I)
_QUOTING = re.compile(rf"^(?:quoting|zitat von|citando|cytuję|citation de|lainaus)\s.{{1,200}}?{_COLON}", re.I)
# A line holding only a date, as Claws Mail writes above "Carol <c@x> wrote:" ("On Mon, 4 Mar 2024 09:12 +0100").
_DATE_LINE = re.compile(r"^\s*\S+\s[^:]{0,40}\d{1,2}[:.]\d{2}(?::\d{2})?(?:\s*(?:[AP]M|[+-]\d{4}|[A-Z]{2,5}))*\s*$")

# Lower-case words that stand right before the verb in some attributions (Dutch, Hungarian, Turkish, Czech...).
_ATTRIBUTION_WORDS = frozenset(["volgende", "ezt", "şunu", "sunu", "uživatel", "odesílatel", "ο/η"])

_SENTENCE_BREAK = re.compile(r"[.!?:;]\s+([^\W\d_])")
_PARENTHESIZED = re.compile(r"\([^()]*\)")


@functools.lru_cache(maxsize=16)  # a long body is read in slices (offset): each slice would re-scan it whole
def strip_quoted_reply(text: str) -> str:
    """Drop quoted reply history (see the module docstring); the author's own text is always kept.

    Interleaved replies keep their new text: only the attribution and the ">" lines go. If stripping would leave
    nothing, the text is returned unchanged.

    Args:
        text: The body text.

    Returns:
        The text without its quoted history.
    """
    if not isinstance(text, str) or not text:
        return "" if not isinstance(text, str) else text
    lines = text.split("\n")
    dropped = [False] * len(lines)
    end = len(lines)
    forwarded = False
    after_attribution = False
    index = 0
    while index < end:
        line = _clean(lines[index])
        if _quoted(line):
            dropped[index] = after_attribution
            index += 1
            continue
        if not line.strip() or len(line) > _MAX_LINE:
            index += 1
            continue
        if _forward_marker(line):
            forwarded = True
            break
        cut = _history_start(lines, index)
        if cut is not None:
            end = cut
            break
        span = _attribution(lines, index)
        if span is not None:
            start, quoted_next, strong = span
            if quoted_next:
                for at in range(start, index + 1):
                    dropped[at] = True
                after_attribution = True
            elif strong:
                end = start
                break
        index += 1
    if not forwarded:  # ">" lines at the very end of the text (not ones left at the end by a cut) go
        last = len(lines) - 1
        while last >= 0 and (not lines[last].strip() or _quoted(_clean(lines[last]))):
            dropped[last] = True
            last -= 1
    kept = _assemble(lines[:end], dropped[:end])
    return kept if kept.strip() else text


def _quoted(line: str) -> bool:
    return line.lstrip().startswith(">")


def _assemble(lines: list[str], dropped: list[bool]) -> str:
    out: list[str] = []
    gap = False  # something was dropped since the last kept line
    for line, drop in zip(lines, dropped, strict=True):
        if drop:
            gap = True
            continue
        blank = not line.strip()
        if blank and gap and (not out or not out[-1].strip()):
            continue  # where a block was taken out: no leading blank line, no double blank
        out.append(line)
        gap = gap and blank
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out).rstrip()


# -- attributions ---------------------------------------------------------------------------------------------


def _attribution(lines: list[str], index: int) -> tuple[int, bool, bool] | None:
    """If an attribution ends on line `index`: (its first line, whether ">" lines follow, whether it is
    unmistakable enough to cut unquoted history after it)."""
    line = _clean(lines[index]).rstrip()
    if not line.endswith((":", "：", "작성")):
        return None
    # A mailer may have wrapped it: walk back over continuation lines (at most three), on strong signs only
    # ("Name <" / "addr> wrote:") and also on weak ones (a long line with a date and no sentence end).
    strong = weak = index
    while strong > index - 3 and strong > 0 and _continues(_clean(lines[strong - 1]), _clean(lines[strong])) == 2:
        strong -= 1
    while weak > index - 3 and weak > 0 and _continues(_clean(lines[weak - 1]), _clean(lines[weak])):
        weak -= 1
    after = index + 1
    while after < len(lines) and not lines[after].strip():
        after += 1
    quoted_next = after < len(lines) and _quoted(_clean(lines[after]))
    verdicts = {}
    for first in range(min(weak, strong), index + 1):
        verdict = _judge(" ".join(_clean(lines[at]).strip() for at in range(first, index + 1)), quoted_next)
        if verdict is not None:
            verdicts[first] = verdict
    # The longest span that starts as attributions do ("On ...", a date, "pon., 4 ..."); else the longest one
    # held together by strong signs, so an author's line above "Carol <c@x> wrote on ...:" is never taken.
    chosen = next((first for first in verdicts if _STARTS.match(_clean(lines[first]).lstrip())), None)
    if chosen is None:
        chosen = next((first for first in verdicts if first >= strong), None)
    return None if chosen is None else (chosen, quoted_next, verdicts[chosen])


def _continues(previous: str, line: str) -> int:
    """Whether `line` is the wrapped continuation of `previous` in an attribution a mailer broke: 2 on strong
    signs, 1 on a weak one, 0 when not."""
    before, current = previous.rstrip(), line.strip()
    if not before.strip() or not current or _quoted(before) or len(before) > _MAX_LINE:
        return 0
    if before.endswith(("<", "(", "[")) or current[:1] in "<([" or "@" in current.split(" ", 1)[0]:
        return 2  # Gmail's "Name <" / "addr> wrote:" break, Apple's "Name" / "<addr> wrote:"
    verb = _VERB.match(current)
    if verb is not None and verb.start() == 0:
        return 2  # the verb alone on the last line: "wrote:", "napisał(a):"
    if current[:1].isupper() and _LEAD.match(current):
        return 0  # "On ...", "Le ...": an attribution starts here
    if _LEAD.match(before.lstrip()) and _DATE_LINE.match(before) and len(before) <= 80:
        return 2  # Claws Mail: "On Mon, 4 Mar 2024 09:12 +0100" / "Carol <c@x> wrote:"
    # A long line with a date or time and no sentence end: Gmail may have wrapped inside the name.
    dated = _TIME.search(before) or _DATE.search(before)
    return int(len(before) >= 40 and bool(dated) and not before.endswith((".", "!", "?", ":", ";", "。", "！", "？")))


def _judge(span: str, quoted_next: bool) -> bool | None:
    """None when `span` is no attribution; else whether it may cut unquoted history (True) or only ">" lines."""
    if len(span) > 400:
        return None
    has_email = _EMAIL.search(span) is not None
    has_time = _TIME.search(span) is not None
    lead = _LEAD.match(span) is not None
    verb = _VERB.search(span)
    # "On Apr 3, 2012, at 4:19 PM, bob wrote:" (Apple Mail, Sparrow): a leading date and time make the context,
    # whatever the case of the bare name before the verb.
    dated = lead and has_time and _DATE.search(span) is not None and verb is not None and _bare_name(span, verb)
    if verb is not None and _verb_context(span[: verb.start()], verb.group("tail"), named=dated):
        if has_email or (has_time and lead):
            return True
        if quoted_next and ((lead and (has_time or _DATE.search(span))) or _looks_like_name(span[: verb.start()])):
            return False
        return None
    # Gmail's verbless forms (Japanese, Russian, Hebrew, the 2017-era "2017-11-24 16:32 GMT+01:00 Name <a>:") and
    # mutt's "* Carol <c@x> [2024-03-04 09:12]:": a date or time and an "<address>", directly above the quote.
    # A sentence of prose with an address in it is no attribution: no long lower-case words outside addresses.
    dated_address = _ANGLE_ADDRESS.search(span) and span.endswith((":", "："))
    if dated_address and (has_time or _DATE.search(span)):
        words = re.findall(r"[^\W\d_]+", _ANGLE_ADDRESS.sub(" ", span))
        if not any(len(word) >= 6 and word.islower() for word in words):
            # A date and a time up front, then "Name <addr>:": Gmail's form, strong enough to cut unquoted history.
            if has_time and _DATE.search(span) and _STARTS.match(span) and _ANGLE_ADDRESS.search(span[-200:]):
                return True
            if quoted_next:
                return False
    if quoted_next and _QUOTING.match(span):
        return False
    return None


def _verb_context(prefix: str, tail: str, *, named: bool = False) -> bool:
    """Whether the words around a reply verb are an attribution's: the word before it is a name, an address or
    a date ("Carol wrote", "<c@x> napisał(a)", "09:12写道", "Uhr schrieb", "het volgende geschreven"), and what
    follows is nothing, a name, or a date with an address ("schrieb Hans <h@x>", "wrote on 03/04/2024 ..."). So
    "Ask Carol <c@x> what she wrote:" and "Here is what the customer wrote:" are the author's own lines."""
    before = prefix.split()[-1:] if prefix.strip() and not named else []
    if before:
        word = before[0].strip("\"'«»,")
        if not word:
            return True
        plausible = word[:1].isupper() or not word[:1].isalpha() or any(c in word for c in "@>)0123456789")
        if not plausible and word.lower() not in _ATTRIBUTION_WORDS:
            return False
    for match in _SENTENCE_BREAK.finditer(_PARENTHESIZED.sub("", tail)):
        if match.group(1).islower():
            return False  # "wrote: the deadline is Friday. and": a sentence goes on after the verb
    after = tail.split()
    if not after or any(c in tail for c in "@0123456789"):
        return True
    return len(after) <= 6 and (named or not after[0][:1].islower())


# Articles and pronouns (a few languages): "the server wrote", "der Server schrieb" are no writer's name.
_NOT_NAME_WORDS = (
    "the a an we i you he she they it this that our my your his her der die das ich wir le la les je nous el los il "
    "het ik jag vi"
)
_NOT_NAMES = frozenset(_NOT_NAME_WORDS.split())


def _bare_name(span: str, verb: re.Match[str]) -> bool:
    """Whether one to three words, none a pronoun or article, name the writer next to the verb after the last
    time: "..., at 4:19 PM, bob wrote:", "... um 16:19 schrieb bob:"; not "..., at 4:19 PM, the server wrote:"."""
    times = list(_TIME.finditer(span, 0, verb.start()))
    if not times:
        return False
    between = span[times[-1].end() : verb.start()].replace(",", " ").split()
    between = [word for word in between if word.lower() not in ("am", "pm", "a.m.", "p.m.", "uhr", "h")]
    words = between or verb.group("tail").replace(",", " ").split()
    return 1 <= len(words) <= 3 and not any(word.lower() in _NOT_NAMES for word in words)


def _looks_like_name(prefix: str) -> bool:
    """A name before the verb ("Carol", "On Mon, Carol Smith", "张三"): at most six tokens, none in lower case."""
    tokens = prefix.replace(",", " ").split()
    return 0 < len(tokens) <= 6 and not any(token[:1].islower() for token in tokens)
