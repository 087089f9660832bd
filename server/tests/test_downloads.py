"""Saving attachments (`runtime/downloads.py`): a stranger's file name never leaves the configured folder,
never overwrites, and stays a readable single path component on Linux, macOS and Windows."""

from __future__ import annotations

import os
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from server.runtime.downloads import MAX_NAME_BYTES, safe_filename, save_file

WINDOWS_FORBIDDEN = set('<>:"/\\|?*') | {chr(n) for n in range(32)}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("../../etc/passwd", "passwd"),
        ("..\\..\\Windows\\System32\\drivers\\etc\\hosts", "hosts"),
        ("/absolute/path/report.pdf", "report.pdf"),
        ("C:report.pdf", "C_report.pdf"),
        ("..", "attachment.bin"),
        (".", "attachment.bin"),
        ("", "attachment.bin"),
        ("...", "attachment.bin"),
        ("CON", "_CON"),
        ("nul.txt", "_nul.txt"),
        ("com1.tar.gz", "_com1.tar.gz"),
        ("LPT9", "_LPT9"),
        ("CONFIG.SYS", "CONFIG.SYS"),  # only exact device names are reserved
        ("report. ", "report"),  # Windows drops trailing dots and spaces
        (" .hidden", "hidden"),  # and a leading dot would hide the file on Unix
        ("a\x00b\x1fc.txt", "a_b_c.txt"),
        ('what?<"now">|*.txt', "what___now____.txt"),
        ("invoice\u202efdp.exe", "invoicefdp.exe"),  # right-to-left override disguising the extension
        ("zero\u200bwidth.pdf", "zerowidth.pdf"),
        ("Cafe\u0301 menu.pdf", "Café menu.pdf"),  # NFC: one é, as macOS and Windows would show it
        ("報告書 2026.pdf", "報告書 2026.pdf"),
        ("tab\tand\nnewline.txt", "tab_and_newline.txt"),
    ],
)
def test_names_are_sanitized(name: str, expected: str) -> None:
    assert safe_filename(name) == expected


def test_long_names_keep_their_extension_within_the_byte_limit() -> None:
    name = "ü" * 300 + ".pdf"
    safe = safe_filename(name)
    assert safe.endswith(".pdf") and len(safe.encode()) <= MAX_NAME_BYTES
    assert safe == unicodedata.normalize("NFC", safe)


@given(st.text(max_size=300))
@example("0.000000\xa1\U00010000\U00010000 \U00010000")  # found at random: the clipped extension ended on a space
def test_any_name_is_one_safe_component(name: str) -> None:
    safe = safe_filename(name)
    assert safe and safe not in (".", "..") and not (set(safe) & WINDOWS_FORBIDDEN)
    assert len(safe.encode("utf-8")) <= MAX_NAME_BYTES and safe == safe.strip(" .")
    assert Path(safe).name == safe and not Path(safe).is_absolute()


def test_save_never_overwrites_and_numbers_collisions(tmp_path: Path) -> None:
    folder = tmp_path / "dl"
    paths = [save_file(folder, "report.pdf", data) for data in (b"one", b"two", b"three")]
    assert [p.name for p in paths] == ["report.pdf", "report (2).pdf", "report (3).pdf"]
    assert [p.read_bytes() for p in paths] == [b"one", b"two", b"three"]
    assert save_file(folder, "README", b"x").name == "README" and save_file(folder, "README", b"y").name == "README (2)"


@pytest.mark.parametrize("name", ["../escape.txt", "../../escape.txt", "/tmp/escape.txt", "..\\escape.txt"])
def test_save_stays_in_the_folder(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "dl"
    path = save_file(folder, name, b"data")
    assert path.parent == folder.resolve() and path.name == "escape.txt"
    assert not (tmp_path / "escape.txt").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_a_planted_symlink_is_never_written_through(tmp_path: Path) -> None:
    folder = tmp_path / "dl"
    folder.mkdir()
    outside = tmp_path / "victim.txt"
    outside.write_bytes(b"precious")
    (folder / "report.pdf").symlink_to(outside)
    path = save_file(folder, "report.pdf", b"attacker")
    assert path.name == "report (2).pdf" and outside.read_bytes() == b"precious"


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_saved_files_are_private(tmp_path: Path) -> None:
    path = save_file(tmp_path / "new-folder", "a.txt", b"x")
    assert path.stat().st_mode & 0o077 == 0
