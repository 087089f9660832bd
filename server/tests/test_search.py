"""gmail_search_messages: the seven groups of the design document's unit tests, through the real client stack.

Gmail is faked at the HTTP boundary (HttpMockSequence), so query strings, page sizes, batch requests and error
bodies all pass through google-api-python-client exactly as in production.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from server.errors import RateLimitedError, TransientError
from server.gmail.query import compose_query, label, newer_than
from server.tests.support.fake_gmail import FakeGmail, gmail_error, list_page, metadata_batch
from server.toolsets.messages.search import (
    EMPTY_RESULT_HINT,
    MAX_PAGES,
    SearchMessagesInput,
    collect_message_refs,
    search_messages,
)


def ids(prefix: str, count: int, start: int = 0) -> list[str]:
    return [f"{prefix}{n:04d}" for n in range(start, start + count)]


def search(fake: FakeGmail, top_k: int = 10, **arguments):
    return search_messages(fake.context(top_k), SearchMessagesInput(**arguments))


# 1. query composition -------------------------------------------------------------------------------------------


def test_query_composition_matches_the_design_document():
    assert compose_query("from:test", newer_than_days=7) == "from:test newer_than:7d"
    assert (
        compose_query("subject:meeting", label_ids=["INBOX", "STARRED"]) == "subject:meeting label:INBOX label:STARRED"
    )
    assert compose_query("", newer_than_days=30) == "newer_than:30d"


def test_query_parts_are_tiny_pure_functions():
    assert newer_than(1) == "newer_than:1d"
    assert label("Project Phoenix") == "label:Project-Phoenix"
    assert label("Q&A (2024)") == "label:Q-A-2024"  # Gmail writes & ( ) " | { } / as dashes
    assert compose_query("  is:unread  ", newer_than_days=2, label_ids=["Work"]) == "is:unread newer_than:2d label:Work"


def test_queries_with_boolean_structure_are_grouped_before_filters_are_added():
    assert compose_query("from:a OR from:b", newer_than_days=7) == "(from:a OR from:b) newer_than:7d"
    assert compose_query("invoice OR", label_ids=["INBOX"]) == "(invoice OR) label:INBOX"
    assert compose_query("{a b}", newer_than_days=1) == "({a b}) newer_than:1d"
    assert compose_query("from:a OR from:b") == "from:a OR from:b"  # nothing added, nothing changed
    assert compose_query("oregon trip", newer_than_days=2) == "oregon trip newer_than:2d"  # "or" inside a word


def test_composed_query_is_what_gmail_receives():
    """Labels filter through messages.list's labelIds, never label: terms (`label:Q&A-(2024)` finds nothing)."""
    fake = FakeGmail([list_page([])])
    result = search(fake, query="from:test", newer_than_days=7, label_ids=["inbox", "STARRED"])
    assert fake.query_params(0)["q"] == ["from:test newer_than:7d"]
    assert fake.query_params(0)["labelIds"] == ["INBOX", "STARRED"]
    assert result.query == "from:test newer_than:7d" and result.labels == ["inbox", "STARRED"]


def test_label_names_with_brackets_are_allowed_as_they_go_as_ids():
    assert SearchMessagesInput(query="", label_ids=["Q&A-(2024)", 'say "hi" {x}: y']).label_ids


# 2. pagination ---------------------------------------------------------------------------------------------------


def test_second_page_completes_max_results():
    fake = FakeGmail([list_page(ids("a", 10), "p2"), list_page(ids("a", 5, 10)), metadata_batch(ids("a", 10))])
    result = search(fake, query="in:inbox", max_results=15)
    assert [m.id for m in result.messages] == ids("a", 15)
    assert result.pages_fetched == 2 and result.next_page_token is None
    assert fake.query_params(0)["maxResults"] == ["15"]
    assert fake.query_params(1)["maxResults"] == ["5"] and fake.query_params(1)["pageToken"] == ["p2"]


def test_pagination_stops_at_max_results_even_if_more_pages_exist():
    fake = FakeGmail([list_page(ids("a", 10), "p2"), list_page(ids("a", 10, 10), "p3"), metadata_batch(ids("a", 10))])
    result = search(fake, query="in:inbox", max_results=15)
    assert result.result_count == 15
    assert result.next_page_token == "p3"  # the model can continue
    assert len([u for u in fake.uris if "/messages?" in u]) == 2


def test_page_cap_prevents_endless_paging():
    pages = [list_page([f"m{n}"], f"p{n + 1}") for n in range(MAX_PAGES)]
    fake = FakeGmail([*pages, metadata_batch([f"m{n}" for n in range(MAX_PAGES)])])
    result = search(fake, query="in:inbox", max_results=50)
    assert result.pages_fetched == MAX_PAGES
    assert result.result_count == MAX_PAGES
    assert result.next_page_token == f"p{MAX_PAGES}"


def test_one_list_call_when_gmail_fills_the_page():
    fake = FakeGmail([list_page(ids("a", 50), "more"), metadata_batch(ids("a", 10))])
    result = search(fake, query="in:inbox", max_results=50)
    assert result.pages_fetched == 1 and result.result_count == 50
    assert fake.query_params(0)["maxResults"] == ["50"]


def test_explicit_page_token_continues_a_search():
    fake = FakeGmail([list_page(ids("b", 3)), metadata_batch(ids("b", 3))])
    result = search(fake, query="in:inbox", max_results=3, page_token="tok-2")
    assert fake.query_params(0)["pageToken"] == ["tok-2"]
    assert result.next_page_token is None


# 3. dedupe -------------------------------------------------------------------------------------------------------


def test_duplicates_across_pages_are_dropped_in_first_seen_order():
    refs = collect_message_refs(
        lambda token, size: {
            None: {"messages": [{"id": i} for i in "123"], "nextPageToken": "b"},
            "b": {"messages": [{"id": i} for i in "234"]},
        }[token],
        limit=10,
    )
    assert [r["id"] for r in refs.refs] == ["1", "2", "3", "4"]
    assert refs.pages == 2


# 4. empty result -------------------------------------------------------------------------------------------------


def test_empty_result_is_an_empty_list_with_a_hint():
    fake = FakeGmail([list_page([])])
    result = search(fake, query="from:nobody@example.invalid")
    assert result.messages == [] and result.result_count == 0
    assert result.hint == EMPTY_RESULT_HINT
    assert len(fake.uris) == 1  # nothing to enrich, no batch request


# 5. enrichment ---------------------------------------------------------------------------------------------------


def test_only_the_top_k_are_enriched_in_one_batch():
    fake = FakeGmail([list_page(ids("m", 20)), metadata_batch(ids("m", 10))])
    result = search(fake, query="in:inbox", max_results=20)
    assert len(fake.uris) == 2 and fake.uris[1].endswith("/batch/gmail/v1")
    batch_body = fake.mock.request_sequence[1][2]
    assert batch_body.count("GET /gmail/v1/users/me/messages/") == 10
    assert "format=metadata" in batch_body and "metadataHeaders=From" in batch_body
    first, eleventh = result.messages[0], result.messages[10]
    assert (first.from_email, first.from_name, first.subject) == ("alice@example.com", "Alice Example", "Subject m0000")
    assert first.date == "2026-11-03T09:15:00+01:00" and first.snippet == "Hello there"
    assert eleventh.subject is None and eleventh.model_dump(mode="json") == {"id": "m0010", "thread_id": "tm0010"}
    assert result.enriched_count == 10 and result.enrichment_failures == 0


def test_failed_enrichment_degrades_items_and_is_counted():
    failures = {mid: (404, "notFound", "Requested entity was not found.") for mid in ids("m", 3)}
    fake = FakeGmail([list_page(ids("m", 10)), metadata_batch(ids("m", 10), failures)])
    result = search(fake, query="in:inbox")
    assert [m.subject for m in result.messages[:3]] == [None, None, None]
    assert all(m.subject for m in result.messages[3:])
    assert result.enrichment_failures == 3 and result.enriched_count == 7
    assert "3 result(s) could not be enriched" in result.hint


def test_retryable_part_failures_are_retried_together_in_one_follow_up_batch():
    flaky = {mid: (429, "rateLimitExceeded", "Rate Limit Exceeded") for mid in ids("m", 2)}
    fake = FakeGmail([list_page(ids("m", 5)), metadata_batch(ids("m", 5), flaky), metadata_batch(ids("m", 2))])
    result = search(fake, query="in:inbox", max_results=5)
    assert result.enrichment_failures == 0 and all(m.subject for m in result.messages)
    assert fake.sleeps == [1.0]
    assert fake.mock.request_sequence[2][2].count("GET /gmail/v1/") == 2


def test_enrichment_top_k_is_configurable():
    fake = FakeGmail([list_page(ids("m", 5)), metadata_batch(ids("m", 2))])
    result = search(fake, top_k=2, query="in:inbox", max_results=5)
    assert [bool(m.subject) for m in result.messages] == [True, True, False, False, False]


# 6. rate limits and retries --------------------------------------------------------------------------------------


def test_one_429_then_success_retries_once():
    fake = FakeGmail([gmail_error(429, "rateLimitExceeded", "Rate Limit Exceeded"), list_page([])])
    search(fake, query="in:inbox")
    assert fake.sleeps == [1.0]


def test_persistent_429_gives_rate_limited_after_three_retries():
    fake = FakeGmail([gmail_error(429, "rateLimitExceeded", "Rate Limit Exceeded")] * 4)
    with pytest.raises(RateLimitedError) as caught:
        search(fake, query="in:inbox")
    assert fake.sleeps == [1.0, 2.0, 4.0]
    assert caught.value.retry_count == 3 and caught.value.code == "rate_limited"


def test_503_gives_transient_after_two_retries():
    fake = FakeGmail([gmail_error(503, "backendError", "Backend Error")] * 3)
    with pytest.raises(TransientError) as caught:
        search(fake, query="in:inbox")
    assert fake.sleeps == [1.0, 2.0] and caught.value.retry_count == 2


# 7. input validation happens before any call ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments, fragment",
    [
        ({"query": ""}, "in:inbox"),
        ({"query": "   "}, "in:inbox"),
        ({"query": "x", "max_results": 100}, "less than or equal to 50"),
        ({"query": "x", "max_results": 0}, "greater than or equal to 1"),
        ({"query": "x", "max_results": True}, "not a boolean"),
        ({"query": "x", "newer_than_days": 0}, "greater than or equal to 1"),
        ({"query": "x", "label_ids": ["Wo\x01rk"]}, "control characters"),
        ({"query": "x", "maxResults": 5}, "Extra inputs"),
        ({}, "Field required"),
    ],
)
def test_invalid_arguments_fail_before_gmail_is_called(arguments, fragment):
    with pytest.raises(ValidationError) as caught:
        SearchMessagesInput(**arguments)
    assert fragment in str(caught.value)


def test_empty_query_is_fine_with_a_filter():
    assert SearchMessagesInput(query="", newer_than_days=30).query == ""
    assert SearchMessagesInput(query="", label_ids=["STARRED"]).label_ids == ["STARRED"]
