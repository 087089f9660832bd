"""One message's security report: Gmail's authentication verdicts and the warnings the checks found.

Warning codes (stable; the detail is a short sentence for people):
    auth_failed                     Gmail's DMARC check failed, or neither SPF nor DKIM passed
    display_name_address_mismatch   the display name names another address or domain than the sender's
    reply_to_differs                Reply-To goes to another domain than From's
    hidden_text                     HTML text a reader would not see, instruction-like or long (left out of
                                    body_text)
    lookalike_domain                the sender's domain imitates a domain the message names

These are hints for an assistant and its user, not a spam filter: a clean report does not make a message safe,
and a warning does not make it malicious. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.content.message import ParsedMessage
from server.content.security.authentication import Authentication, trusted_authentication
from server.content.security.domains import email_domain, named_domains
from server.content.security.hidden_text import HiddenVerdict, judge_hidden
from server.content.security.senders import Finding, display_name_mismatch, lookalike_domain, reply_to_differs

MAX_SCANNED_BODY_CHARS = 100_000  # domains named past this are not looked for


@dataclass(frozen=True)
class SecurityReport:
    authentication: Authentication
    findings: tuple[Finding, ...]
    hidden: HiddenVerdict | None  # None when the body was not read (metadata)


def assess_message(parsed: ParsedMessage, headers: object) -> SecurityReport:
    """Run every check on a parsed message.

    Args:
        parsed: The message (`full`, or `metadata`: the body checks are then skipped).
        headers: The resource's ordered `payload.headers` (for the Authentication-Results position).

    Returns:
        The report; never raises on odd input.
    """
    auth = trusted_authentication(headers)
    findings: list[Finding] = []
    sender = parsed.from_[0] if parsed.from_ else None
    if auth.failed:
        findings.append(Finding("auth_failed", _auth_detail(auth, sender.email if sender else None)))
    hidden = None
    if parsed.body_text is not None:
        hidden = judge_hidden(parsed.hidden_text, parsed.body_text, parsed.hidden_chars)
        if hidden.suspicious:
            findings.append(Finding("hidden_text", _hidden_detail(hidden)))
    if sender is not None:
        via_list = "list-id" in parsed.headers
        for finding in (
            display_name_mismatch(sender.name, sender.email, via_list=via_list),
            reply_to_differs(
                sender.email,
                [address.email for address in parsed.reply_to],
                list_id=parsed.headers.get("list-id"),
                list_post=parsed.headers.get("list-post"),
            ),
            lookalike_domain(sender.email, sender.name, _named_hosts(parsed)),
        ):
            if finding is not None:
                findings.append(finding)
    order = ("auth_failed", "lookalike_domain", "display_name_address_mismatch", "reply_to_differs", "hidden_text")
    findings.sort(key=lambda finding: order.index(finding.code))
    return SecurityReport(auth, tuple(findings), hidden)


def _named_hosts(parsed: ParsedMessage) -> list[str]:
    sender = parsed.from_[0] if parsed.from_ else None
    text = "\n".join(
        part
        for part in (
            sender.name if sender else None,
            parsed.subject,
            (parsed.body_text or "")[:MAX_SCANNED_BODY_CHARS] if parsed.body_text is not None else parsed.snippet,
        )
        if part
    )
    hosts = named_domains(text)
    hosts.extend(parsed.link_hosts)
    hosts.extend(domain for address in parsed.reply_to if (domain := email_domain(address.email)))
    return hosts


def _auth_detail(auth: Authentication, sender: str | None) -> str:
    domain = auth.dmarc_domain or (email_domain(sender) if sender else None) or "the sender's domain"
    if auth.dmarc == "fail":
        return f"Gmail: DMARC fail for {domain} (SPF {auth.spf}, DKIM {auth.dkim}), possibly forged"
    return f"Gmail: SPF {auth.spf}, DKIM {auth.dkim}: {domain} not authenticated"


def _hidden_detail(hidden: HiddenVerdict) -> str:
    how = ", ".join(hidden.reasons[:3])
    kind = "instruction-like, " if hidden.instruction_like else ""
    return f"{hidden.chars} hidden characters ({how}), {kind}left out (include_hidden=true shows them)"
