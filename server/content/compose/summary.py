"""What the person is shown before a draft is sent, and the digest that ties their yes to exactly that draft. Pure.

The summary names the sender (the From of the draft as Gmail keeps it: who the recipients will see), every
recipient in full (To, Cc and Bcc: a hidden Bcc is exactly what a prompt-injected draft
would use), the subject, the first lines of the text the person wrote (the quoted original left out) and every
attachment. The digest is SHA-256 over the draft's raw bytes: a draft edited after the question (by the model,
or by the person in Gmail) no longer matches, so an earlier yes or code cannot send the new content.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from server.content.compose.addresses import split_address_list
from server.content.compose.quoting import split_quote
from server.content.compose.reading import read_message
from server.content.sizes import human_size

FIRST_LINES = 8
FIRST_LINES_CHARS = 600


@dataclass(frozen=True)
class DraftSummary:
    to: tuple[str, ...]
    cc: tuple[str, ...]
    bcc: tuple[str, ...]
    subject: str
    first_lines: str
    attachments: tuple[str, ...]  # "name (type, size)"
    size_bytes: int
    sender: str = ""  # the From header ("" when the draft has none yet: Gmail writes the primary address)

    @property
    def recipient_count(self) -> int:
        return len(self.to) + len(self.cc) + len(self.bcc)


def content_digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def summarize_draft(raw: bytes) -> DraftSummary:
    content = read_message(raw)
    headers = content.headers
    own_text, _plain_quote, _html_quote = split_quote(content.text)
    lines = [line.rstrip() for line in own_text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    first = "\n".join(lines[:FIRST_LINES]).strip()
    if len(first) > FIRST_LINES_CHARS:
        first = first[:FIRST_LINES_CHARS].rstrip() + "…"
    elif len([line for line in lines if line]) > FIRST_LINES:
        first += "\n…"

    def names(header: str) -> tuple[str, ...]:
        # Every entry as the header has it (decoded), valid or not: what Gmail sends to must all be shown.
        return tuple(" ".join(entry.split()) for entry in split_address_list(headers.get(header, "")))

    return DraftSummary(
        to=names("to"),
        cc=names("cc"),
        bcc=names("bcc"),
        subject=headers.get("subject", ""),
        first_lines=first,
        attachments=tuple(
            f"{item.filename} ({item.mime_type}, {human_size(len(item.data))})" for item in content.attachments
        )
        + ((f"and {content.left_out} more attachments",) if content.left_out else ()),
        size_bytes=len(raw),
        sender=" ".join(headers.get("from", "").split()),
    )


def sender_line(sender: str, account: str | None) -> str:
    """Who sends, from which account: "From: Ana <ana@alias.example> (account ana@example.com)"."""
    who = sender or (account or "the account's default address")
    return f"From: {who}" + (f" (account {account})" if account else "")


def confirmation_question(summary: DraftSummary, account: str | None = None) -> str:
    """The text the person reads before saying yes: everything that leaves the mailbox, nothing hidden, and
    who sends it from which account (`account`: its address, when known)."""
    lines = ["Send this email now?", "", sender_line(summary.sender, account)]
    lines.append("To: " + (", ".join(summary.to) or "(nobody)"))
    if summary.cc:
        lines.append("Cc: " + ", ".join(summary.cc))
    if summary.bcc:
        lines.append("Bcc (hidden from the others): " + ", ".join(summary.bcc))
    lines.append("Subject: " + (summary.subject or "(no subject)"))
    lines.append("Attachments: " + ("; ".join(summary.attachments) if summary.attachments else "none"))
    lines += ["", "Begins:", summary.first_lines or "(empty)"]
    return "\n".join(lines)
