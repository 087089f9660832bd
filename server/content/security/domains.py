"""Domains: the registrable part of a host name, punycode decoding, and the domains a piece of text names.

`registrable_domain` needs to know where public suffixes end (`amazon.co.uk` is one owner, `co.uk` is not). The
full Public Suffix List is 200 KB and changes weekly; without network access a small rule does nearly as well
for comparing two senders: a generic second level under a two-letter country code (`co.uk`, `com.au`, `ne.jp`,
`gov.cn`) is a suffix, and so are the big shared hosting suffixes (`github.io`, `herokuapp.com`), where each
subdomain belongs to someone else. Pure.
"""

from __future__ import annotations

import re
from functools import lru_cache


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_GENERIC_SECOND_LEVEL = _words(
    "co com net org edu gov ac ne or go gob mil ltd plc me sch nom info biz gen firm ind nic res web gv lg ed"
    " in mob school nhs police"
)
_SHARED_HOSTING = _words(
    "github.io gitlab.io blogspot.com herokuapp.com appspot.com web.app firebaseapp.com netlify.app vercel.app"
    " pages.dev workers.dev azurewebsites.net cloudfront.net amazonaws.com s3.amazonaws.com googleusercontent.com"
    " wixsite.com weebly.com wordpress.com myshopify.com glitch.me repl.co ngrok.io ngrok-free.app"
    " onrender.com fly.dev surge.sh sharepoint.com"
)
# Top-level domains a display name or a sentence is likely to name. Two-letter country codes are all ISO 3166
# codes (so `Node.js` or `e.g` are not domains); generic ones are the common and the phishing-popular ones.
_CC = (
    "ac ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bm bn bo br bs bt bw by bz ca cc"
    " cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz ec ee eg er es et eu fi fj fk fm fo fr ga"
    " gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo jp"
    " ke kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mg mh mk ml mm mn mo mp mq mr ms"
    " mt mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps pt pw py qa re ro"
    " rs ru rw sa sb sc sd se sg sh si sk sl sm sn so sr ss st sv sx sy sz tc td tf tg th tj tk tl tm tn to tr tt tv"
    " tw tz ua ug uk us uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw"
)
_GENERIC = (
    "com net org edu gov mil int info biz name pro app dev page cloud online site website shop store top xyz club"
    " live tech email link click support help bank money finance pay group global world news blog today space"
    " agency company services solutions digital network systems center mobi icu vip work life biz asia"
)
TLDS = _words(_CC + " " + _GENERIC)
_LABEL = r"[^\W_](?:[\w-]{0,61}[^\W_])?"
_DOMAIN = re.compile(rf"(?<![\w@.-])((?:{_LABEL}\.)+([a-z]{{2,12}}|xn--[a-z0-9-]{{2,30}}))(?![\w-]|\.[^\W_])", re.I)
_EMAIL = re.compile(rf"[\w.+'-]{{1,64}}@((?:{_LABEL}\.)+[a-z]{{2,12}})(?![\w-])", re.I)
_URL_HOST = re.compile(r"https?://([^\s/:?#<>()\[\]\"']{1,253})", re.I)
MAX_NAMED = 200
_HOST_DOT = re.compile(r"\.[^\s.]")


def normalize_host(host: str) -> str:
    """Lower case, no trailing dot, Unicode labels as punycode (`pаypal.com` -> `xn--pypal-4ve.com`)."""
    host = host.strip().rstrip(".").lower()
    if host.isascii():
        return host
    labels = []
    for label in host.split("."):
        try:
            labels.append(label.encode("idna").decode("ascii") if not label.isascii() else label)
        except UnicodeError:
            labels.append(label)
    return ".".join(labels)


def unicode_label(label: str) -> str:
    """A punycode label decoded (`xn--pypal-4ve` -> `pаypal`), or the label itself when it is not one."""
    if label.startswith("xn--"):
        try:
            return label.encode("ascii").decode("idna")
        except (UnicodeError, ValueError):
            return label
    return label


@lru_cache(maxsize=4096)
def registrable_domain(host: str) -> str:
    """The part of a host name one owner registered: `mail.paypal.co.uk` -> `paypal.co.uk`, `x.github.io` stays."""
    labels = [label for label in normalize_host(host).split(".") if label]
    if len(labels) <= 2:
        return ".".join(labels)
    if ".".join(labels[-3:]) in _SHARED_HOSTING:
        return ".".join(labels[-4:])
    last_two = ".".join(labels[-2:])
    if last_two in _SHARED_HOSTING or (len(labels[-1]) == 2 and labels[-2] in _GENERIC_SECOND_LEVEL):
        return ".".join(labels[-3:])
    return last_two


def brand_label(registrable: str) -> str:
    """The label a person reads as the name: `paypal.co.uk` -> `paypal`."""
    return registrable.split(".", 1)[0]


def email_domain(address: str) -> str | None:
    # The same senders recur across a mailbox and each is checked several times per message: their domains are
    # kept, for addresses of a possible length only (254 characters), so mail cannot fill the cache.
    return _kept_email_domain(address) if len(address) <= 254 else _email_domain(address)


def _email_domain(address: str) -> str | None:
    _, at, domain = address.rpartition("@")
    domain = domain.strip().strip(">").rstrip(".")
    return normalize_host(domain) if at and "." in domain else None


_kept_email_domain = lru_cache(maxsize=4096)(_email_domain)


def named_domains(text: str, limit: int = MAX_NAMED) -> list[str]:
    """Host names a text names: in URLs, in email addresses, and bare (`paypal.com`), first-seen order.

    A bare name counts only when its last label is a known top-level domain, so `Node.js` or `e.g.` are not
    domains. Unicode names come back in punycode.
    """
    # A dot is part of a host only when a character other than a dot or a space follows it: the dots that end
    # a sentence ("today.", "...") never are, and most snippets hold no other.
    if _HOST_DOT.search(text) is None:
        return []
    # No match crosses whitespace, and whitespace satisfies each pattern's look-arounds as a text's ends do: the
    # patterns run on the words holding such a dot only, which gives the same matches in the same order, 5x
    # faster than scanning every position of a snippet.
    words = [word for word in text.split() if "." in word and "." in word.rstrip(".")]
    found: dict[str, None] = {}
    for pattern, probe in ((_URL_HOST, "://"), (_EMAIL, "@"), (_DOMAIN, ".")):
        for word in words:
            if probe not in word:
                continue
            for match in pattern.finditer(word):
                host = match.group(1).rstrip(".").lower()
                tld = host.rsplit(".", 1)[-1]
                if pattern is _DOMAIN and tld not in TLDS and not tld.startswith("xn--"):
                    continue
                if "." in host:
                    found.setdefault(normalize_host(host), None)
                    if len(found) >= limit:
                        return list(found)
    return list(found)
