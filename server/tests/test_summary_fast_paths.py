"""More shortcuts a search result's summary takes (see test_fast_paths.py), each checked against the rule it
implements or the general code it stands in for, on the common case and on generated input near its edges."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from server.content.security import confusables
from server.content.text import snippets

_JOINER = "\u200c\u200d"


def _joiners_one_run_at_a_time(text: str) -> str:
    """The rule, run by run: a single joiner between two visible characters stays; any other run (two or more,
    at either end, or next to whitespace) becomes one space."""
    out, i = [], 0
    while i < len(text):
        if text[i] not in _JOINER:
            out.append(text[i])
            i += 1
            continue
        end = i
        while end < len(text) and text[end] in _JOINER:
            end += 1
        between_visible = end - i == 1 and i > 0 and end < len(text)
        keep = between_visible and not text[i - 1].isspace() and not text[end].isspace()
        out.append(text[i] if keep else " ")
        i = end
    return "".join(out)


@given(st.text(st.sampled_from([*_JOINER, "a", "ب", " ", "\u00a0", "\t", "\u3000", "\u200b", "."]), max_size=24))
@example("Rust lands. \u200c\u00a0\u200c\u00a0\u200c The Weekly Byte")
@example("\u200cمی\u200cخواهم\u200d")
@example("👩\u200d💻 \u200c\u200d x\u200c")
def test_padding_joiners_become_spaces_as_the_rule_says(text):
    assert snippets._PADDING_JOINERS.sub(" ", text) == _joiners_one_run_at_a_time(text)


def test_a_padded_preheader_reads_as_its_words():
    padded = "Rust lands in storage. " + "\u200c\u00a0" * 40 + "The Weekly Byte"
    assert snippets.clean_snippet(padded) == "Rust lands in storage. The Weekly Byte"
    assert snippets.clean_snippet("می\u200cخواهم") == "می\u200cخواهم"  # a Persian word keeps its joiner


# -- look-alike letters --------------------------------------------------------------------------------------------


@given(st.text(st.characters(max_codepoint=127), max_size=30))
@example("PayPa1-secure_login|0123456789")
@example("rnicrosoft")
def test_ascii_labels_take_their_shape_from_the_table(text):
    lowered = text.lower()
    assert lowered.translate(confusables._ASCII_SINGLE) == confusables._look_alikes(lowered)
