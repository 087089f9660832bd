"""HTML -> text for mail (server/content/text/html_text.py, server/content/text/html_links.py)."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from server.content.text.html_links import link_suffix
from server.content.text.html_text import html_to_text, tidy_text

NEWSLETTER = """<!DOCTYPE html>
<html><head><title>Weekly Digest</title>
<meta charset="utf-8"><link rel="stylesheet" href="x.css">
<style type="text/css">.hide { display:none } body { font-family: Arial; } p { margin: 0 0 1em; }</style>
<script>var tracking = "<p>not text</p>"; document.write("nope");</script>
</head>
<body style="margin:0">
<div style="display:none;font-size:1px;color:#fff;line-height:1px;max-height:0;max-width:0;opacity:0;overflow:hidden;
 mso-hide:all">This week: three stories you should read&zwnj;&nbsp;&zwnj;&nbsp;&#847;&zwnj;&nbsp;&zwnj;&nbsp;</div>
<table role="presentation" width="100%" cellpadding="0"><tr><td align="center">
  <table width="600"><tr><td><img src="https://cdn.example.com/logo.png" alt="ACME Weekly" width="200"></td></tr>
  <tr><td>
    <h1>Top stories</h1>
    <p>Hello&nbsp;Ann, here is <b>what's new</b> &amp; noteworthy.</p>
    <ul><li>Launch of <a href="https://acme.example.com/launch?utm_source=newsletter&amp;utm_medium=email">the
    rocket</a></li><li>New office in Berlin</li></ul>
    <table border="1"><tr><th>Product</th><th>Price</th></tr>
      <tr><td>Widget</td><td>&euro;5.00</td></tr><tr><td>Gadget</td><td>$7</td></tr></table>
    <p><a href="https://click.mailer.example.com/ls/click?upn=AbCdEf123">Read more</a></p>
  </td></tr>
  <tr><td style="font-size:12px">You received this because you subscribed.
    <a href="mailto:unsubscribe@acme.example.com">Unsubscribe</a></td></tr></table>
</td></tr></table>
<img src="https://t.example.com/open?id=123" width="1" height="1" alt="" style="display:block">
<noscript>Please enable JavaScript</noscript>
<!--[if mso]><p>Outlook-only fallback</p><![endif]-->
</body></html>"""


def test_newsletter_becomes_clean_text() -> None:
    text = html_to_text(NEWSLETTER)
    assert text == (
        "ACME Weekly\n\n"
        "Top stories\n\n"
        "Hello Ann, here is what's new & noteworthy.\n\n"
        "- Launch of the rocket (https://acme.example.com/launch)\n"
        "- New office in Berlin\n"
        "Product | Price\n"
        "Widget | €5.00\n"
        "Gadget | $7\n\n"
        "Read more\n\n"
        "You received this because you subscribed. Unsubscribe"
    )


@pytest.mark.parametrize(
    "needle",
    [
        "Weekly Digest",
        "display",
        "tracking",
        "nope",
        "font-family",
        "three stories",
        "enable JavaScript",
        "Outlook-only",
        "\u200c",
        "<",
        ">",
    ],
)
def test_newsletter_noise_is_gone(needle: str) -> None:
    assert needle not in html_to_text(NEWSLETTER)


@pytest.mark.parametrize(
    ("markup", "expected"),
    [
        ("<p>one</p><p>two</p>", "one\n\ntwo"),
        ("<div>one</div><div>two</div>", "one\ntwo"),
        ("a<br>b<br/>c<br />d", "a\nb\nc\nd"),
        ("a<br><br><br><br>b", "a\n\nb"),  # at most one blank line
        ("<p>a</p>\n\n\n<p></p><p></p><p>b</p>", "a\n\nb"),
        ("  lots   of\n\t whitespace  ", "lots of whitespace"),
        ("&lt;tag&gt; &amp; &quot;q&quot; &#x263A; &#9731; &eacute; &nbsp;x", '<tag> & "q" ☺ ☃ é x'),
        ("<h2>Title</h2>body", "Title\n\nbody"),
        ("<ol><li>one<li>two</ol>", "1. one\n2. two"),
        ('<ol start="5"><li>five</li><li>six</li></ol>', "5. five\n6. six"),
        ("<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>", "- a\n  - b\n- c"),
        ("<table><tr><td>a</td><td></td><td>b</td></tr></table>", "a | b"),  # empty spacer cells skipped
        ("<table><tr><td>a<td>b<tr><td>c<td>d</table>", "a | b\nc | d"),  # implied closes
        (
            "<table><tr><td><p>para one</p><p>para two</p></td><td>side</td></tr></table>",
            "para one\n\npara two\n\nside",
        ),  # layout table: cells stay blocks
        ("<pre>  keep\n    this   spacing</pre>", "keep\n    this   spacing"),
        ("<blockquote>quoted<br>lines</blockquote>after", "> quoted\n> lines\n\nafter"),
        ("<p>x<p>y", "x\n\ny"),
        ("a</p>b", "a\n\nb"),
        ("a</br>b", "a\nb"),
        ("<b>bold</b><i>it</i> <span>sp</span>", "boldit sp"),
        ("<img alt='Logo'> text <img src=x.png>", "Logo text"),
        ("<p>Hello <!-- a comment --> world</p>", "Hello world"),
        ("<![CDATA[x]]>y<?php echo 1 ?>z", "yz"),
        ("1 < 2 and 3 > 2", "1 < 2 and 3 > 2"),
        ("<div title='a>b'>attr with &gt;</div>", "attr with >"),
        ("<p>unclosed <b>bold <i>italic", "unclosed bold italic"),
        ("</div></span>stray end tags</table>", "stray end tags"),
        ("before <!-- never closed", "before"),
        ("<SCRIPT>alert(1)</SCRIPT >Shout<STYLE>p{}</STYLE>", "Shout"),
        ("<script>unterminated", ""),
        ("<textarea>form</textarea><select><option>opt</select><button>Click</button>", "Click"),
        ("<head><title>T</title></head><body>B</body>", "B"),
        ("<head><meta charset=utf-8><p>no closing head", "no closing head"),
        ("<svg><text>drawn</text></svg>visible", "visible"),
        ("<dl><dt>term<dd>definition</dl>", "term\ndefinition"),
        ("", ""),
    ],
)
def test_html_to_text(markup: str, expected: str) -> None:
    assert html_to_text(markup) == expected


@pytest.mark.parametrize(
    "hidden",
    [
        '<div style="display:none">SECRET</div>',
        '<div style="DISPLAY: NONE !important">SECRET</div>',
        '<span style="visibility:hidden">SECRET</span>',
        "<p hidden>SECRET</p>",
        '<div style="max-height:0px;overflow:hidden">SECRET</div>',
        '<div style="opacity:0">SECRET</div>',
        '<table><tr><td style="display:none"><table><tr><td>SECRET</td></tr></table></td><td>shown</td></tr></table>',
        '<img src="p.gif" width="1" height="1" alt="SECRET">',
        '<img src="p.gif" width="0" alt="SECRET">',
        '<img src="p.gif" style="width:1px;height:1px" alt="SECRET">',
        '<a href="https://example.com" style="display:none">SECRET</a>',
    ],
)
def test_hidden_content_and_pixels_are_dropped(hidden: str) -> None:
    text = html_to_text(f"<p>before</p>{hidden}<p>after</p>")
    assert "SECRET" not in text and "before" in text and "after" in text


def test_hidden_element_closed_by_implied_end() -> None:
    assert html_to_text('<ul><li style="display:none">hidden<li>shown</ul>') == "- shown"


def test_mso_hide_alone_is_visible_text() -> None:
    # mso-hide:all hides only in Outlook for Windows; Gmail and every other reader show the text.
    assert html_to_text('<p>before</p><div style="mso-hide:all">Shown in Gmail</div>') == "before\n\nShown in Gmail"


def test_font_size_zero_containers_are_not_hidden() -> None:
    # Responsive mails set font-size:0 on wrappers and restore it on children: the text is visible.
    assert html_to_text('<td style="font-size:0"><div style="font-size:14px">visible</div></td>') == "visible"


@pytest.mark.parametrize(
    ("href", "text", "expected"),
    [
        ("https://example.com/docs/page", "the docs", "https://example.com/docs/page"),
        ("https://example.com/", "example.com", None),  # text already is the URL
        ("https://www.example.com/path", "https://example.com/path", None),
        ("https://example.com/a?utm_source=x&utm_medium=y&id=3#top", "page", "https://example.com/a?id=3#top"),
        ("https://example.com/a?utm_campaign=x", "page", "https://example.com/a"),
        ("mailto:ann@example.com", "Ann", None),
        ("javascript:void(0)", "click", None),
        ("tel:+123", "call", None),
        ("#section", "jump", None),
        ("/relative/path", "rel", None),
        ("https://click.mailer.example.com/abc", "tracked", None),
        ("https://u123.ct.sendgrid.net/ls/click?upn=x", "tracked", None),
        ("https://example.us1.list-manage.com/track/click?u=1", "tracked", None),
        ("https://t.me/channel", "Telegram", "https://t.me/channel"),  # not a tracker: only two labels
        ("https://example.com/" + "x" * 400, "long", None),
        ("https://example.com/x", "", None),
    ],
)
def test_link_suffix(href: str, text: str, expected: str | None) -> None:
    assert link_suffix(href, text) == expected


def test_links_in_context() -> None:
    markup = (
        '<p>See <a href="https://docs.example.com/guide">the guide</a>, '
        '<a href="https://docs.example.com/guide">docs.example.com/guide</a> and '
        '<a href="https://example.com"><img src="l.png" alt="our logo"></a>'
        '<a href="https://example.com/img"><img src="l.png"></a>.</p>'
    )
    assert html_to_text(markup) == (
        "See the guide (https://docs.example.com/guide), docs.example.com/guide and our logo (https://example.com)."
    )


def test_tidy_text() -> None:
    raw = "a  \t\r\nb\u00ad\u034f\ufeff\r\n\n\n\n\u200c \u200c \u200c c\u200dd  \n"
    assert tidy_text(raw) == "a\nb\n\n c\u200dd"


# -- hostile input: must complete (no timing asserts) and stay sane --------------------------------------------


@pytest.mark.slow  # megabytes of repeated markup: the slow tier
@pytest.mark.parametrize(
    "unit",
    [
        "<a",
        "<!--",
        "<",
        '<a b="',
        "</a ",
        "&#",
        "<div>",
        "<td>",
        "<li>",
        "<ul><li>",
        "<p>",
        "<table><tr><td>",
        "<a href='https://x.com/'>t",
        "<span style='display:none'>",
        "<tr>",
    ],
)
def test_hostile_repetition_completes(unit: str) -> None:
    result = html_to_text(unit * (1_000_000 // len(unit)))
    assert isinstance(result, str)


@pytest.mark.slow  # deeply nested markup: the slow tier
def test_deep_nesting_does_not_recurse() -> None:
    deep = "<div><span>" * 100_000 + "core" + "</span></div>" * 100_000
    assert html_to_text(deep) == "core"
    tables = "<table><tr><td>" * 5_000 + "cell" + "</td></tr></table>" * 5_000
    assert html_to_text(tables) == "cell"


@pytest.mark.slow  # multi-megabyte: the slow tier
def test_five_megabyte_newsletter_completes() -> None:
    row = '<tr><td style="padding:4px">Item <b>name</b> &amp; <a href="https://example.com/p">more</a></td><td>9</td></tr>'
    text = html_to_text("<table>" + row * (5_000_000 // len(row)) + "</table>")
    assert text.startswith("Item name & more (https://example.com/p) | 9\n")


# -- properties -------------------------------------------------------------------------------------------------


@given(st.text(max_size=500))
@example('<ol start="\u00b9"><li>x')  # a superscript start: "¹".isdigit() but int("¹") raises
def test_never_raises_on_any_text(markup: str) -> None:
    assert isinstance(html_to_text(markup), str)


@given(
    st.lists(
        st.sampled_from(
            [
                "<div>",
                "</div>",
                "<p>",
                "</p>",
                "<table>",
                "<tr>",
                "<td>",
                "</td>",
                "</tr>",
                "</table>",
                "<ul>",
                "<li>",
                "</ul>",
                "<a href='https://e.com/x'>",
                "</a>",
                "<br>",
                "<b>",
                "</b>",
                "<pre>",
                "</pre>",
                "<blockquote>",
                "</blockquote>",
                "<img alt=i>",
                "<span hidden>",
                "</span>",
                "<!--",
                "-->",
                "<script>",
                "</script>",
                "text",
                " ",
                "&amp;",
                "<",
                ">",
                "<head>",
                "<title>",
                "</head>",
                "<ol>",
                "</ol>",
            ]
        ),
        max_size=80,
    )
)
def test_tag_soup_gives_tag_free_text(tokens: list[str]) -> None:
    text = html_to_text("".join(tokens))
    assert not re.search(r"<(?:div|p|table|tr|td|ul|li|a|b|pre|span|script|head|title)\b", text)
    assert "\n\n\n" not in text and text == text.strip()


@given(st.text(alphabet=st.characters(blacklist_characters="<&", blacklist_categories=("Cs",)), max_size=300))
def test_plain_text_passes_through_with_whitespace_collapsed(text: str) -> None:
    assume(not any(ch in text for ch in "\u00ad\u034f\ufeff\u200b\u200c\u200d\u2060\u180e\u061c\u115f\u1160"))
    expected = re.sub(r"[ \t\n\r\f\u00a0]+", " ", text).strip(" ")
    assert html_to_text(text) == tidy_text(expected)


@given(st.text(alphabet=st.characters(blacklist_characters="<", blacklist_categories=("Cs",)), min_size=1, max_size=50))
def test_script_and_style_content_never_leaks(secret: str) -> None:
    marker = "Zq" + secret.replace("Zq", "") + "qZ"
    text = html_to_text(f"<p>x</p><script>{marker}</script><style>{marker}</style><p>y</p>")
    assert text == "x\n\ny"
