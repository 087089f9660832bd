"""messages.list: search documents, filtering, ordering and opaque page tokens.

The search engine itself lives in `search.py`; this module feeds it one `SearchDoc` per message (built once at
start-up) and applies the rules around it that Gmail applies: `labelIds` must all match (an unknown one is
400 `Invalid label: X`: n8n-io/n8n #902, GAM-team wiki "Users - Gmail - Messages/Threads"), SPAM and TRASH stay
out unless asked for (includeSpamTrash, labelIds, or in:spam / in:trash / in:anywhere in `q`), newest first, at
most 500 per page. A query is never refused: Gmail reads what it cannot parse as words (`search.py`).

Page tokens are opaque to clients but carry the offset and a fingerprint of the query they belong to (q,
labelIds, includeSpamTrash), signed with a per-process key. A token replayed with another query answers 400,
which catches the classic client bug of changing the query between pages.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import Message

from .errors import invalid_argument
from .mailbox_store import MailStore, StoredMessage
from .mime import filename, header_text, is_attachment, message_text, snippet
from .page_tokens import PageTokens
from .search import SearchDoc, compile_query

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 500
_HIDDEN = frozenset({"SPAM", "TRASH"})


def _user_label_names(stored: StoredMessage, store: MailStore) -> frozenset[str]:
    user_labels = [store.labels[i] for i in stored.label_ids if i in store.labels]
    return frozenset(label.name.lower() for label in user_labels if label.type == "user")


def search_doc(stored: StoredMessage, store: MailStore, text: str) -> SearchDoc:
    """What the query engine sees of one message: decoded headers, readable text, labels, file names."""
    message = stored.message
    return SearchDoc(
        from_=header_text(message, "From"),
        to=header_text(message, "To"),
        cc=header_text(message, "Cc"),
        bcc=header_text(message, "Bcc"),
        deliveredto=header_text(message, "Delivered-To"),
        list_id=header_text(message, "List-Id"),
        subject=stored.subject,
        body=text,
        labels=frozenset(stored.label_ids),
        label_names=_user_label_names(stored, store),
        filenames=tuple(filename(part) for part in message.walk() if is_attachment(part)),
        inline_images=any(_inline_image(part) for part in message.walk()),
        internal_date=stored.internal_date,
        size=stored.size,
        rfc822msgid=" ".join(str(message.get("Message-ID", "")).split()),
    )


def _inline_image(part: Message) -> bool:
    """An image shown in the body (cid: reference or inline disposition) rather than attached with a name."""
    return (
        not part.is_multipart()
        and part.get_content_maintype() == "image"
        and (part.get("Content-ID") is not None or part.get_content_disposition() == "inline")
    )


@dataclass(frozen=True)
class ListRequest:
    q: str = ""
    label_ids: tuple[str, ...] = ()
    max_results: int = DEFAULT_PAGE_SIZE
    page_token: str = ""
    include_spam_trash: bool = False


class MessageIndex:
    """Per-message derived data (snippet, search document), computed once per message, plus the list operation.

    The mailbox can change while requests are served (`mailbox_changes.py`): `docs` is replaced, never changed in
    place, so a listing works on the tuple it took; the change log calls `add`, `remove` and `relabel` under
    its lock, in the store's order (newest first).
    """

    def __init__(self, store: MailStore, key: bytes | None = None) -> None:
        self.store = store
        self._tokens = PageTokens(key)
        self.snippets: dict[str, str] = {}
        docs = []
        for stored in store.messages:  # newest first, the order list answers in
            docs.append((stored, self._document(stored)))
        self.docs: tuple[tuple[StoredMessage, SearchDoc], ...] = tuple(docs)

    def _document(self, stored: StoredMessage) -> SearchDoc:
        text = message_text(stored.message)
        self.snippets[stored.id] = snippet(text)
        return search_doc(stored, self.store, text)

    def add(self, stored: StoredMessage) -> None:
        """Indexes a new message; `store.messages` already holds it in its place."""
        known = {message.id: doc for message, doc in self.docs}
        known[stored.id] = self._document(stored)
        self.docs = tuple((message, known[message.id]) for message in self.store.messages)

    def remove(self, message_id: str) -> None:
        self.docs = tuple(pair for pair in self.docs if pair[0].id != message_id)
        self.snippets.pop(message_id, None)

    def relabel(self, stored: StoredMessage) -> None:
        """Refreshes what search sees of a message's labels after they changed."""
        self.relabel_many([stored])

    def relabel_many(self, changed: list[StoredMessage]) -> None:
        """`relabel` for many messages in one pass over the index (a batchModify of 1,000 ids)."""
        if not changed:
            return
        fresh = {id(m): (frozenset(m.label_ids), _user_label_names(m, self.store)) for m in changed}
        self.docs = tuple(
            (message, dataclasses.replace(doc, labels=new[0], label_names=new[1]) if new else doc)
            for message, doc in self.docs
            for new in (fresh.get(id(message)),)
        )

    def list(self, request: ListRequest, *, now_ms: int) -> dict[str, object]:
        """One page of messages.list."""
        for label_id in request.label_ids:
            if label_id not in self.store.labels:
                raise invalid_argument(f"Invalid label: {label_id}")
        query = compile_query(request.q, now_ms=now_ms, owner_email=self.store.email_address)
        wanted = set(request.label_ids)
        show_hidden = request.include_spam_trash or query.includes_spam_trash or bool(wanted & _HIDDEN)
        hits = [
            {"id": stored.id, "threadId": stored.thread_id}
            for stored, doc in self.docs  # one tuple, taken once: a change meanwhile replaces it
            if wanted <= doc.labels and (show_hidden or not doc.labels & _HIDDEN) and query.matches(doc)
        ]
        fingerprint = _fingerprint(request)
        offset = self._tokens.read(request.page_token, fingerprint, other="query") if request.page_token else 0
        page = hits[offset : offset + request.max_results]
        response: dict[str, object] = {}
        if page:
            response["messages"] = page
        if offset + request.max_results < len(hits):
            response["nextPageToken"] = self._tokens.mint(offset + request.max_results, fingerprint)
        response["resultSizeEstimate"] = len(hits)
        return response


def _fingerprint(request: ListRequest) -> str:
    material = json.dumps([request.q, sorted(request.label_ids), request.include_spam_trash])
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:16]


def parse_list_request(params: dict[str, Sequence[str]]) -> ListRequest:
    """Reads messages.list query parameters, clamping maxResults to 500 like Gmail."""
    raw_max = _last(params, "maxResults")
    max_results = DEFAULT_PAGE_SIZE
    if raw_max:
        try:
            max_results = int(raw_max)
        except ValueError:
            raise invalid_argument(f"Invalid value for maxResults: {raw_max}") from None
        if max_results < 1:
            raise invalid_argument(f"Invalid value for maxResults: {raw_max}")
    return ListRequest(
        q=_last(params, "q"),
        label_ids=tuple(params.get("labelIds", ())),
        max_results=min(max_results, MAX_PAGE_SIZE),
        page_token=_last(params, "pageToken"),
        include_spam_trash=parse_bool(_last(params, "includeSpamTrash"), "includeSpamTrash"),
    )


def parse_bool(value: str, name: str) -> bool:
    if value.lower() in ("", "false", "0"):
        return False
    if value.lower() in ("true", "1"):
        return True
    raise invalid_argument(f"Invalid value for {name}: {value}")


def _last(params: dict[str, Sequence[str]], name: str) -> str:
    values = params.get(name)
    return values[-1] if values else ""
