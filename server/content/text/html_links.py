"""Which link URLs are worth showing next to their text in mail converted to plain text. Pure, no I/O."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# Click-tracking redirects: opaque, long, and useless to a reader. Hosts of the big sending services, hosts like
# "click.example.com" (three labels or more), and their redirect paths.
_TRACKER = re.compile(
    r"^https?://(?:[^/?#]*\.)?(?:list-manage\.com|sendgrid\.net|mandrillapp\.com|mailgun\.org|hubspotlinks\.com"
    r"|mjt\.lu|exct\.net|rs6\.net|awstrack\.me|klclick\d*\.com|sparkpostmail\.com|cmail\d+\.com"
    r"|createsend\d*\.com|sendibt\d\.com|mlsend\.com|emltrk\.com)(?:[/?#:]|$)"
    r"|^https?://(?:click|clicks|link|links|track|tracking|trk|email|e|t|r|l|go|ablink|url\d*)\.[^/?#.]+\.[^/?#]+"
    r"|/(?:ls|wf|track)/click\b|^https?://[^/?#]*substack\.com/redirect/",
    re.I,
)
_TRACKING_PARAM = re.compile(
    r"(?:utm_\w+|mc_[ce]id|fbclid|gclid|dclid|msclkid|_hsenc|_hsmi|mkt_tok|oly_\w+|vero_\w+)$", re.I
)
_MAX_URL = 300


def link_suffix(href: str, text: str) -> str | None:
    """The URL to show after a link's text, or None when it would only be noise.

    Kept: absolute http(s) URLs, with tracking parameters (utm_*, fbclid...) removed. Dropped: mailto:,
    javascript:, tel:, relative and anchor links, click-tracking redirects, URLs over 300 characters, and URLs the
    link text already shows.

    Args:
        href: The href attribute (entities decoded).
        text: The link's visible text.

    Returns:
        The compact URL, or None.
    """
    url = href.strip()
    if not url.lower().startswith(("http://", "https://")) or not text:
        return None
    base, _, rest = url.partition("?")
    query, hash_mark, fragment = rest.partition("#")
    kept = [param for param in query.split("&") if param and not _TRACKING_PARAM.match(param.split("=", 1)[0])]
    url = base + ("?" + "&".join(kept) if kept else "") + (hash_mark + fragment if fragment else "")
    if len(url) > _MAX_URL or _TRACKER.search(url):
        return None
    shown, target = _bare(text), _bare(url)
    if shown == target or (
        " " not in shown and "." in shown and (target.startswith(shown) or shown.startswith(target))
    ):
        return None
    return url


def _bare(url: str) -> str:
    url = url.strip().lower()
    for prefix in ("https://", "http://", "mailto:"):
        url = url.removeprefix(prefix)
    return url.removeprefix("www.").rstrip("/")


def link_host(href: str) -> str | None:
    """The host an http(s) link points to (`https://Mail.Example.com/x` -> `mail.example.com`), else None."""
    href = href.strip()
    if not href.lower().startswith(("http://", "https://", "//")):
        return None
    try:
        host = urlsplit(href if not href.startswith("//") else "https:" + href).hostname
    except ValueError:
        return None
    return host.rstrip(".") if host else None
