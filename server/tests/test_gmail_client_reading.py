"""The client's reading endpoints on the wire (HttpMockSequence: the real google-api-python-client, no network):
threads.get, attachments.get, labels.list, labels.get in a batch; what a 404 means per endpoint; and the account
cache that keeps the profile address and the label list."""

from __future__ import annotations

import pytest

from server.errors import NotFoundError, TransientError
from server.gmail.account_cache import AccountCache
from server.tests.support.fake_gmail import FakeGmail, batch_response, gmail_error, json_response
from server.toolsets.threads.get_thread import plan_bodies

NOT_FOUND = gmail_error(404, "notFound", "Requested entity was not found.")


def test_thread_get_asks_for_one_thread_in_the_format_and_headers_given():
    fake = FakeGmail([json_response({"id": "t1", "messages": []})] * 2)
    fake.client.get_thread("t1")
    fake.client.get_thread("t1", fmt="metadata", metadata_headers=["From", "References"])
    assert fake.uris[0].split("?")[0].endswith("/gmail/v1/users/me/threads/t1")
    assert fake.query_params(0)["format"] == ["full"] and "metadataHeaders" not in fake.query_params(0)
    assert fake.query_params(1)["metadataHeaders"] == ["From", "References"]


def test_attachment_and_label_endpoints():
    fake = FakeGmail(
        [
            json_response({"size": 3, "data": "YWJj"}),
            json_response({"labels": [{"id": "INBOX", "name": "INBOX", "type": "system"}]}),
            batch_response(
                {
                    "INBOX": (200, {"id": "INBOX", "messagesTotal": 5, "messagesUnread": 1}),
                    "Label_9": (
                        404,
                        {"error": {"code": 404, "message": "Not Found", "errors": [{"reason": "notFound"}]}},
                    ),
                }
            ),
        ]
    )
    assert fake.client.get_attachment("m1", "ATT")["data"] == "YWJj"
    assert fake.uris[0].split("?")[0].endswith("/gmail/v1/users/me/messages/m1/attachments/ATT")
    assert fake.client.list_labels()["labels"][0]["id"] == "INBOX"
    counts = fake.client.get_labels(["INBOX", "Label_9", "INBOX"])
    assert counts["INBOX"]["messagesTotal"] == 5 and isinstance(counts["Label_9"], NotFoundError)
    assert "label" in counts["Label_9"].message and "gmail_list_labels" in counts["Label_9"].hint
    assert fake.uris[2].endswith("/batch/gmail/v1")


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda client: client.get_thread("t1"), ("thread", "thread_id")),
        (lambda client: client.get_attachment("m1", "a1"), ("attachment", "part_id")),
        (lambda client: client.get_message("m1"), ("message", "message_id")),
    ],
)
def test_a_404_says_what_was_not_found(call, words):
    fake = FakeGmail([NOT_FOUND])
    with pytest.raises(NotFoundError) as caught:
        call(fake.client)
    assert words[0] in caught.value.message.lower() and words[1] in caught.value.hint


class CountingGmail:
    def __init__(self) -> None:
        self.profiles = self.lists = 0
        self.fail = False

    def get_profile(self):
        self.profiles += 1
        if self.fail:
            raise TransientError("down")
        return {"emailAddress": "me@example.com"}

    def list_labels(self):
        self.lists += 1
        return {"labels": [{"id": "INBOX", "name": "INBOX"}, {"name": "no id"}]}


def test_the_account_cache_keeps_the_address_and_labels_for_their_time():
    now = [0.0]
    gmail = CountingGmail()
    cache = AccountCache(gmail, clock=lambda: now[0], labels_ttl_s=300, profile_ttl_s=3600)  # type: ignore[arg-type]
    assert cache.labels_age_s() is None
    assert cache.own_address() == cache.own_address() == "me@example.com" and gmail.profiles == 1
    assert [label["id"] for label in cache.labels()] == ["INBOX"]  # a label without an id is dropped
    now[0] = 299
    cache.labels()
    assert gmail.lists == 1 and cache.labels_age_s() == 299
    now[0] = 301
    cache.labels()
    cache.labels(refresh=True)
    assert gmail.lists == 3
    now[0] = 4000
    gmail.fail = True
    with pytest.raises(TransientError):
        cache.own_address()  # a failure is not kept: the next call asks again
    gmail.fail = False
    assert cache.own_address() == "me@example.com" and gmail.profiles == 3


def test_thread_budget_goes_to_the_newest_messages_first():
    heads, lengths = [100] * 10, [1000] * 10
    plan = plan_bodies(heads, lengths, per_message=4000, total=4000)
    assert plan.shown[-2:] == [1000, 1000] and plan.shown[:7] == [0] * 7  # 3,000 for bodies (a quarter kept)
    assert 0 < plan.shown[7] < 1000  # the last one that fits is cut, not dropped
    assert plan.listed_from <= 7 and sum(plan.shown) + 100 * (10 - plan.listed_from) <= 4000
    small = plan_bodies([100, 100], [50, 0], per_message=4000, total=60_000)
    assert small.shown == [50, 0] and small.listed_from == 0
    stub = plan_bodies([100, 100], [5000, 5000], per_message=4000, total=4400)
    assert stub.shown == [0, 4000] and stub.listed_from == 0  # no 100-character stub: listed without its text
