"""Corpus cases about bytes: body charsets (right, superset, wrong and unknown labels), RFC 2047 headers,
RFC 2231 file names and transfer encodings. Expectations are written by hand, never computed by the parser.

Expectation keys (all optional; see test_content_fidelity.py): subject, from ([name, email]), to (emails),
date_iso, contains / absent (body_text substrings, both body-charset modes), contains_declared (only where Gmail's
UTF-8 conversion could not have kept the text: declared mode and raw), source (body_source), attachments
([filename, mime_type, inline] in order), notes (substrings of some note), empty (body_text == "").
"""

from __future__ import annotations

import base64

from server.tests.data.corpus_mime import (
    DOCX,
    PDF,
    Case,
    attachment,
    iso2022jp,
    message,
    multipart,
    part,
    raw_word,
    word,
)

ZH_SIMPLE = "你好，世界！这是一封测试邮件：第三季度的订单已经安排生产，预计十二月中旬发货。"
ZH_GBK_ONLY = "李堃和周喆确认了合同号 HX-2026-0815，谢谢。"  # 堃 and 喆 exist in GBK, not in GB2312
ZH_TRADITIONAL = "陳志明您好：臺北辦公室的會議改到星期三下午三點，請準時出席。"
JA_TEXT = "田中様、いつもお世話になっております。株式会社①㈱の見積書をお送りします。"
JA_SJIS = "髙橋です。①から⑩までの番号付き資料を添付しました。ｶﾀｶﾅも大丈夫です。"  # 髙 and ① are CP932-only
KO_TEXT = "안녕하세요, 김민준입니다. 회의는 목요일 오후 2시에 있습니다. 똠양꿍 먹으러 가요!"  # 똠 is CP949-only
FR_TEXT = "Ça coûte 5 € à Zürich, dit-il : « naïve idée » — c’est déjà réglé, à bientôt !"
REPORT_PCT = "%E5%A0%B1%E5%91%8A%E6%9B%B8"  # 報告書, percent-encoded UTF-8 (RFC 2231)
MIXED_UTF8 = "Grüße aus Köln — 你好 — こんにちは — 안녕 — Привет — 🎉👍🏽 — ﬁnal"


def _text_case(
    name: str, what: str, text: str, charset: str, codec: str, cte: str, subject: str, expect: dict | None = None
) -> Case:
    # "cp50221" is not a Python codec: those bytes come from corpus_mime.iso2022jp (see there why).
    data = iso2022jp(text + "\n") if codec == "cp50221" else (text + "\n").encode(codec)
    body = part(data, charset=charset, cte=cte)
    return Case(name, what, message(name, body, subject=subject), expect or {"contains": [text]})


def charset_cases() -> list[Case]:
    cases = [
        Case(
            "utf8-8bit",
            "UTF-8 text/plain sent 8bit: accents, CJK, Hangul, Cyrillic, emoji with skin tone, ligature",
            message("utf8-8bit", part(MIXED_UTF8 + "\n", charset="utf-8", cte="8bit"), subject="UTF-8 mix"),
            {"contains": [MIXED_UTF8], "source": "text/plain", "subject": "UTF-8 mix"},
        ),
        _text_case(
            "gb2312-gbk-chars",
            "GB2312 label over GBK-only characters (superset gb18030)",
            ZH_GBK_ONLY,
            "gb2312",
            "gbk",
            "base64",
            "GB2312 label",
        ),
        _text_case("gbk-qp", "GBK text, quoted-printable", ZH_SIMPLE, "gbk", "gbk", "quoted-printable", "GBK QP"),
        _text_case(
            "gb18030-4byte",
            "GB18030 with four-byte sequences (𠮷, emoji) and €",
            "吉野家的𠮷字，价格 €3，😀 好吃。",
            "gb18030",
            "gb18030",
            "base64",
            "GB18030",
        ),
        _text_case("big5", "Big5 traditional Chinese, base64", ZH_TRADITIONAL, "big5", "big5", "base64", "Big5"),
        # The emulator's stand-in for Gmail's UTF-8 conversion uses the stdlib ISO-2022-JP codec, which lacks the
        # NEC row (① ㈱): only the declared bytes carry those two characters intact.
        _text_case(
            "iso-2022-jp",
            "ISO-2022-JP 7bit with NEC specials ① ㈱ (CP50221)",
            JA_TEXT,
            "iso-2022-jp",
            "cp50221",
            "7bit",
            "JIS",
            {"contains": [JA_TEXT[:19]], "contains_declared": [JA_TEXT], "subject": "JIS"},
        ),
        _text_case(
            "shift-jis",
            "Shift_JIS label with CP932-only 髙 ① and half-width kana",
            JA_SJIS,
            "shift_jis",
            "cp932",
            "base64",
            "SJIS",
        ),
        _text_case(
            "euc-kr", "EUC-KR label with the CP949-only syllable 똠", KO_TEXT, "euc-kr", "cp949", "base64", "EUC-KR"
        ),
        _text_case(
            "ks-c-5601",
            "Outlook's ks_c_5601-1987 label, quoted-printable",
            KO_TEXT,
            "ks_c_5601-1987",
            "cp949",
            "quoted-printable",
            "KSC",
        ),
        _text_case(
            "windows-1252",
            "windows-1252 smart quotes, euro, guillemets, quoted-printable",
            FR_TEXT,
            "windows-1252",
            "cp1252",
            "quoted-printable",
            "cp1252",
        ),
        _text_case(
            "latin1-label-cp1252-bytes",
            "iso-8859-1 label over cp1252 bytes (0x80-0x9F quotes, euro)",
            FR_TEXT,
            "iso-8859-1",
            "cp1252",
            "8bit",
            "latin1 label",
        ),
        _text_case(
            "wrong-label-utf8-as-latin1",
            "UTF-8 bytes declared iso-8859-1 (valid UTF-8 wins)",
            MIXED_UTF8,
            "iso-8859-1",
            "utf-8",
            "base64",
            "wrong label 1",
        ),
        Case(
            "wrong-label-gbk-as-utf8",
            "GBK bytes declared utf-8: only the declared bytes can be recovered (by the byte-level guess)",
            message(
                "wrong-label-gbk-as-utf8",
                part(ZH_SIMPLE.encode("gbk") + b"\n", charset="utf-8", cte="base64"),
                subject="wrong label 2",
            ),
            {"contains_declared": [ZH_SIMPLE]},
        ),
        _text_case(
            "unknown-charset-utf8",
            "unknown charset name over UTF-8 bytes",
            MIXED_UTF8,
            "x-unknown-2000",
            "utf-8",
            "base64",
            "unknown charset 1",
        ),
        Case(
            "unknown-charset-latin",
            "unknown charset name over Western bytes (guessed as cp1252)",
            message(
                "unknown-charset-latin",
                part(
                    (FR_TEXT + " " + FR_TEXT).encode("cp1252") + b"\n",
                    charset="x-mac-roman-ish",
                    cte="quoted-printable",
                ),
                subject="unknown charset 2",
            ),
            {"contains": [FR_TEXT]},
        ),
        _text_case(
            "utf7",
            "UTF-7 (old Outlook/Exchange) is ASCII that must not be read as UTF-8",
            "Grüße — 你好 (UTF-7)",
            "utf-7",
            "utf-7",
            "7bit",
            "UTF-7",
        ),
        _text_case(
            "utf16-bom",
            "UTF-16 with a BOM, base64 (its bytes of ASCII text are also valid UTF-8)",
            "Hello from UTF-16: Grüße, 你好, 😀",
            "utf-16",
            "utf-16",
            "base64",
            "UTF-16",
        ),
    ]
    return [_fix_jis(case) for case in cases]


def _fix_jis(case: Case) -> Case:
    # "cp50221" is not a Python codec: the bytes come from corpus_mime.iso2022jp (see there why).
    if case.name != "iso-2022-jp":
        return case
    body = part(iso2022jp(JA_TEXT) + b"\n", charset="iso-2022-jp", cte="7bit")
    return Case(case.name, case.what, message(case.name, body, subject="JIS"), case.expect)


def header_cases() -> list[Case]:
    subject_b = word("Réunion 会议 📅 lundi", "utf-8")
    subject_q = word("Café crème à 10h", "iso-8859-1", "Q")
    split = "你好".encode()  # one character's bytes split over two words: invalid per RFC 2047, seen in the wild
    mixed = (
        f"Re: [proj] {word('会议', 'utf-8')} {word('纪要', 'utf-8')} and "
        f"{raw_word(iso2022jp('日本語'), 'iso-2022-jp')} + {word('한국어', 'ks_c_5601-1987', 'B', 'cp949')} "
        f"{raw_word(split[:4], 'utf-8')}\n {raw_word(split[4:], 'UTF-8', 'Q')} done"
    )
    chunks = ("这是一个很长的主题，", "需要折叠成好几行，", "每行都是编码字。")
    folded = "\n ".join(word(chunk, "utf-8") for chunk in chunks)
    return [
        Case(
            "header-b-and-q",
            "B (UTF-8) subject, Q (iso-8859-1) From name, Q name with an encoded comma in Cc",
            message(
                "header-b-and-q",
                part("Body.\n"),
                subject=subject_b,
                sender=f"{word('Frédéric Müller', 'iso-8859-1', 'Q')} <fred@example.fr>",
                headers=(("Cc", f"{word('Doe, John', 'utf-8', 'Q')} <john@example.com>"), ("X-Alt-Subject", subject_q)),
            ),
            {
                "subject": "Réunion 会议 📅 lundi",
                "from": ["Frédéric Müller", "fred@example.fr"],
                "cc": [["Doe, John", "john@example.com"]],
                "headers": {"x-alt-subject": "Café crème à 10h"},
            },
        ),
        Case(
            "header-mixed-folded",
            "mixed plain and encoded words in four charsets, adjacent words joined, a character split over words",
            message("header-mixed-folded", part("Body.\n"), subject=mixed),
            {"subject": "Re: [proj] 会议纪要 and 日本語 + 한국어你好 done"},  # whitespace between words goes,
        ),
        Case(
            "header-folded-long",
            "a subject folded over three lines of encoded words; folded To list with quoted names and a group",
            message(
                "header-folded-long",
                part("Body.\n"),
                subject=folded,
                to='"Smith, Ann" <ann@example.com>,\n Bob <bob@example.com>,\n team: carol@example.com, '
                "dave@example.com (Dave D);",
            ),
            {
                "subject": "这是一个很长的主题，需要折叠成好几行，每行都是编码字。",
                "to": ["ann@example.com", "bob@example.com", "carol@example.com", "dave@example.com"],
            },
        ),
        Case(
            "header-malformed",
            "malformed words left readable: unclosed, unknown charset, bad Q hex; raw 8-bit UTF-8 in From",
            message(
                "header-malformed",
                part("Body.\n"),
                subject="=?utf-8?B?not closed =?x-nope?Q?abc?= =?utf-8?Q?bad=ZZhex?= end",
                sender="Jürgen Groß <juergen@example.de>",
                date="Tue, 5 Mar 24 10:00:00 EST",
            ),
            {
                "subject_contains": ["not closed", "abc", "bad", "end"],
                "from": ["Jürgen Groß", "juergen@example.de"],
                "date_iso": "2024-03-05T10:00:00-05:00",
            },
        ),
        Case(
            "rfc2231-filenames",
            "RFC 2231 names (UTF-8, continuations, iso-8859-1 with language), RFC 2047 inside quotes",
            message(
                "rfc2231-filenames",
                multipart(
                    "mixed",
                    [
                        part("See the attached files.\n"),
                        part(
                            PDF,
                            "application/pdf",
                            cte="base64",
                            headers=(("Content-Disposition", f"attachment; filename*=UTF-8''{REPORT_PCT}.pdf"),),
                        ),
                        part(
                            DOCX,
                            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                            cte="base64",
                            headers=(
                                (
                                    "Content-Disposition",
                                    "attachment;\n filename*0*=utf-8''Quarterly%20Report%20;"
                                    "\n filename*1*=%E2%80%94%20Q3.docx",
                                ),
                            ),
                        ),
                        part(
                            b"plain text file\n",
                            "text/plain",
                            charset="iso-8859-1",
                            cte="base64",
                            headers=(("Content-Disposition", "attachment; filename*=iso-8859-1'fr'r%E9sum%E9.txt"),),
                        ),
                        part(PDF, "application/pdf", cte="base64", params=f'; name="{word("契約書.pdf", "utf-8")}"'),
                    ],
                ),
                subject="files",
            ),
            {
                "contains": ["See the attached files."],
                "attachments": [
                    ["報告書.pdf", "application/pdf", False],
                    [
                        "Quarterly Report — Q3.docx",
                        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                        False,
                    ],
                    ["résumé.txt", "text/plain", False],
                    ["契約書.pdf", "application/pdf", False],
                ],
            },
        ),
    ]


QP_TEXT = (
    "This line is long enough that quoted-printable must wrap it with a soft line break somewhere in the "
    "middle, and it has = signs, tabs\tand trailing spaces   \nSecond line: naïve café — 你好.\n"
)


def encoding_cases() -> list[Case]:
    lines = [f"Line {i:02d} of a base64 body, encoded with CRLF line ends and 76-character lines." for i in range(20)]
    b64_text = "\n".join(lines) + "\n"
    good = "Readable start of the body. "
    invalid = (
        b"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n"
        + base64.b64encode(good.encode() * 3)
        + b"\n!!!! this line is not base64 !!!!\n"
        + base64.b64encode(b"Tail after junk.")[:-2]  # padding cut off
        + b"\n"
    )
    return [
        Case(
            "quoted-printable",
            "quoted-printable UTF-8: soft breaks, =3D, tabs, trailing spaces",
            message("quoted-printable", part(QP_TEXT, charset="utf-8", cte="quoted-printable"), subject="QP"),
            {
                "contains": [
                    "somewhere in the middle, and it has = signs, tabs\tand trailing spaces",
                    "Second line: naïve café — 你好.",
                ],
                "absent": ["=3D", "=\n"],
            },
        ),
        Case(
            "base64-crlf",
            "base64 body in a CRLF message, upper-case BASE64 label",
            message("base64-crlf", part(b64_text, charset="UTF-8", cte="BASE64"), subject="b64", crlf=True),
            {"contains": [lines[0], lines[19]], "absent": ["\r"]},
        ),
        Case(
            "invalid-base64",
            "base64 with a junk line and lost padding: what is readable is kept",
            message("invalid-base64", invalid, subject="bad b64"),
            {"contains": [good.strip()]},
        ),
        Case(
            "alternative-in-mixed",
            "multipart/mixed [alternative [plain, html], pdf, docx]: the plain part is chosen",
            message(
                "alternative-in-mixed",
                multipart(
                    "mixed",
                    [
                        multipart(
                            "alternative",
                            [
                                part(
                                    "Hi team,\n\nThe Q3 report is attached. Revenue grew 12% on last quarter.\n\nAnn\n",
                                    charset="utf-8",
                                    cte="quoted-printable",
                                ),
                                part(
                                    "<p>Hi team,</p><p>The <b>Q3 report</b> is attached. "
                                    "Revenue grew 12% on last quarter.</p><p>Ann</p>",
                                    "text/html",
                                    charset="utf-8",
                                    cte="quoted-printable",
                                ),
                            ],
                        ),
                        attachment(PDF, "application/pdf", "q3-report.pdf"),
                        attachment(
                            DOCX,
                            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                            "notes.docx",
                        ),
                    ],
                ),
                subject="Q3 report",
            ),
            {
                "contains": ["The Q3 report is attached. Revenue grew 12% on last quarter."],
                "absent": ["<p>", "<b>"],
                "source": "text/plain",
                "attachments": [
                    ["q3-report.pdf", "application/pdf", False],
                    ["notes.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", False],
                ],
            },
        ),
    ]
