"""Corpus cases about structure: forwarded messages, inline images, HTML-only newsletters, calendar invites,
signed and encrypted mail, missing or empty bodies, nameless attachments, deep nesting, quoted replies, and the
5 MB body (built at test time, never committed). Expectation keys: see corpus_text.py.
"""

from __future__ import annotations

from server.tests.data.corpus_mime import (
    PDF,
    PNG_1PX,
    Case,
    attachment,
    iso2022jp,
    message,
    multipart,
    part,
    raw_word,
    rfc822,
)

FWD = "---------- Forwarded message ----------"
NEWSLETTER = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>TITLE_NOT_BODY</title>
<style type="text/css">body{font-family:Arial,sans-serif} .hide{display:none} td{padding:4px}</style>
<script>var tracking = "SECRET_SCRIPT";</script>
<!--[if mso]><style>.mso{color:red}</style><![endif]-->
</head><body>
<div style="display:none;max-height:0;overflow:hidden">PREHEADER_HIDDEN &zwnj;&nbsp;&zwnj;&nbsp;&zwnj;&nbsp;</div>
<table role="presentation" width="100%" cellpadding="0"><tr><td align="center">
<table width="600"><tr><td><h1>The Weekly Byte</h1></td></tr>
<tr><td><p>Hello reader,&nbsp;here&rsquo;s what&#8217;s new &amp; notable this week.</p>
<ul><li>Python 3.13 released</li><li>Rust &lt;3 WebAssembly</li></ul>
<p><a href="https://example.com/articles/42?utm_source=newsletter&amp;utm_medium=email">Read the full story</a></p>
</td></tr>
<tr><td><table><tr><th>Plan</th><th>Price</th></tr><tr><td>Basic</td><td>$5</td></tr>
<tr><td>Pro</td><td>$15</td></tr></table></td></tr>
</table></td></tr></table>
<img src="https://t.example.com/open.gif?u=123" width="1" height="1" alt="PIXEL_ALT" style="display:block">
<p style="font-size:11px"><a href="https://example.com/unsubscribe">Unsubscribe</a></p>
</body></html>
"""
ICS = """BEGIN:VCALENDAR\r
PRODID:-//Corpus//EN\r
VERSION:2.0\r
METHOD:{method}\r
BEGIN:VTIMEZONE\r
TZID:Europe/Berlin\r
END:VTIMEZONE\r
BEGIN:VEVENT\r
UID:design-review@corpus.example.com\r
SUMMARY:Design review\\, Q2 roadmap and a very long title that is folded by the calendar\r
  server\r
DTSTART;TZID=Europe/Berlin:20240312T150000\r
DTEND;TZID=Europe/Berlin:20240312T160000\r
LOCATION:Room 4.2\\, Berlin\r
ORGANIZER;CN=Ann Example:mailto:ann@example.com\r
ATTENDEE;CN=Me;PARTSTAT=NEEDS-ACTION:mailto:me@example.com\r
BEGIN:VALARM\r
SUMMARY:ALARM_NOT_SUMMARY\r
END:VALARM\r
END:VEVENT\r
END:VCALENDAR\r
"""
INVITE = (
    "Calendar invite: Design review, Q2 roadmap and a very long title that is folded by the calendar server, "
    "starts 2024-03-12 15:00 (Europe/Berlin), ends 2024-03-12 16:00 (Europe/Berlin), location: Room 4.2, Berlin"
)
PGP_SIG = b"-----BEGIN PGP SIGNATURE-----\n\niQEzBAEBCAAdFiEE\n=abcd\n-----END PGP SIGNATURE-----\n"


def forward_cases() -> list[Case]:
    inner = message(
        "inner-1",
        multipart(
            "mixed",
            [
                multipart(
                    "alternative",
                    [
                        part("Original text from Bob: the budget is approved.\n", charset="utf-8"),
                        part(
                            "<p>Original text from Bob: the <b>budget</b> is approved.</p>",
                            "text/html",
                            charset="utf-8",
                        ),
                    ],
                ),
                attachment(PDF, "application/pdf", "budget.pdf"),
            ],
        ),
        subject="Budget approved",
        sender="Bob Builder <bob@example.com>",
        date="Mon, 04 Mar 2024 09:00:00 +0000",
    )
    jp_inner = message(
        "inner-2",
        part(iso2022jp("転送された本文です。よろしくお願いします。") + b"\n", charset="iso-2022-jp"),
        subject=raw_word(iso2022jp("打ち合わせ"), "iso-2022-jp"),
        sender="Ken <ken@example.jp>",
    )
    level2 = message(
        "inner-3",
        multipart(
            "mixed",
            [
                part("Middle message.\n"),
                rfc822(
                    message(
                        "inner-4", part("Deepest forwarded text.\n"), subject="Level 3", sender="Cy <cy@example.com>"
                    )
                ),
            ],
        ),
        subject="Level 2",
        sender="Di <di@example.com>",
    )
    return [
        Case(
            "forward-inline",
            "forwarded message/rfc822 (inline) holding alternative + its own attachment",
            message(
                "forward-inline",
                multipart("mixed", [part("FYI, see below.\n"), rfc822(inner)]),
                subject="Fwd: Budget approved",
            ),
            {
                "contains": [
                    "FYI, see below.",
                    FWD,
                    "From: Bob Builder <bob@example.com>",
                    "Subject: Budget approved",
                    "Original text from Bob: the budget is approved.",
                ],
                "absent": ["<p>"],
                "attachments": [["budget.pdf", "application/pdf", False]],
                "notes": ["forwarded message included"],
            },
        ),
        Case(
            "forward-attached-jis",
            "forwarded .eml attachment (filename) whose body is ISO-2022-JP",
            message(
                "forward-attached-jis",
                multipart(
                    "mixed",
                    [
                        part("Forwarding the Japanese mail.\n"),
                        rfc822(jp_inner, disposition='attachment; filename="original.eml"'),
                    ],
                ),
                subject="Fwd: JP",
            ),
            {
                "contains": ["Forwarding the Japanese mail.", "Subject: 打ち合わせ", "転送された本文です。"],
                "attachments": [["original.eml", "message/rfc822", False]],
            },
        ),
        Case(
            "forward-nested",
            "a forward inside a forward (rfc822 in rfc822)",
            message("forward-nested", multipart("mixed", [part("Top text.\n"), rfc822(level2)]), subject="Fwd: Fwd"),
            {
                "contains": [
                    "Top text.",
                    "Subject: Level 2",
                    "Middle message.",
                    "Subject: Level 3",
                    "Deepest forwarded text.",
                ]
            },
        ),
        Case(
            "bounce-report",
            "delivery status notification (multipart/report) returning the original",
            message(
                "bounce-report",
                multipart(
                    "report",
                    [
                        part("Delivery to bob@nowhere.example failed permanently.\n"),
                        part(
                            "Reporting-MTA: dns; mx.example.com\n\nFinal-Recipient: rfc822; bob@nowhere.example\n"
                            "Action: failed\nStatus: 5.1.1\n",
                            "message/delivery-status",
                            cte=None,
                        ),
                        rfc822(
                            message("orig", part("The original message text.\n"), subject="Hello Bob"), disposition=None
                        ),
                    ],
                    params="; report-type=delivery-status",
                ),
                subject="Undeliverable: Hello Bob",
                sender="Mail Delivery Subsystem <mailer-daemon@example.com>",
            ),
            {
                "contains": [
                    "failed permanently",
                    "Status: 5.1.1",
                    "---------- Returned message ----------",
                    "The original message text.",
                ]
            },
        ),
    ]


def html_cases() -> list[Case]:
    html_ja = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=shift_jis"></head>'
        "<body><p>髙橋様</p><p>ご注文ありがとうございます。①番の商品は明日発送します。</p></body></html>"
    )
    html_fr = '<html><head><meta charset="windows-1252"></head><body><p>Prix : 5 € — « déjà » réglé.</p></body></html>'
    return [
        Case(
            "html-newsletter",
            "HTML-only newsletter: layout tables, CSS, script, MSO comment, preheader, pixel",
            message(
                "html-newsletter",
                part(NEWSLETTER, "text/html", charset="utf-8", cte="quoted-printable"),
                subject="The Weekly Byte #42",
                sender="The Weekly Byte <news@weeklybyte.example.com>",
            ),
            {
                "source": "text/html",
                "contains": [
                    "The Weekly Byte",
                    "Hello reader, here’s what’s new & notable this week.",
                    "- Python 3.13 released",
                    "- Rust <3 WebAssembly",
                    "Read the full story (https://example.com/articles/42)",
                    "Plan | Price",
                    "Basic | $5",
                    "Pro | $15",
                    "Unsubscribe (https://example.com/unsubscribe)",
                ],
                "absent": [
                    "SECRET_SCRIPT",
                    "font-family",
                    "PREHEADER_HIDDEN",
                    "TITLE_NOT_BODY",
                    "PIXEL_ALT",
                    "open.gif",
                    "utm_source",
                    "&amp;",
                    "&nbsp;",
                    "<td",
                    "<p",
                    "mso",
                    "\u200c",
                ],
            },
        ),
        Case(
            "html-placeholder-plain",
            "alternative whose text/plain is a 'view in browser' placeholder",
            message(
                "html-placeholder-plain",
                multipart(
                    "alternative",
                    [
                        part(
                            "Your email client cannot display HTML. View this email in your browser: "
                            "https://example.com/v/1\n"
                        ),
                        part(
                            "<html><body><h2>Spring sale</h2><p>All garden tools are 30% off until Sunday.</p>"
                            "<ol><li>Rakes</li><li>Shovels</li></ol></body></html>",
                            "text/html",
                            charset="utf-8",
                        ),
                    ],
                ),
                subject="Spring sale",
            ),
            {
                "source": "text/html",
                "contains": ["Spring sale", "All garden tools are 30% off until Sunday.", "1. Rakes", "2. Shovels"],
                "absent": ["View this email in your browser"],
                "notes": ["placeholder"],
            },
        ),
        Case(
            "html-shift-jis",
            "HTML-only in Shift_JIS with CP932 characters",
            message(
                "html-shift-jis",
                part(html_ja.encode("cp932"), "text/html", charset="shift_jis", cte="base64"),
                subject="注文",
            ),
            {"source": "text/html", "contains": ["髙橋様", "①番の商品は明日発送します。"]},
        ),
        Case(
            "html-meta-charset-only",
            "HTML with no charset parameter; only <meta charset> names windows-1252",
            message(
                "html-meta-charset-only",
                part(html_fr.encode("cp1252"), "text/html", cte="quoted-printable"),
                subject="meta charset",
            ),
            {"contains": ["Prix : 5 € — « déjà » réglé."]},
        ),
        Case(
            "related-inline-images",
            "mixed [related [html with cid images, named and nameless png], pdf]",
            message(
                "related-inline-images",
                multipart(
                    "mixed",
                    [
                        multipart(
                            "related",
                            [
                                part(
                                    '<html><body><img src="cid:logo@corp" alt="ACME logo"><p>Quarterly chart below:</p>'
                                    '<img src="cid:chart@corp"></body></html>',
                                    "text/html",
                                    charset="utf-8",
                                ),
                                part(
                                    PNG_1PX,
                                    "image/png",
                                    cte="base64",
                                    headers=(
                                        ("Content-ID", "<logo@corp>"),
                                        ("Content-Disposition", 'inline; filename="logo.png"'),
                                    ),
                                ),
                                part(PNG_1PX, "image/png", cte="base64", headers=(("Content-ID", "<chart@corp>"),)),
                            ],
                            params='; type="text/html"',
                        ),
                        attachment(PDF, "application/pdf", "report.pdf"),
                    ],
                ),
                subject="inline images",
            ),
            {
                "contains": ["ACME logo", "Quarterly chart below:"],
                "attachments": [
                    ["logo.png", "image/png", True],
                    ["attachment-0.2.png", "image/png", True],
                    ["report.pdf", "application/pdf", False],
                ],
            },
        ),
    ]


def security_cases() -> list[Case]:
    return [
        Case(
            "calendar-invite",
            "alternative [plain, html, text/calendar REQUEST] plus an invite.ics attachment",
            message(
                "calendar-invite",
                multipart(
                    "mixed",
                    [
                        multipart(
                            "alternative",
                            [
                                part("You have been invited to: Design review\n"),
                                part(
                                    "<p>You have been invited to: <b>Design review</b></p>",
                                    "text/html",
                                    charset="utf-8",
                                ),
                                part(
                                    ICS.format(method="REQUEST"),
                                    "text/calendar",
                                    charset="utf-8",
                                    params="; method=REQUEST",
                                ),
                            ],
                        ),
                        attachment(ICS.format(method="REQUEST").encode(), "application/ics", "invite.ics"),
                    ],
                ),
                subject="Invitation: Design review",
            ),
            {
                "contains": ["You have been invited to: Design review"],
                "notes": [INVITE],
                "attachments": [["invite.ics", "application/ics", False]],
            },
        ),
        Case(
            "calendar-cancel-only",
            "a bare text/calendar CANCEL as the whole message (all-day event)",
            message(
                "calendar-cancel-only",
                part(
                    ICS.format(method="CANCEL")
                    .replace("DTSTART;TZID=Europe/Berlin:20240312T150000", "DTSTART;VALUE=DATE:20240312")
                    .replace("DTEND;TZID=Europe/Berlin:20240312T160000\r\n", ""),
                    "text/calendar",
                    charset="utf-8",
                    params="; method=CANCEL",
                ),
                subject="Canceled",
            ),
            {
                "source": "calendar",
                "contains": ["Calendar cancellation: Design review", "2024-03-12 (all day)"],
                "absent": ["ALARM_NOT_SUMMARY", "BEGIN:VEVENT"],
            },
        ),
        Case(
            "pgp-signed",
            "PGP/MIME multipart/signed: the text shows, the signature is noted",
            message(
                "pgp-signed",
                multipart(
                    "signed",
                    [
                        part("Signed statement: the release is good to go.\n", charset="utf-8", cte="quoted-printable"),
                        part(PGP_SIG, "application/pgp-signature", params='; name="signature.asc"', cte=None),
                    ],
                    params='; protocol="application/pgp-signature"; micalg=pgp-sha256',
                ),
                subject="signed",
            ),
            {
                "contains": ["Signed statement: the release is good to go."],
                "notes": ["signed (PGP/MIME)"],
                "attachments": [],
            },
        ),
        Case(
            "smime-signed",
            "S/MIME multipart/signed around an alternative",
            message(
                "smime-signed",
                multipart(
                    "signed",
                    [
                        multipart(
                            "alternative",
                            [part("S/MIME signed text.\n"), part("<p>S/MIME signed text.</p>", "text/html")],
                        ),
                        attachment(b"\x30\x82\x01\x00" * 8, "application/pkcs7-signature", "smime.p7s"),
                    ],
                    params='; protocol="application/pkcs7-signature"; micalg=sha-256',
                ),
                subject="smime signed",
            ),
            {"contains": ["S/MIME signed text."], "notes": ["signed (S/MIME)"], "attachments": []},
        ),
        Case(
            "pgp-encrypted",
            "PGP/MIME multipart/encrypted: says it is encrypted",
            message(
                "pgp-encrypted",
                multipart(
                    "encrypted",
                    [
                        part("Version: 1\n", "application/pgp-encrypted"),
                        part(
                            "-----BEGIN PGP MESSAGE-----\n\nhQEMA5\n=xyz\n-----END PGP MESSAGE-----\n",
                            "application/octet-stream",
                            params='; name="encrypted.asc"',
                        ),
                    ],
                    params='; protocol="application/pgp-encrypted"',
                ),
                subject="secret",
            ),
            {"source": "encrypted", "contains": ["encrypted (PGP/MIME)"], "absent": ["BEGIN PGP MESSAGE"]},
        ),
        Case(
            "smime-encrypted",
            "S/MIME application/pkcs7-mime enveloped-data: says it is encrypted",
            message(
                "smime-encrypted",
                part(
                    b"\x30\x80\x06\x09" * 32,
                    "application/pkcs7-mime",
                    cte="base64",
                    params='; smime-type=enveloped-data; name="smime.p7m"',
                    headers=(("Content-Disposition", 'attachment; filename="smime.p7m"'),),
                ),
                subject="smime secret",
            ),
            {"source": "encrypted", "contains": ["encrypted (S/MIME)"]},
        ),
        Case(
            "inline-pgp-signed",
            "inline PGP clear-signed text/plain: armor and signature dropped",
            message(
                "inline-pgp-signed",
                part("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nThe meeting is at 3pm.\n" + PGP_SIG.decode()),
                subject="inline pgp",
            ),
            {
                "contains": ["The meeting is at 3pm."],
                "absent": ["BEGIN PGP", "Hash: SHA256", "iQEz"],
                "notes": ["signed (inline PGP)"],
            },
        ),
    ]


def edge_cases() -> list[Case]:
    deep = part("Deep text at level 60.\n")
    for _ in range(59):
        deep = multipart("mixed", [deep])
    return [
        Case(
            "no-content-type",
            "no MIME-Version and no Content-Type: plain ASCII text",
            message("no-content-type", b"\nPlain old message without MIME headers.\n", subject="old", mime=False),
            {"contains": ["Plain old message without MIME headers."], "source": "text/plain"},
        ),
        Case(
            "no-content-type-8bit",
            "no Content-Type, 8-bit UTF-8 body (no charset anywhere)",
            message("no-content-type-8bit", "\nGrüße aus Köln, 你好。\n".encode(), subject="old 8bit", mime=False),
            {"contains": ["Grüße aus Köln, 你好。"]},
        ),
        Case(
            "empty-body",
            "headers only, empty body",
            message("empty-body", b"\n", subject="(empty)"),
            {"empty": True, "subject": "(empty)"},
        ),
        Case(
            "attachment-only",
            "multipart/mixed with an attachment and no text at all",
            message(
                "attachment-only", multipart("mixed", [attachment(PDF, "application/pdf", "scan.pdf")]), subject="scan"
            ),
            {"empty": True, "attachments": [["scan.pdf", "application/pdf", False]]},
        ),
        Case(
            "nameless-attachments",
            "attachments with no file name get a synthesized one",
            message(
                "nameless-attachments",
                multipart(
                    "mixed",
                    [
                        part("Two unnamed files.\n"),
                        attachment(b"\x00\x01binary", "application/octet-stream", None),
                        part(PNG_1PX, "image/png", cte="base64"),
                    ],
                ),
                subject="nameless",
            ),
            {
                "contains": ["Two unnamed files."],
                "attachments": [
                    ["attachment-1.bin", "application/octet-stream", False],
                    ["attachment-2.png", "image/png", False],
                ],
            },
        ),
        Case(
            "nesting-60",
            "60 levels of multipart/mixed around one text part",
            message("nesting-60", deep, subject="deep"),
            {"contains": ["Deep text at level 60."]},
        ),
        Case(
            "format-flowed",
            "format=flowed; delsp=yes soft breaks are joined (two spaces at word breaks)",
            message(
                "format-flowed",
                part(
                    "This paragraph was wrapped by the sen \nder's client at a fixed  \n"
                    "width.\n\n> Quoted flowed  \n> line.\n",
                    charset="utf-8",
                    params="; format=flowed; delsp=yes",
                ),
                subject="flowed",
            ),
            {
                "contains": [
                    "This paragraph was wrapped by the sender's client at a fixed width.",
                    "> Quoted flowed line.",
                ]
            },
        ),
        Case(
            "reply-quoted",
            "a Gmail reply with an attribution line and > quoted history",
            message(
                "reply-quoted",
                part(
                    "Sounds good, see you Tuesday.\n\nOn Mon, 4 Mar 2024 at 09:12, Bob Builder <bob@example.com> "
                    "wrote:\n> Shall we meet Tuesday at 10?\n>\n> Bob\n",
                    charset="utf-8",
                ),
                subject="Re: meeting",
            ),
            {"contains": ["Sounds good, see you Tuesday.", "> Shall we meet Tuesday at 10?"]},
        ),
        Case(
            "reply-outlook",
            "an Outlook reply with a From/Sent/To/Subject header block",
            message(
                "reply-outlook",
                part(
                    "Approved, thanks.\n\nFrom: Bob Builder <bob@example.com>\nSent: Monday, March 4, 2024 9:12 AM\n"
                    "To: Ann Example <ann@example.com>\nSubject: RE: budget\n\nPlease approve the budget.\n"
                ),
                subject="RE: budget",
            ),
            {"contains": ["Approved, thanks.", "Please approve the budget."]},
        ),
    ]


LARGE_END = "END OF THE LARGE BODY."


def large_case(size: int = 5 * 1024 * 1024) -> Case:
    """The 5 MB body: built when the tests run, so the repository holds no 5 MB file."""
    paragraphs = []
    total = index = 0
    while total < size:
        index += 1
        text = (
            f"Paragraph {index:06d}. The quarterly figures are in, café owners report steady trade, "
            "and the 东京 office sends greetings. " * 4
        ).strip()
        paragraphs.append(text)
        total += len(text.encode()) + 2
    body = "\n\n".join(paragraphs) + "\n\n" + LARGE_END + "\n"
    return Case(
        "large-5mb",
        "a 5 MB text/plain body (base64) for bounds and speed",
        message("large-5mb", part(body, charset="utf-8", cte="base64"), subject="large"),
        {"contains": ["Paragraph 000001. The quarterly figures", LARGE_END], "min_chars": size * 9 // 10},
    )


def structure_cases() -> list[Case]:
    return forward_cases() + html_cases() + security_cases() + edge_cases()
