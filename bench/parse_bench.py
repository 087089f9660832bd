"""Message parsing speed on the large and deep cases of the content-fidelity corpus (pure parsing, no I/O).

    .venv/bin/python -m bench.parse_bench [--repeat 5] [--no-stdlib]

Each case is a Gmail messages.get resource built in memory (as the emulator would serve it) and parsed with
`parse_message` / `parse_raw_message`; the best of `--repeat` runs is reported as ms and MB/s of message bytes.
A second table runs the HTML converter against a minimal `html.parser.HTMLParser` converter (the usual stdlib
approach) on a large newsletter and on malformed markup, where html.parser is quadratic on this Python.
"""

from __future__ import annotations

import argparse
import base64
import sys
import time
from collections.abc import Callable
from html.parser import HTMLParser

if __package__ in (None, ""):  # a path run cannot import `bench`: say how to run it instead
    sys.exit("Run it from the checkout as a module: python -m bench.parse_bench")

from server.content.message import parse_message, parse_raw_message
from server.content.text.html_text import html_to_text
from server.tests.data.corpus_mime import message, multipart, part
from server.tests.data.corpus_structure import NEWSLETTER, large_case
from server.tests.data.make_corpus import all_cases
from server.tests.support.payloads import gmail_resource

MB = 1024 * 1024


def best_ms(run: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def deep_resource(depth: int) -> dict:
    """A `full` payload `depth` levels of multipart/mixed deep, built iteratively (no recursion limit)."""
    node: dict = {"mimeType": "text/plain", "headers": [], "body": {"data": _b64(b"Deep text.\n"), "size": 11}}
    for _ in range(depth - 1):
        node = {"mimeType": "multipart/mixed", "headers": [], "body": {"size": 0}, "parts": [node]}
    return {"id": "deep", "payload": node}


def wide_resource(count: int) -> dict:
    """A text part and `count` named attachments."""
    parts = [{"partId": "0", "mimeType": "text/plain", "headers": [], "body": {"data": _b64(b"Files.\n")}}]
    parts += [
        {
            "partId": str(i),
            "mimeType": "application/pdf",
            "filename": f"file-{i}.pdf",
            "headers": [{"name": "Content-Disposition", "value": f'attachment; filename="file-{i}.pdf"'}],
            "body": {"attachmentId": f"att-{i}", "size": 1000},
        }
        for i in range(1, count + 1)
    ]
    payload = {"mimeType": "multipart/mixed", "headers": [], "body": {"size": 0}, "parts": parts}
    return {"id": "wide", "payload": payload}


def big_html(size: int) -> str:
    body = NEWSLETTER.split("<body>", 1)[1].rsplit("</body>", 1)[0]
    return "<html><body>" + body * (size // len(body) + 1) + "</body></html>"


def parse_cases() -> list[tuple[str, int, Callable[[], object]]]:
    large = large_case().raw
    gbk_text = ("第三季度的订单已经安排生产，预计十二月中旬发货。请确认收货地址。\n" * 100_000).encode("gbk")[: 5 * MB]
    gbk = message("gbk-5mb", part(gbk_text, charset="gb2312", cte="base64"), subject="gbk")
    html = message("html-5mb", part(big_html(5 * MB), "text/html", charset="utf-8", cte="base64"), subject="html")
    deep_raw = part("Deep text.\n")
    for _ in range(59):
        deep_raw = multipart("mixed", [deep_raw])
    deep_raw = message("deep-60", deep_raw, subject="deep")
    resources = {
        "5 MB text/plain, UTF-8 (full)": (large, gmail_resource(large, "utf8")),
        "5 MB text/plain, raw format": (large, gmail_resource(large, fmt="raw")),
        "5 MB GB2312-labelled GBK (declared bytes)": (gbk, gmail_resource(gbk, "declared")),
        "5 MB HTML newsletter (tables, links)": (html, gmail_resource(html, "utf8")),
        "60-level nesting (full)": (deep_raw, gmail_resource(deep_raw, "utf8")),
        "60-level nesting, raw format": (deep_raw, gmail_resource(deep_raw, fmt="raw")),
    }
    cases = [
        (name, len(raw), (lambda r=resource: parse_raw_message(r) if "raw" in r else parse_message(r)))
        for name, (raw, resource) in resources.items()
    ]
    for depth in (100, 1000):
        resource = deep_resource(depth)
        label = f"{depth}-level nesting (full" + (", walk cut at 100)" if depth > 100 else ")")
        cases.append((label, 11 + 60 * depth, lambda r=resource: parse_message(r)))
    wide = wide_resource(2000)
    cases.append(("2,000 attachments", 150 * 2000, lambda: parse_message(wide)))
    corpus = [gmail_resource(case.raw, "declared") for case in all_cases()]
    size = sum(len(case.raw) for case in all_cases())
    cases.append((f"whole corpus ({len(corpus)} messages)", size, lambda: [parse_message(r) for r in corpus]))
    return cases


class _StdlibText(HTMLParser):
    """The usual stdlib converter: collect text, skip script/style. For comparison only."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self.skip -= tag in ("script", "style") and self.skip > 0

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.out.append(data)


def stdlib_text(markup: str) -> str:
    parser = _StdlibText()
    parser.feed(markup)
    parser.close()
    return "".join(parser.out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per case; the best is reported")
    parser.add_argument("--no-stdlib", action="store_true", help="skip the html.parser comparison (slow)")
    args = parser.parse_args(argv)
    print(f"Python {sys.version.split()[0]}; best of {args.repeat} runs\n")
    print(f"{'case (input = whole message as sent)':<44} {'input':>9} {'ms':>9} {'MB/s':>8}")
    for name, size, run in parse_cases():
        ms = best_ms(run, args.repeat)
        print(f"{name:<44} {size / MB:>7.2f}MB {ms:>9.1f} {size / MB / (ms / 1000):>8.1f}")
    if args.no_stdlib:
        return 0
    print(f"\n{'HTML to text':<44} {'input':>9} {'ours ms':>9} {'html.parser ms':>15}")
    samples = [("newsletter markup, 1 MB", big_html(MB))]
    samples += [(f'malformed: "<a" x {n:,}', "<a" * n) for n in (12_500, 25_000, 50_000)]
    for name, markup in samples:
        ours = best_ms(lambda m=markup: html_to_text(m), args.repeat)
        theirs = best_ms(lambda m=markup: stdlib_text(m), 1)
        print(f"{name:<44} {len(markup) / MB:>7.2f}MB {ours:>9.1f} {theirs:>15.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
