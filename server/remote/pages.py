"""The pages the person sees in the browser during sign-in: the consent page and the plain error pages.

Everything shown that came from elsewhere (client names, URLs, addresses) is untrusted and goes through
`html.escape`. The pages carry no script, and forbid framing (clickjacking a consent button) and caching.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from starlette.responses import HTMLResponse

from .person import READ_SCOPE, SCOPE_PREFIX

PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Pragma": "no-cache",
    "X-Frame-Options": "DENY",
    # No `form-action`: browsers apply it to the redirects after the POST too (to Google, or Deny's to the client's
    # redirect URI, whatever its scheme), and every value on the page is escaped, so no form can be injected.
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    "Referrer-Policy": "no-referrer",
}

SCOPE_WORDS = {
    READ_SCOPE: "read and search your mail, threads, labels and attachments",
    SCOPE_PREFIX + "drafts": "create, change and delete drafts",
    SCOPE_PREFIX + "send": "send mail as you (each message still needs your confirmation)",
    SCOPE_PREFIX + "labels": "create, rename and apply labels, archive and mark messages",
    SCOPE_PREFIX + "modify": "change messages: labels, read/unread, archive",
    SCOPE_PREFIX + "trash": "move messages to the trash",
    SCOPE_PREFIX + "filters": "create and delete filters",
    SCOPE_PREFIX + "settings": "change mail settings",
}

STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em;line-height:1.5}"
    "code{word-break:break-all}button{font-size:1em;padding:.5em 1.5em;margin-right:1em}"
)


def scope_words(scope: str) -> str:
    if scope in SCOPE_WORDS:
        return SCOPE_WORDS[scope]
    return f"use the {scope.removeprefix(SCOPE_PREFIX)} tools"


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    html = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f'<meta name="viewport" content="width=device-width,initial-scale=1"><style>{STYLE}</style></head>'
        f"<body><h1>{escape(title)}</h1>{body}</body></html>"
    )
    return HTMLResponse(html, status_code=status, headers=PAGE_HEADERS)


def consent_page(
    *,
    action: str,
    request_id: str,
    csrf: str,
    client_name: str,
    client_host: str,
    client_id: str,
    by_document: bool,
    redirect_uri: str,
    scopes: Iterable[str],
) -> HTMLResponse:
    """Which client asks for which access and where the answer goes; Allow or Deny (a POST to `action`)."""
    vouched = (
        f"Its identity is published at <code>{escape(client_id)}</code> (host <strong>{escape(client_host)}</strong>)."
        if by_document
        else f"It registered itself with this server; its name is its own claim (it returns to host "
        f"<strong>{escape(client_host)}</strong>)."
    )
    items = "".join(f"<li><code>{escape(scope)}</code>: {escape(scope_words(scope))}</li>" for scope in scopes)
    body = (
        f"<p><strong>{escape(client_name)}</strong> asks to reach your Gmail through this server. {vouched}</p>"
        f"<p>It asks to:</p><ul>{items}</ul>"
        f"<p>If you allow it, you will sign in with Google next, and then return to "
        f"<code>{escape(redirect_uri)}</code>.</p>"
        f"<p>Only continue if you started this from that app just now.</p>"
        f'<form method="post" action="{escape(action)}">'
        f'<input type="hidden" name="request" value="{escape(request_id)}">'
        f'<input type="hidden" name="csrf" value="{escape(csrf)}">'
        '<button type="submit" name="decision" value="allow">Allow</button>'
        '<button type="submit" name="decision" value="deny">Deny</button>'
        "</form>"
    )
    return _page("Allow access to your Gmail?", body)


def error_page(title: str, message: str, status: int = 400) -> HTMLResponse:
    """A plain page; used wherever redirecting to the client would be unsafe (unknown client, wrong redirect)."""
    return _page(title, f"<p>{escape(message)}</p>", status)


def not_allowed_page(email: str, who: str, back_to_client: str) -> HTMLResponse:
    """The signed-in Google account is not on the allow-list; the link hands the client its `access_denied`."""
    body = (
        f"<p>You signed in with Google as <strong>{escape(email)}</strong>, which this server does not admit.</p>"
        f"<p>Who may sign in: {escape(who)}. Ask the person who runs this server to add you, or sign in again with "
        f"another Google account.</p>"
        f'<p><a href="{escape(back_to_client)}">Return to the app</a></p>'
    )
    return _page("This account may not sign in here", body, 403)
