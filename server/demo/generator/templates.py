"""Longer bodies for the demo mailbox: HTML newsletters and promotions, Gmail-style HTML, a 60 KB text.

Pure string builders; the message table in `content.py` decides which message uses which.
"""

from __future__ import annotations

import html

# --- HTML for person-to-person mail, shaped like Gmail's composer output ------------------------------------


def gmail_html(text: str) -> str:
    """The HTML alternative Gmail writes for `text`: a div per line, each quote level in a gmail_quote."""
    return _gmail_block(text) + "\n"


def _gmail_block(text: str) -> str:
    lines = text.rstrip("\n").split("\n")
    quote_at = next((i for i, line in enumerate(lines) if line.startswith(">")), len(lines))
    has_attribution = 0 < quote_at < len(lines) and lines[quote_at - 1].endswith(("wrote:", "a écrit :"))
    own = lines[: quote_at - 1 if has_attribution else quote_at]
    while own and not own[-1].strip():
        own.pop()
    divs = "".join(
        f"<div>{html.escape(line, quote=False)}</div>" if line.strip() else "<div><br></div>" for line in own
    )
    out = f'<div dir="ltr">{divs}</div>'
    if has_attribution:
        quoted = "\n".join(line[1:].removeprefix(" ") for line in lines[quote_at:] if line.startswith(">"))
        out += (
            '<br><div class="gmail_quote"><div dir="ltr" class="gmail_attr">'
            f"{html.escape(lines[quote_at - 1], quote=False)}<br></div>"
            '<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex;'
            f'border-left:1px solid rgb(204,204,204);padding-left:1ex">{_gmail_block(quoted)}</blockquote></div>'
        )
    return out


# --- HTML-only newsletter ----------------------------------------------------------------------------------

_NEWSLETTER_HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style type="text/css">
  body {{ margin: 0; padding: 0; background: #f4f4f7; }}
  .story h2 {{ font-family: Georgia, 'Times New Roman', serif; color: #1a1a2e; margin: 0 0 8px; }}
  .footer a {{ color: #888888; }}
  @media only screen and (max-width: 600px) {{ .container {{ width: 100% !important; }} }}
</style>
<script type="text/javascript">
  window.dataLayer = window.dataLayer || [];
  function track(evt) {{ window.dataLayer.push({{event: evt, issue: "{issue}"}}); }}
  track("open");
</script>
</head>
"""


def newsletter(issue: int, date: str, preheader: str, stories: list[tuple[str, str, str]]) -> str:
    """An HTML-only newsletter: nested tables, inline CSS, a style block, a script, a hidden preheader
    and a 1x1 tracking pixel, like most bulk mail."""
    title = f"The Weekly Byte #{issue}"
    rows = "\n".join(
        f'<tr><td class="story" style="padding:16px 24px;border-bottom:1px solid #eeeeee;">\n'
        f'<h2 style="font-size:20px;line-height:26px;"><a href="{url}?utm_source=newsletter&amp;utm_medium=email'
        f'&amp;utm_campaign=wb{issue}" style="color:#1a1a2e;text-decoration:none;">{html.escape(head)}</a></h2>\n'
        f'<p style="font-family:Arial,Helvetica,sans-serif;font-size:15px;line-height:22px;color:#333333;'
        f'margin:0;">{blurb}</p>\n</td></tr>'
        for head, blurb, url in stories
    )
    return (
        _NEWSLETTER_HEAD.format(title=title, issue=issue) + '<body style="margin:0;padding:0;background:#f4f4f7;">\n'
        f'<div style="display:none;max-height:0;overflow:hidden;mso-hide:all;">{html.escape(preheader)}'
        + "&nbsp;&zwnj;"
        * 12
        + "</div>\n"
        '<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" '
        'style="background:#f4f4f7;">\n<tr><td align="center" style="padding:24px 0;">\n'
        '<table class="container" role="presentation" width="600" cellpadding="0" cellspacing="0" border="0" '
        'style="background:#ffffff;border-radius:6px;">\n'
        '<tr><td style="padding:24px 24px 4px;font-family:Arial,Helvetica,sans-serif;font-size:26px;'
        f'font-weight:bold;color:#1a1a2e;">The Weekly Byte</td></tr>\n'
        '<tr><td style="padding:0 24px 16px;font-family:Arial,Helvetica,sans-serif;font-size:13px;color:#888888;">'
        f"Issue #{issue} &middot; {date} &middot; 5&nbsp;min read</td></tr>\n"
        f"{rows}\n"
        '<tr><td class="footer" style="padding:16px 24px;font-family:Arial,Helvetica,sans-serif;font-size:12px;'
        'color:#888888;">You&rsquo;re receiving this because you subscribed at weeklybyte.example.com. '
        '<a href="https://weeklybyte.example.com/unsubscribe?u=ac7731">Unsubscribe</a> &middot; '
        '<a href="https://weeklybyte.example.com/archive">Archive</a><br>'
        "The Weekly Byte &middot; 500 Market St &middot; San Francisco, CA 94105</td></tr>\n"
        "</table>\n</td></tr>\n</table>\n"
        f'<img src="https://t.weeklybyte.example.com/open.gif?u=ac7731&amp;i={issue}" width="1" height="1" '
        'alt="" style="display:block;border:0;width:1px;height:1px;">\n'
        "</body>\n</html>\n"
    )


# --- promotional mail --------------------------------------------------------------------------------------


def promo(headline: str, intro: str, items: list[tuple[str, str, str]], code: str, pixel_id: str) -> str:
    """A retailer's HTML: a product table with old and new prices, a coupon code, a tracking pixel."""
    cells = "\n".join(
        "<tr>"
        f'<td style="padding:8px 12px;font-family:Helvetica,Arial,sans-serif;font-size:15px;">{html.escape(name)}</td>'
        f'<td style="padding:8px 12px;color:#999999;text-decoration:line-through;">{was}</td>'
        f'<td style="padding:8px 12px;color:#c0392b;font-weight:bold;">{now}</td>'
        "</tr>"
        for name, was, now in items
    )
    return (
        "<html><head><style>\n  .btn { background:#2d6a4f; color:#ffffff; padding:12px 28px; "
        "border-radius:4px; text-decoration:none; }\n  td { vertical-align:top; }\n</style></head>\n"
        '<body style="margin:0;background:#ffffff;">\n'
        f'<div style="display:none;font-size:1px;color:#ffffff;line-height:1px;max-height:0px;opacity:0;">'
        f"{html.escape(intro)} Use code {code} at checkout.</div>\n"
        '<table width="100%" cellpadding="0" cellspacing="0"><tr><td align="center">\n'
        '<table width="560" cellpadding="0" cellspacing="0" style="font-family:Helvetica,Arial,sans-serif;">\n'
        '<tr><td style="padding:20px 0;"><img src="https://cdn.northwind.example.com/logo.png" width="180" '
        'height="40" alt="Northwind Outfitters"></td></tr>\n'
        f'<tr><td style="font-size:30px;font-weight:bold;color:#1b4332;padding-bottom:8px;">'
        f"{html.escape(headline)}</td></tr>\n"
        f'<tr><td style="font-size:16px;color:#333333;padding-bottom:16px;">{html.escape(intro)}</td></tr>\n'
        '<tr><td><table width="100%" cellpadding="0" cellspacing="0" style="border:1px solid #e0e0e0;">\n'
        '<tr style="background:#f1f8f4;"><th align="left" style="padding:8px 12px;">Item</th>'
        '<th align="left" style="padding:8px 12px;">Was</th><th align="left" style="padding:8px 12px;">Now</th></tr>\n'
        f"{cells}\n</table></td></tr>\n"
        f'<tr><td style="padding:20px 0;font-size:16px;">Use code <strong>{code}</strong> at checkout.</td></tr>\n'
        '<tr><td style="padding-bottom:24px;"><a class="btn" href="https://northwind.example.com/sale'
        f'?c={code}">Shop the sale</a></td></tr>\n'
        '<tr><td style="font-size:11px;color:#999999;">Northwind Outfitters, 1200 Harbor Way, Oakland, CA 94607. '
        '<a href="https://northwind.example.com/prefs" style="color:#999999;">Email preferences</a> | '
        '<a href="https://northwind.example.com/unsubscribe" style="color:#999999;">Unsubscribe</a></td></tr>\n'
        "</table>\n</td></tr></table>\n"
        f'<img src="https://click.northwind.example.com/o/{pixel_id}.gif" width="1" height="1" alt="" border="0">\n'
        "</body></html>\n"
    )


PLACEHOLDER_TEXT = (
    "View this email in your browser: https://northwind.example.com/view/{pixel_id}\n\n"
    "Northwind Outfitters | Unsubscribe: https://northwind.example.com/unsubscribe\n"
)


# --- the long message: an incident timeline of about 60 KB ---------------------------------------------------

_SERVICES = ["checkout-api", "payments-gw", "session-cache", "inventory-svc", "edge-lb", "orders-db"]
_EVENTS = [
    "p99 latency {a} ms (SLO 800 ms)",
    "error rate {b}.{c}% over 60s window",
    "connection pool exhausted: {a} waiting, 64 active",
    "health check failed on pod {svc}-7f9c{c}{b}",
    "retry storm detected: {a} retries/s from upstream",
    "cache hit ratio dropped to {b}%",
    "autoscaler added 2 replicas (now {r})",
    "circuit breaker OPEN for downstream payments-gw",
    "circuit breaker HALF-OPEN, probing",
    "GC pause {b}{c} ms on node ip-10-0-{c}-{b}",
]


def postmortem_text() -> str:
    """A realistic incident postmortem whose full timeline is about 60 KB of plain text."""
    intro = (
        "Hi all,\n\n"
        "Here is the full postmortem for the checkout outage on November 2. The short version is at the top; the\n"
        "complete machine timeline is included below because several of you asked for it. It is long.\n\n"
        "SUMMARY\n"
        "Between 14:02 and 15:19 UTC, about 38% of checkout attempts failed or timed out. The trigger was a\n"
        "config push that halved the session-cache connection pool. Retries from checkout-api then amplified the\n"
        "load until payments-gw tripped its circuit breaker. No payments were double-charged; 1,214 orders had to\n"
        "be retried by customers.\n\n"
        "IMPACT\n"
        "- 77 minutes of degraded checkout, 31 minutes of hard failures.\n"
        "- Support received 412 tickets; the status page was updated at 14:19.\n\n"
        "ROOT CAUSE\n"
        "The pool size is read from two places. The new value in the service config won over the value in the\n"
        "deployment manifest, and the review did not catch that it was per-process rather than per-host.\n\n"
        "FULL TIMELINE (UTC)\n"
    )
    lines = []
    for i in range(780):
        seconds = 14 * 3600 + 2 * 60 + i * 6
        stamp = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        svc = _SERVICES[(i * 5) % len(_SERVICES)]
        event = _EVENTS[(i * 7 + i // 11) % len(_EVENTS)].format(
            a=800 + (i * 137) % 2400, b=(i * 3) % 10, c=(i * 7) % 10, r=6 + (i * 7) % 10, svc=svc
        )
        lines.append(f"2026-11-02 {stamp}  {svc:<14}  {event}")
    outro = (
        "\nACTION ITEMS\n"
        "1. Single source of truth for pool sizes (owner: Marcus, due Nov 27).\n"
        "2. Retry budget in checkout-api: at most 10% extra load (owner: Dana, due Dec 4).\n"
        "3. Config review checklist: units and scope of every numeric change (owner: Priya, due Nov 24).\n"
        "4. Alert on cache pool saturation before latency moves (owner: Alex, due Dec 1).\n\n"
        "Thanks to everyone who jumped in on a Sunday.\n\n"
        "Marcus\n"
    )
    return intro + "\n".join(lines) + "\n" + outro
