"""Corpus cases found on real-world mail after the first corpus: a multipart/related whose root is not first, and
Outlook's winmail.dat (TNEF) as the whole message. Expectation keys: see corpus_text.py."""

from __future__ import annotations

from server.tests.data.corpus_mime import PNG_1PX, Case, message, multipart, part


def related_cases() -> list[Case]:
    return [
        Case(
            "related-image-first",
            "related; type=text/html with the image first and the HTML second (RFC 2387: type names the root)",
            message(
                "related-image-first",
                multipart(
                    "related",
                    [
                        part(
                            PNG_1PX,
                            "image/png",
                            cte="base64",
                            headers=(("Content-ID", "<sig@corp>"), ("Content-Disposition", "inline")),
                        ),
                        part(
                            '<html><body><p>The signed contract is attached.</p><img src="cid:sig@corp"></body></html>',
                            "text/html",
                            charset="utf-8",
                        ),
                    ],
                    params='; type="text/html"',
                ),
                subject="image first",
            ),
            {
                "contains": ["The signed contract is attached."],
                "source": "text/html",
                "attachments": [["attachment-0.png", "image/png", True]],
            },
        ),
    ]


def more_cases() -> list[Case]:
    return related_cases()
