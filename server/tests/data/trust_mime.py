"""Messages for the trust checks: how they are built, and the ordinary mail that must not be flagged.

Each message arrives the way Gmail stores it: `Delivered-To`, Gmail's `Received` (by mx.google.com) and Gmail's
`Authentication-Results` on top, then the sender's own headers. `benign_cases()` collects the patterns real
newsletters and notifications use (preheaders, tracking pixels, mobile-only blocks, MSO conditionals, dark
themes, buttons, screen-reader labels, lists, Google Docs comments); the attacks are in `trust_attacks.py`.
Pure functions of their arguments: the same bytes on every run.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.policy import SMTP

OWNER = "alex.chen@example.com"
AUTH = {
    "pass": "dkim=pass header.i=@{d} header.s=s1 header.b=Ab12Cd; spf=pass (google.com: domain of bounce@{d} "
    "designates 192.0.2.10 as permitted sender) smtp.mailfrom=bounce@{d}; dmarc=pass (p=REJECT sp=REJECT "
    "dis=NONE) header.from={d}",
    "dmarc_fail": "dkim=none; spf=softfail (google.com: domain of transitioning bounce@{d} does not designate "
    "203.0.113.9 as permitted sender) smtp.mailfrom=bounce@{d}; dmarc=fail (p=QUARANTINE sp=QUARANTINE "
    "dis=QUARANTINE) header.from={d}",
    "no_pass": "dkim=neutral (no signatures) header.i=@{d}; spf=neutral (google.com: 198.51.100.7 is neither "
    "permitted nor denied) smtp.mailfrom=bounce@{d}; dmarc=none header.from={d}",
}


@dataclass(frozen=True)
class TrustCase:
    """One message, what it is, and the warning codes it must carry (none for ordinary mail)."""

    name: str
    what: str
    raw: bytes
    expect: frozenset[str] = frozenset()
    hidden_secret: str | None = None  # hidden text that must stay out of body_text
    html: str | None = field(default=None, repr=False)


def message_id(name: str, domain: str) -> str:
    """The Message-ID `message()` gives the message called `name` from `domain` (for replies that cite it)."""
    return f"<{hashlib.sha256(name.encode()).hexdigest()[:24]}@{domain}>"


def message(
    name: str,
    sender: str,
    subject: str,
    *,
    html: str | None = None,
    text: str | None = None,
    reply_to: str | None = None,
    auth: str | None = "pass",
    headers: tuple[tuple[str, str], ...] = (),
    forged_results: str | None = None,
    attachment: tuple[str, bytes] | None = None,
    date: str = "Tue, 17 Nov 2026 17:14:00 +0000",
) -> bytes:
    """A message as Gmail stores it; `auth` picks Gmail's verdicts (None: Gmail recorded none)."""
    msg = EmailMessage(policy=SMTP)
    domain = sender.rsplit("@", 1)[-1].strip(">").strip()
    digest = hashlib.sha256(name.encode()).hexdigest()
    msg["Delivered-To"] = OWNER
    msg["Received"] = (
        f"by 2002:a05:6a10:{digest[:4]}:b0:5d1:{digest[4:8]} with SMTP id {digest[8:20]}; "
        "Tue, 17 Nov 2026 09:14:03 -0800 (PST)"
    )
    msg["Received"] = (
        f"from mail-out.{domain} (mail-out.{domain}. [192.0.2.10]) by mx.google.com with ESMTPS id "
        f"{digest[20:32]} for <{OWNER}>; Tue, 17 Nov 2026 09:14:02 -0800 (PST)"
    )
    if auth is not None:
        msg["Authentication-Results"] = "mx.google.com; " + AUTH[auth].format(d=domain)
    msg["From"] = sender
    msg["To"] = OWNER
    msg["Subject"] = subject
    msg["Date"] = date
    msg["Message-ID"] = message_id(name, domain)
    msg["X-Trust-Case"] = name  # how the tests find a case in the emulator
    if reply_to:
        msg["Reply-To"] = reply_to
    if forged_results:
        msg["Authentication-Results"] = forged_results
    for key, value in headers:
        msg[key] = value
    if html is not None and text is not None:
        msg.set_content(text)
        msg.add_alternative(html, subtype="html")
    elif html is not None:
        msg.set_content(html, subtype="html")
    else:
        msg.set_content(text or "")
    if attachment is not None:
        msg.add_attachment(attachment[1], maintype="text", subtype="plain", filename=attachment[0])
    return msg.as_bytes()


def _case(name: str, what: str, sender: str, subject: str, **kwargs: object) -> TrustCase:
    return TrustCase(name, what, message(name, sender, subject, **kwargs), html=kwargs.get("html"))  # type: ignore[arg-type]


PADDING = "&zwnj;&nbsp;" * 60 + "&#847; " * 40
MAILCHIMP = f"""<!doctype html><html><head><meta charset="UTF-8"><title>*|MC:SUBJECT|*</title>
<style type="text/css">
p{{margin:10px 0;padding:0;}} table{{border-collapse:collapse;}} #bodyTable{{background-color:#FAFAFA;}}
.mcnTextContent{{color:#202020;font-family:Helvetica;font-size:16px;line-height:150%;}}
#templateFooter .mcnTextContent{{color:#656565;font-size:12px;}}
.mcnButtonContentContainer{{background-color:#2BAADF;}}
.mcnButton{{color:#FFFFFF;}}
@media only screen and (max-width: 480px){{ .mcnTextContent{{font-size:18px !important;}} }}
@media (prefers-color-scheme: dark){{ #bodyTable{{background-color:#121212 !important;}} }}
</style></head>
<body><span class="mcnPreviewText" style="display:none; font-size:0px; line-height:0px; max-height:0px;
max-width:0px; opacity:0; overflow:hidden; visibility:hidden; mso-hide:all;">Our autumn menu is here: pumpkin
soup, apple tart and a new cider list{PADDING}</span>
<center><table id="bodyTable" width="100%"><tr><td>
<table><tr><td class="mcnTextContent"><h1>Autumn at Café Lumière</h1>
<p>From Monday our kitchen serves the autumn menu. Book a table for your team lunch, we keep the back room free
on Fridays.</p></td></tr>
<tr><td class="mcnButtonContentContainer"><a class="mcnButton" href="https://cafe-lumiere.example/book">Book a
table</a></td></tr></table>
<table id="templateFooter"><tr><td class="mcnTextContent">You are receiving this because you signed up at our
café. <a href="https://cafe-lumiere.us1.list-manage.example/unsubscribe?u=1">Unsubscribe</a></td></tr></table>
</td></tr></table></center>
<img src="https://cafe-lumiere.us1.list-manage.example/track/open.php?u=1" height="1" width="1" alt="">
</body></html>"""

LITMUS_HYBRID = f"""<!DOCTYPE html><html lang="en" xmlns:v="urn:schemas-microsoft-com:vml"><head>
<!--[if mso]><xml><o:OfficeDocumentSettings><o:PixelsPerInch>96</o:PixelsPerInch></o:OfficeDocumentSettings></xml>
<style>td,th,div,p,a{{font-family:Segoe UI,sans-serif;}}</style><![endif]-->
<style>
.hover-bg-blue-600:hover{{background-color:#2563eb !important;}}
@media (max-width:600px){{ .sm-w-full{{width:100% !important;}} .sm-px-24{{padding-left:24px !important;}} }}
</style></head>
<body style="margin:0;width:100%;padding:0;word-break:break-word;background-color:#eceff1;">
<div style="display:none;">Your November invoice for Phoenix hosting is ready: $1,240.00 due Dec 1{PADDING}</div>
<div role="article" aria-roledescription="email" lang="en">
<table style="width:100%" cellpadding="0" cellspacing="0" role="presentation"><tr>
<td align="center" style="background-color:#eceff1;">
<table class="sm-w-full" style="width:600px;" cellpadding="0" cellspacing="0" role="presentation">
<tr><td style="font-size:0;text-align:center;">
<!--[if mso]><table role="presentation" width="100%"><tr><td style="width:300px;" valign="top"><![endif]-->
<div style="display:inline-block;width:100%;max-width:300px;vertical-align:top;">
<table style="width:100%"><tr><td style="font-size:16px;color:#263238;padding:24px;">Invoice INV-2026-1187<br>
Amount due: $1,240.00</td></tr></table></div>
<!--[if mso]></td><td style="width:300px;" valign="top"><![endif]-->
<div style="display:inline-block;width:100%;max-width:300px;vertical-align:top;">
<table style="width:100%"><tr><td style="font-size:16px;color:#263238;padding:24px;">Due date: December 1, 2026<br>
Plan: Team (12 seats)</td></tr></table></div>
<!--[if mso]></td></tr></table><![endif]-->
</td></tr>
<tr><td style="padding:24px;background-color:#ffffff;">
<!--[if mso]><v:roundrect href="https://billing.stratus.example/inv/1187" style="height:44px;width:200px;"
arcsize="10%" fillcolor="#1e88e5"><center style="color:#ffffff;">View invoice</center></v:roundrect><![endif]-->
<!--[if !mso]><!--><a href="https://billing.stratus.example/inv/1187" class="hover-bg-blue-600"
style="display:inline-block;background-color:#1e88e5;color:#ffffff;padding:12px 24px;">View invoice</a><!--<![endif]-->
<p style="font-size:12px;color:#b0bec5;">Stratus Cloud, 500 Market St, San Francisco. Questions? Reply to this
email.</p>
<span style="position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);">(opens in a new
window)</span>
</td></tr></table></td></tr></table></div></body></html>"""

MOBILE_ONLY = """<html><head><style>
.mobile-only { display:none; }
.desktop-only { display:block; }
@media only screen and (max-width: 480px) {
  .mobile-only { display:block !important; max-height:none !important; overflow:visible !important; }
  .desktop-only { display:none !important; }
}
</style></head><body>
<div style="display:none;max-height:0;overflow:hidden;">Free shipping on everything, today only.</div>
<table width="100%"><tr><td>
<div class="desktop-only"><h1>Winter boots, 30% off</h1><p>Our warmest boots are 30% off until Sunday: waterproof
leather, wool lining and a grippy sole for icy streets. Free shipping on every order, free returns for 60 days.</p>
</div>
<div class="mobile-only" style="display:none;max-height:0;overflow:hidden;mso-hide:all;">
<h1>Boots 30% off</h1><p>Waterproof leather, wool lining, grippy sole. Tap to shop the sale before it ends on
Sunday: free shipping, free returns for 60 days, and our fit guide to pick the right size on your phone.</p>
</div>
<div style="mso-hide:all;"><p>Interactive fit guide: pick your size below.</p></div>
<p style="color:#999999;font-size:11px;">Northwind Outfitters, 12 Harbor Rd. Manage preferences.</p>
</td></tr></table></body></html>"""

DARK_THEME = """<html><head><style>
.dark-bg { background-color:#0d1117; }
.wrapper td { background-color:#161b22; }
@media (prefers-color-scheme: light) { .text { color:#24292f !important; } }
</style></head><body bgcolor="#0d1117" style="background-color:#0d1117;">
<table class="dark-bg" width="100%"><tr><td style="color:#ffffff;font-size:15px;">
<h2 style="color:#ffffff;">Release 4.2 is out</h2>
<p style="color:#e6edf3;">Faster builds, a new plugin API and 40 bug fixes. Read the release notes for the full
list and the upgrade guide.</p></td></tr></table>
<table class="wrapper"><tr><td><span style="color:#f0f6fc;">Changelog highlights inside a themed panel.</span>
</td></tr></table>
<table><tr><td background="https://cdn.example.org/hero.jpg" style="background-image:url('hero.jpg');">
<h1 style="color:#ffffff;">Join us at DevConf</h1></td></tr></table>
</body></html>"""

SUBSTACK = f"""<html><body>
<div class="preview" style="display:none;font-size:1px;color:#333333;line-height:1px;max-height:0px;
max-width:0px;opacity:0;overflow:hidden;">This week: why your CI is slow, and what a cache can and cannot
fix.{PADDING}</div>
<table><tr><td><h1>Why your CI is slow</h1><p>Most pipelines spend half their time restoring caches they
never hit. We measured 400 public projects and found three patterns worth fixing first.</p>
<p style="color:#757575;font-size:12px;">© 2026 The Weekly Byte · <a href="https://weeklybyte.example/unsub">
Unsubscribe</a></p></td></tr></table>
<img src="https://email.weeklybyte.example/o/abc" width="1" height="1" style="display:block;width:1px;height:1px"
alt=""></body></html>"""

GMAIL_PERSONAL = """<div dir="ltr">Hi Alex,<div><br></div><div>Sounds good, Thursday 3pm works.</div><div><br></div>
<div>Sam</div></div><br><div class="gmail_quote"><div dir="ltr" class="gmail_attr">On Tue, Nov 17, 2026 at 9:02 AM
Alex Chen &lt;alex.chen@example.com&gt; wrote:<br></div><blockquote class="gmail_quote" style="margin:0px 0px 0px
0.8ex;border-left:1px solid rgb(204,204,204);padding-left:1ex">Can we move the sync to Thursday?</blockquote></div>
<div><span style="color:rgb(136,136,136);font-size:12px">Sam Rivera · Product</span></div>"""

RECEIPT = """<html><body style="background-color:#f6f9fc;">
<span style="color:transparent;display:none;height:0;max-height:0;max-width:0;opacity:0;overflow:hidden;
mso-hide:all;visibility:hidden;width:0;">Receipt from Bean &amp; Leaf Coffee: $14.50 paid on Nov 17</span>
<table width="100%" style="background-color:#f6f9fc;"><tr><td>
<table style="background-color:#ffffff;"><tr><td style="color:#8898aa;font-size:12px;">RECEIPT #2231-7781</td>
</tr><tr><td style="color:#32325d;font-size:16px;">Oat flat white × 2 | $9.00<br>Almond croissant | $5.50<br>
<strong>Total | $14.50</strong></td></tr>
<tr><td style="color:#ffffff;font-size:1px;line-height:1px;">&nbsp;</td></tr>
<tr><td style="color:#aab7c4;font-size:12px;">Questions? Visit beanleaf.example/help</td></tr></table>
</td></tr></table></body></html>"""


def benign_cases() -> list[TrustCase]:
    """Ordinary mail: every warning on one of these is a false positive."""
    lists = (
        ("List-Id", "Python demo project discussion <py-demo.lists.example.org>"),
        ("List-Post", "<mailto:py-demo@lists.example.org>"),
    )
    return [
        _case(
            "mailchimp",
            "preheader + padding, class rules, white button, pixel",
            "Café Lumière <news@cafe-lumiere.example>",
            "Autumn menu",
            html=MAILCHIMP,
        ),
        _case(
            "hybrid-invoice",
            "hidden preheader, font-size:0 columns, MSO/VML, screen-reader label",
            "Stratus Cloud Billing <billing@stratus.example>",
            "Your November invoice",
            html=LITMUS_HYBRID,
            text="Invoice INV-2026-1187: $1,240.00 due Dec 1.",
        ),
        _case(
            "mobile-only",
            "mobile-only duplicate block toggled by @media, mso-hide text",
            "Northwind Outfitters <deals@northwind.example>",
            "Winter boots, 30% off",
            html=MOBILE_ONLY,
        ),
        _case(
            "dark-theme",
            "white text on dark body/class/compound-rule/picture backgrounds",
            "DevTools Weekly <hello@devtools.example>",
            "Release 4.2",
            html=DARK_THEME,
        ),
        _case(
            "substack",
            "hidden preview text with padding, grey footer, pixel",
            "The Weekly Byte <newsletter@weeklybyte.example>",
            "Why your CI is slow",
            html=SUBSTACK,
        ),
        _case(
            "gmail-personal",
            "Gmail HTML reply with quote and grey signature",
            "Sam Rivera <example@gmail.com>",
            "Re: Thursday sync",
            html=GMAIL_PERSONAL,
            text="Hi Alex,\n\nSounds good, Thursday 3pm works.\n\nSam\n",
        ),
        _case(
            "receipt",
            "hidden preheader with transparent colour, white 1px spacer row",
            "Bean & Leaf Coffee <receipts@beanleaf.example>",
            "Your receipt",
            html=RECEIPT,
        ),
        _case(
            "brand-name",
            "display name is the brand's own domain",
            "Booking.com <noreply@mailer.booking.com>",
            "Your stay",
            text="Your reservation at Hotel Sakura is confirmed.",
        ),
        _case(
            "mailing-list",
            "list reply-to routed to the list",
            "Ana Souza <ana.souza@example.org>",
            "[py-demo] config loader",
            text="Proposal inside.",
            reply_to="py-demo@lists.example.org",
            headers=lists,
        ),
        _case(
            "list-via",
            "list rewrites From with 'via'",
            "'Ana Souza' via py-demo <py-demo@lists.example.org>",
            "[py-demo] Re: loader",
            text="+1",
            headers=lists,
        ),
        _case(
            "same-org-reply",
            "Reply-To on a subdomain of the sender",
            "Harbor Bank <statements@harborbank.example>",
            "Your statement",
            text="Your November statement is ready.",
            reply_to="support@help.harborbank.example",
        ),
        _case(
            "digit-brand",
            "a digit in the brand's real domain",
            "1Password <hello@1password.example>",
            "Your vault",
            text="Visit 1password.example/security for the audit.",
        ),
        _case(
            "idn-latin",
            "a German IDN domain (one script)",
            "Bäckerei Müller <info@xn--bckerei-mller-7ib0k.example>",
            "Brötchen",
            text="Frische Brötchen ab 6 Uhr.",
        ),
        _case(
            "sent-by-me",
            "mail this account sent: no Gmail verdicts",
            f"Alex Chen <{OWNER}>",
            "Notes",
            text="Notes for Thursday.",
            auth=None,
        ),
        _case(
            "docs-comment",
            "Google Docs comment: replies go to the commenter (a true 'differs')",
            "Jane Doe (Google Docs) <comments-noreply@docs.google.com>",
            "Phoenix plan",
            text="Jane Doe commented on Phoenix plan.",
            reply_to="Jane Doe <jane.doe@acme.example>",
        ),
    ]
