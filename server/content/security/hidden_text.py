"""Which hidden HTML text is an ordinary mail pattern, and which is worth a warning.

Most hidden text in mail is innocent: the preheader (a line of preview text, hidden, at the very top, then the
visible mail), mobile-only or desktop-only blocks that a `@media` rule shows on the other kind of screen, copies
of visible text (the mobile layout of the same offer), screen-reader labels and spacer characters. None of that
warns. What does: hidden text that reads like instructions to an assistant (whatever its size or place), and
hidden text beyond those patterns adding up to more than a short sentence. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from server.content.text.html_visibility import HiddenSegment

PREHEADER_MAX_CHARS = 300  # preheaders are 40-150 characters; 300 leaves room for a long one
PREHEADER_MAX_VISIBLE_BEFORE = 200  # a "View in browser" line may come first
SHORT_CHARS = 40  # a label, a spacer, "Open in browser"
SHORT_RUNS_WARN_CHARS = 300  # many short hidden runs add up to a text too
UNEXPLAINED_WARN_CHARS = 120  # about a sentence of hidden text beyond the ordinary patterns
_DUPLICATE_CHECKS = 50
_MIN_REPEAT_CHARS = 20

_ADDRESSEE = r"(?:ai|a\.i\.|assistant|ai\s+agent|llm|language\s+model|chatbot|claude|chatgpt|gpt-?\d*|copilot|gemini)"
_OBJECTS = r"(?:e-?mails?|messages?|mails?|inbox|contacts|passwords?|credentials|files|documents|data|attachments)"
_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.!?\n]{0,40}?"
    r"\b(?:instructions?|prompts?|rules|guidelines|directions|directives|context)\b"
    r"|\b(?:system|developer)\s+(?:prompt|message|instructions?|override)\b"
    rf"|\b(?:you\s+are\s+(?:now\s+)?(?:an?\s+)?|act\s+as\s+(?:an?\s+)?|as\s+an?\s+){_ADDRESSEE}\b"
    rf"|\b(?:dear|attention|note\s+(?:to|for)|hey|hello|hi)\s+{_ADDRESSEE}\b"
    rf"|\b{_ADDRESSEE}\b[^.!?\n]{{0,60}}?\b(?:must|should|shall|need\s+to|has\s+to|please|do\s+not|don'?t|never|always"
    r"|immediately|are\s+instructed|is\s+instructed)\b"
    r"|\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention|reveal|show|notify|alert|warn)\b[^.!?\n]{0,30}?"
    r"\b(?:user|human|owner|recipient|anyone|them|him|her)\b"
    r"|\bwithout\s+(?:telling|informing|asking|notifying|alerting|warning)\b"
    r"|\b(?:forward|send|e-?mail|share|upload|transfer|export|copy)\b[^.!?\n]{0,40}?"
    rf"\b(?:all|every|each|the\s+user'?s|their|his|her)\b[^.!?\n]{{0,30}}?\b{_OBJECTS}\b"
    r"|\b(?:new|updated|important|additional|hidden|secret)\s+instructions?\b"
    r"|<\s*/?\s*(?:system|instructions?|assistant|user)\s*>|\[\s*/?\s*(?:system|inst|instructions?)\s*\]"
    r"|忽略(?:之前|以上|上述|前面|所有|先前)|(?:转发|轉發|发送|發送)(?:所有|全部)(?:的)?(?:邮件|郵件|信件)"
    r"|你(?:现在)?是一?个?(?:AI|人工智能|助手)",
    re.I,
)


@dataclass(frozen=True)
class HiddenVerdict:
    """How much text is hidden, and what of it is worth a warning."""

    chars: int  # all hidden text
    segments: int
    reasons: tuple[str, ...]  # how the text was hidden, most common first
    instruction_like: int  # segments that read like instructions
    unexplained_chars: int  # hidden text beyond the ordinary patterns
    suspicious: bool


def reads_like_instructions(text: str) -> bool:
    """Text addressed to an assistant or telling a reader to act on the mailbox (heuristic, English and Chinese)."""
    return _INSTRUCTION.search(text[:20_000]) is not None


def judge_hidden(segments: Iterable[HiddenSegment], visible_text: str, hidden_chars: int) -> HiddenVerdict:
    """Sort hidden runs into ordinary patterns and suspicious text.

    Args:
        segments: The hidden runs the HTML conversion collected, in document order.
        visible_text: The readable text around them (to recognise copies of visible text).
        hidden_chars: Total hidden characters (runs past the kept ones count too).

    Returns:
        The verdict; `suspicious` when a run reads like instructions or unexplained hidden text is long.
    """
    runs = list(segments)
    visible = _normal(visible_text) if runs else ""
    reasons: dict[str, int] = {}
    instruction_like = unexplained = checks = short = 0
    for run in runs:
        for reason in run.reason.split(", "):
            reasons[reason] = reasons.get(reason, 0) + run.chars
        if reads_like_instructions(run.text):
            instruction_like += 1
            continue
        if run.toggled:
            continue
        if run.chars <= SHORT_CHARS:
            short += run.chars
            continue
        if run.visible_before <= PREHEADER_MAX_VISIBLE_BEFORE and run.chars <= PREHEADER_MAX_CHARS:
            continue
        if run.chars <= 2_000 and checks < _DUPLICATE_CHECKS:
            checks += 1
            if _normal(run.text) in visible:
                continue
        unexplained += run.chars
    uncounted = max(0, hidden_chars - sum(run.chars for run in runs))  # runs past MAX_SEGMENTS
    unexplained += uncounted + (short if short >= SHORT_RUNS_WARN_CHARS else 0)
    ordered = tuple(sorted(reasons, key=lambda reason: -reasons[reason]))
    return HiddenVerdict(
        chars=hidden_chars,
        segments=len(runs),
        reasons=ordered,
        instruction_like=instruction_like,
        unexplained_chars=unexplained,
        suspicious=instruction_like > 0 or unexplained >= UNEXPLAINED_WARN_CHARS,
    )


def plain_repeats_hidden(plain_text: str, segments: Iterable[HiddenSegment], html_visible_text: str) -> bool:
    """A text/plain alternative that says what its HTML twin hides: instruction-like or long hidden runs that
    the plain part carries and the HTML does not show. The reader sees the HTML, so the HTML is the body."""
    plain = None
    visible = None
    for run in segments:
        if run.toggled or len(run.text) < _MIN_REPEAT_CHARS:
            continue
        ordinary = run.visible_before <= PREHEADER_MAX_VISIBLE_BEFORE and run.chars <= PREHEADER_MAX_CHARS
        if ordinary and not reads_like_instructions(run.text):
            continue
        plain = plain if plain is not None else _normal(plain_text)
        visible = visible if visible is not None else _normal(html_visible_text)
        probe = _normal(run.text)[:200]
        if probe in plain and probe not in visible:
            return True
    return False


def _normal(text: str) -> str:
    return " ".join(text.lower().split())
