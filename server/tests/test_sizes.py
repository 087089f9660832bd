"""One size format everywhere a person reads one (message and thread attachments, downloads, drafts, extraction
notes): 'N bytes' below 1 KB, then one decimal of KB, MB, GB (1 KB = 1024 bytes)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.content.sizes import human_size


@pytest.mark.parametrize(
    "size, text",
    [
        (0, "0 bytes"),
        (1, "1 byte"),
        (1023, "1,023 bytes"),
        (1024, "1.0 KB"),
        (1536, "1.5 KB"),
        (1024 * 1024 - 1, "1.0 MB"),  # not "1024.0 KB"
        (25 * 1024 * 1024, "25.0 MB"),
        (3 * 1024**3, "3.0 GB"),
    ],
)
def test_sizes(size, text):
    assert human_size(size) == text


@given(st.integers(min_value=0, max_value=10**13))
def test_a_size_is_a_number_and_one_unit_below_1024(size):
    number, unit = human_size(size).split(" ")
    assert unit in ("byte", "bytes", "KB", "MB", "GB")
    assert unit == "GB" or float(number.replace(",", "")) < 1024
