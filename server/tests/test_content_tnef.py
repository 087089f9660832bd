"""winmail.dat (Outlook TNEF): named in a note, its body read (plain, HTML or compressed RTF), its files listed,
and hostile streams bounded (server/content/mime/tnef.py, server/content/text/rtf_text.py)."""

from __future__ import annotations

import random
import struct
import time
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.content.message import parse_message, parse_raw_message
from server.content.mime.tnef import read_tnef
from server.content.text.rtf_text import INITIAL_DICTIONARY, decompress_rtf, rtf_to_text
from server.tests.support import tnef_builder as tb
from server.tests.support.payloads import MODES, binary_part, gmail_resource, message_bytes, multipart, text_part

RTF = (
    rb"{\rtf1\ansi\ansicpg1252\deff0\nouicompat{\fonttbl{\f0\fswiss\fcharset0 Calibri;}}"
    rb"{\colortbl ;\red0\green0\blue255;}{\*\generator Riched20 10.0.19041}\viewkind4\uc1"
    rb"\pard\sa200\sl276\slmult1\f0\fs22\lang9 Hi Anna,\par The caf\'e9 invoice is attached: \u8364?120.\par"
    rb"{\pict\wmetafile8\picw10\pich10 0100090000}\ldblquote Thanks\rdblquote , Bob\par}"
)
RTF_TEXT = "Hi Anna,\nThe café invoice is attached: €120.\n“Thanks”, Bob"
HTML_RTF = (
    rb"{\rtf1\ansi\ansicpg1252\fromhtml1 \fbidis \deff0{\fonttbl{\f0\fswiss Arial;}{\f1\fmodern Courier New;}}"
    rb"{\colortbl\red0\green0\blue0;}\uc1{\*\htmltag19 <html>}{\*\htmltag34 <head>}{\*\htmltag241 <style>"
    rb"p {margin:0}</style>}{\*\htmltag41 </head>}{\*\htmltag50 <body>}\htmlrtf {\htmlrtf0 "
    rb"{\*\htmltag64 <p>}Meeting moved to {\*\htmltag84 <b>}\htmlrtf {\b \htmlrtf0 Thursday\htmlrtf }\htmlrtf0 "
    rb"{\*\htmltag92 </b>}.{\*\htmltag72 </p>}\htmlrtf\par\htmlrtf0 {\*\htmltag64 <p>}Bring the "
    rb"{\*\htmltag84 <a href=\"https://example.com/plan\">}\htmlrtf {\htmlrtf0 plan\htmlrtf }\htmlrtf0 "
    rb"{\*\htmltag92 </a>}{\*\htmltag72 </p>}\htmlrtf\par }\htmlrtf0 {\*\htmltag58 </body></html>}}"
)
PDF = b"%PDF-1.4 fake"
RTF_LZFU = tb.compress_rtf(RTF)  # compressing is slow (greedy search): once per module


def winmail(*, plain: str | None = None, props: Sequence[bytes] = (), files: bool = True) -> bytes:
    message = [tb.subject_attr("Invoice")]
    if plain is not None:
        message.append(tb.body_attr(plain))
    if props:
        message.append(tb.mapi_attr([tb.prop_long(0x0E07, 1), tb.prop_time(0x0039), *props, tb.prop_bool(0x0E1F, 1)]))
    attachments = []
    if files:
        attachments.append([tb.rend_data(), tb.title("INVOIC~1.PDF"), tb.attach_data(PDF)])
        attachments[0].append(
            tb.mapi_attr(
                [tb.prop_unicode(0x3707, "Invoice March.pdf"), tb.prop_string8(0x370E, "application/pdf")],
                level=tb.LVL_ATTACHMENT,
            )
        )
        attachments.append([tb.rend_data(), tb.title("logo.png"), tb.attach_data(b"\x89PNG....")])
    return tb.tnef(message, attachments)


# -- the reader ---------------------------------------------------------------------------------------------


def test_initial_dictionary_is_the_specified_207_bytes() -> None:
    assert len(INITIAL_DICTIONARY) == 207 and INITIAL_DICTIONARY.endswith(b"\\tab\\tx")


@pytest.mark.parametrize(
    ("build", "text", "source"),
    [
        (lambda: winmail(plain="Plain body.\r\nSecond line."), "Plain body.\r\nSecond line.", "attBody"),
        (lambda: winmail(props=[tb.prop_unicode(0x1000, "Unicode – ünï 你好")]), "Unicode – ünï 你好", "PR_BODY"),
        (lambda: winmail(props=[tb.prop_string8(0x1000, "8-bit body café")]), "8-bit body café", "PR_BODY"),
        (lambda: winmail(props=[tb.prop_binary(0x1009, RTF_LZFU)]), RTF_TEXT, "PR_RTF_COMPRESSED"),
        (lambda: winmail(props=[tb.prop_binary(0x1009, tb.stored_rtf(RTF))]), RTF_TEXT, "PR_RTF_COMPRESSED"),
        (
            lambda: winmail(props=[tb.prop_binary(0x1009, tb.compress_rtf(HTML_RTF))]),
            "Meeting moved to Thursday.\n\nBring the plan (https://example.com/plan)",
            "PR_RTF_COMPRESSED",
        ),
        (
            lambda: winmail(props=[tb.prop_binary(0x1013, b"<p>HTML <b>body</b></p>"), tb.prop_long(0x3FDE, 65001)]),
            "HTML body",
            "PR_HTML",
        ),
        (
            lambda: winmail(
                props=[
                    tb.prop_named_long(0x8510, 369),
                    tb.prop_named_string("Keywords", "x"),
                    tb.prop_multi_long(0x0E1E, [1, 2, 3]),
                    tb.prop_binary(0x1009, RTF_LZFU),
                ]
            ),
            RTF_TEXT,
            "PR_RTF_COMPRESSED",
        ),
    ],
    ids=["attBody", "PR_BODY-unicode", "PR_BODY-8bit", "rtf-lzfu", "rtf-stored", "rtf-html", "PR_HTML", "named-props"],
)
def test_body_sources(build, text: str, source: str) -> None:
    found = read_tnef(build())
    assert (found.text, found.source, found.problems) == (text, source, [])
    assert [(f.name, f.size, f.mime_type) for f in found.files] == [
        ("Invoice March.pdf", len(PDF), "application/pdf"),
        ("logo.png", 8, None),
    ]


def test_preference_order_plain_before_rtf() -> None:
    data = winmail(plain="From attBody", props=[tb.prop_binary(0x1009, RTF_LZFU)])
    assert read_tnef(data).source == "attBody"


def test_lzfu_round_trips_with_and_without_back_references() -> None:
    rng = random.Random(7)
    for _ in range(20):
        words = [rng.choice([b"\\par ", b"the ", b"report ", b"{\\b bold}", b"caf\\'e9 ", b"x" * rng.randint(1, 40)])]
        rtf = b"{\\rtf1\\ansi " + b"".join(words * rng.randint(1, 30)) + b"}"
        assert decompress_rtf(tb.compress_rtf(rtf)) == rtf
        assert decompress_rtf(tb.compress_rtf(rtf, references=False)) == rtf


def test_rtf_details() -> None:
    assert rtf_to_text(rb"{\rtf1\ansi\ansicpg936 \'c4\'e3\'ba\'c3 world}") == "你好 world"
    assert rtf_to_text(rb"{\rtf1 A\uc2\u20320\'3f\'3fB\u-10179\u-8694??C}") == "A你B😊C"
    assert rtf_to_text(rb"{\rtf1 before\bin4 {}}}after}") == "beforeafter"
    assert rtf_to_text(rb"{\rtf1 a\~b\-c\_d\\e\{f\}}") == "a\u00a0bc\u2011d\\e{f}"
    assert rtf_to_text(b"") == "" and rtf_to_text(None) == ""  # type: ignore[arg-type]


# -- through messages -----------------------------------------------------------------------------------------


def _only_winmail(data: bytes) -> bytes:
    part = binary_part(data, "application/ms-tnef", filename="winmail.dat", name_param='; name="winmail.dat"')
    return message_bytes(multipart("mixed", [part]))


def test_a_message_that_is_only_winmail_dat() -> None:
    raw = _only_winmail(winmail(props=[tb.prop_binary(0x1009, RTF_LZFU)]))
    for mode in MODES:  # `full`: Gmail sends the file as an attachment id, without its bytes
        parsed = parse_message(gmail_resource(raw, mode))
        assert parsed.body_text == "" and parsed.body_source == "none"
        assert [(a.filename, a.mime_type) for a in parsed.attachments] == [("winmail.dat", "application/ms-tnef")]
        assert any(note.startswith("winmail.dat: Outlook TNEF attachment") for note in parsed.notes)
        # The caller fetched the attachment's bytes: the body is read from them.
        fetched = {parsed.attachments[0].attachment_id: winmail(props=[tb.prop_binary(0x1009, RTF_LZFU)])}
        with_bytes = parse_message(gmail_resource(raw, mode), attachment_bytes=fetched)
        assert with_bytes.body_text == RTF_TEXT and with_bytes.body_source == "application/ms-tnef"
    parsed = parse_raw_message(gmail_resource(raw, fmt="raw"))  # raw carries the bytes
    assert parsed.body_text == RTF_TEXT and parsed.body_source == "application/ms-tnef"
    notes = " | ".join(parsed.notes)
    assert "the body is its text (from PR_RTF_COMPRESSED)" in notes
    assert "winmail.dat contains 2 file(s): Invoice March.pdf (13 bytes), logo.png (8 bytes)" in notes


def test_winmail_next_to_a_plain_body_does_not_repeat_it() -> None:
    data = winmail(props=[tb.prop_unicode(0x1000, "Hello there.")])
    part = binary_part(data, "application/ms-tnef", filename="winmail.dat")
    raw = message_bytes(multipart("mixed", [text_part("Hello there."), part]))
    parsed = parse_raw_message(gmail_resource(raw, fmt="raw"))
    assert parsed.body_text == "Hello there." and parsed.body_source == "text/plain"
    assert any("repeats the body" in note for note in parsed.notes)


def test_winmail_as_octet_stream_is_recognised_by_name() -> None:
    part = binary_part(winmail(plain="By name."), "application/octet-stream", filename="WINMAIL.DAT")
    parsed = parse_raw_message(gmail_resource(message_bytes(multipart("mixed", [part])), fmt="raw"))
    assert parsed.body_text == "By name."


# -- hostile streams ------------------------------------------------------------------------------------------


def test_every_truncation_is_read_without_raising() -> None:
    data = winmail(plain="Plain.", props=[tb.prop_binary(0x1009, RTF_LZFU)])
    ends, pos = set(), 6  # where attributes end: a cut there (or in a final checksum) is a complete stream
    while pos < len(data):
        pos += 9 + struct.unpack_from("<I", data, pos + 5)[0] + 2
        ends |= {pos, pos - 1, pos - 2}
    for cut in range(len(data)):
        found = read_tnef(data[:cut])
        assert isinstance(found.text, str)
        assert found.problems or cut in ends


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not tnef at all",
        struct.pack("<IH", tb.SIGNATURE, 0) + struct.pack("<BII", 1, 0x0002800C, 0xFFFFFFFF) + b"abc",
        struct.pack("<IH", tb.SIGNATURE, 0) + tb.attribute(1, 0x00069003, struct.pack("<I", 0xFFFFFFFF) + b"\0" * 8),
        struct.pack("<IH", tb.SIGNATURE, 0)
        + tb.attribute(1, 0x00069003, struct.pack("<IHHI", 1, 0x1102, 0x1009, 2**31 - 1)),
        struct.pack("<IH", tb.SIGNATURE, 0) + tb.attribute(1, 0x00069003, struct.pack("<IHH", 1, 0x0999, 0x1000)),
        struct.pack("<IH", tb.SIGNATURE, 0) + tb.attribute(2, 0x0006800F, b"x") * 20_000,
    ],
    ids=["empty", "junk", "huge-length", "huge-count", "huge-values", "unknown-type", "many-attributes"],
)
def test_hostile_streams_give_problems_not_exceptions(data: bytes) -> None:
    started = time.process_time()  # CPU time: a shared machine's load does not count against it
    found = read_tnef(data)
    assert found.problems and time.process_time() - started < 2


def test_hostile_compressed_rtf_is_bounded() -> None:
    # Every token a back-reference copying 17 bytes: output grows 8.5x the input, and stops at the cap.
    tokens, write = bytearray(), len(INITIAL_DICTIONARY)
    for _ in range(8_000):
        tokens.append(0xFF)
        for _ in range(8):  # never the end marker: the offset stays half a dictionary from the write position
            tokens += struct.pack(">H", (((write + 2048) % 4096) << 4) | 0xF)
            write = (write + 17) % 4096
    bomb = struct.pack("<IIII", 0xFFFFFFF0, 0xFFFFFFFF, 0x75465A4C, 0) + bytes(tokens)
    started = time.process_time()
    out = decompress_rtf(bomb, limit=1_000_000)
    assert out is not None and len(out) == 1_000_000 and time.process_time() - started < 10
    deep = b"{\\rtf1 " + b"{" * 200_000 + b"deep" + b"}" * 200_000 + b"}"
    assert rtf_to_text(deep) == "deep"
    assert decompress_rtf(b"short") is None and decompress_rtf(b"\0" * 16) is None


MUTATED_BASE = winmail(plain="x", props=[tb.prop_binary(0x1009, tb.compress_rtf(b"{\\rtf1 hi}"))])


@given(st.binary(max_size=400), st.integers(min_value=0, max_value=600))
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_mutated_streams_never_raise(noise: bytes, at: int) -> None:
    data = bytearray(MUTATED_BASE)
    at = min(at, len(data))
    data[at : at + len(noise)] = noise
    found = read_tnef(bytes(data))
    assert isinstance(found.text, str) and isinstance(found.files, list)
    assert isinstance(rtf_to_text(bytes(data)), str)
    assert isinstance(decompress_rtf(bytes(data[at:])), (bytes, type(None)))


@given(st.binary(max_size=600), st.sampled_from([0x75465A4C, 0x414C454D, 0]))
@settings(deadline=None)
def test_compressed_rtf_noise_never_raises(noise: bytes, kind: int) -> None:
    out = decompress_rtf(struct.pack("<IIII", len(noise) + 12, 4096, kind, 0) + noise)
    assert out is None or len(out) <= 4096
    assert isinstance(rtf_to_text(noise), str) and isinstance(rtf_to_text(out or b""), str)


def test_properties_repeated_with_no_data_cost_linear_time() -> None:
    """A multi-valued zero-size property type once made reading quadratic (80 KB: 3 s)."""
    null_multi = struct.pack("<HHI", 0x1001, 0x0001, 2_000)  # PT_MV_NULL: 2,000 values of no bytes each
    props = struct.pack("<I", 20_000) + null_multi * 5_000
    data = tb.tnef([tb.attribute(tb.LVL_MESSAGE, 0x00069003, props)])
    calls = 0
    original = struct.unpack

    def counting(*args):
        nonlocal calls
        calls += 1
        return original(*args)

    struct.unpack = counting
    try:
        found = read_tnef(data)
    finally:
        struct.unpack = original
    assert calls < 100 and any("malformed MAPI property" in problem for problem in found.problems)


def test_files_past_the_cap_never_change_the_last_listed_one() -> None:
    from server.content.mime.tnef import MAX_FILES

    files = [[tb.rend_data(), tb.title(f"f{index}.txt"), tb.attach_data(b"x" * 3)] for index in range(MAX_FILES)]
    files.append([tb.rend_data(), tb.title("late.bin"), tb.attach_data(b"y" * 999)])
    found = read_tnef(tb.tnef([tb.subject_attr("many")], files))
    assert len(found.files) == MAX_FILES and found.files[-1].name == f"f{MAX_FILES - 1}.txt"
    assert found.files[-1].size == 3


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_gmail_get_message_reads_a_winmail_only_message_with_one_more_request(
    anyio_backend, make_emulator, tmp_path
) -> None:
    """Over the emulator and a real MCP session: Gmail's `full` resource has only the attachment id of the
    winmail.dat, so the tool fetches it (messages.get + attachments.get) and its text becomes the body."""
    from mcp.client import Client

    from server.protocol.dispatch import build_server
    from server.runtime.accounts import AccountRegistry
    from server.runtime.observability import Metrics
    from server.tests.support.emulator import emulator_settings

    mailbox = tmp_path / "mail"
    mailbox.mkdir()
    padding = tb.prop_binary(0x3701, b"\0" * 8000)  # big enough that Gmail keeps the part apart
    (mailbox / "winmail.eml").write_bytes(_only_winmail(winmail(props=[tb.prop_binary(0x1009, RTF_LZFU), padding])))
    emulator = make_emulator(mailbox)
    settings = emulator_settings(emulator, tmp_path, quota_units_per_s=0.0, warm_up=False)
    registry = AccountRegistry.single(settings, metrics=Metrics())
    message_id = emulator.store.messages[0].id
    since = emulator.requests()[-1]["seq"] if emulator.requests() else 0
    async with Client(build_server(registry), mode="legacy") as client:
        result = await client.call_tool("gmail_get_message", {"message_id": message_id})
    assert result.is_error is False, result.content[0].text
    assert result.structured_content["body_text"].startswith("Hi Anna,")
    assert result.structured_content["body_source"] == "application/ms-tnef"
    paths = [entry["path"] for entry in emulator.requests(since) if entry["path"] != "/token"]
    assert len(paths) == 2 and paths[0].endswith(f"/messages/{message_id}") and "/attachments/" in paths[1]
