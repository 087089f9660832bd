"""The `fields=` partial-response parameter of Google APIs.

Grammar (the subset Google documents, which is what clients send)::

    fields    := selection ("," selection)*
    selection := path ["(" fields ")"]          payload(headers,parts(partId,body))
    path      := name ("/" name)*                payload/headers
    name      := identifier | "*"

A selection names fields of the response resource; names are checked against the resource's schema, so a
typo such as `payload/header` answers 400 "Invalid field selection" as Google does, instead of silently
returning nothing. Lists are transparent: `messages(id)` applies `id` to every element.
"""

from __future__ import annotations

import re
from typing import Any

from .errors import ApiError

# A schema maps field name -> sub-schema, or None for a scalar / scalar list.
Schema = dict[str, Any]
Tree = dict[str, Any]  # name -> sub-tree, or None for "the whole field"

_BODY: Schema = {"attachmentId": None, "size": None, "data": None}
_HEADER: Schema = {"name": None, "value": None}
PART: Schema = {"partId": None, "mimeType": None, "filename": None, "headers": _HEADER, "body": _BODY}
PART["parts"] = PART
MESSAGE: Schema = {
    "id": None,
    "threadId": None,
    "labelIds": None,
    "snippet": None,
    "historyId": None,
    "internalDate": None,
    "payload": PART,
    "sizeEstimate": None,
    "raw": None,
    "classificationLabelValues": None,
}
MESSAGE_LIST: Schema = {"messages": MESSAGE, "nextPageToken": None, "resultSizeEstimate": None}
THREAD: Schema = {"id": None, "snippet": None, "historyId": None, "messages": MESSAGE}
LABEL: Schema = {
    "id": None,
    "name": None,
    "messageListVisibility": None,
    "labelListVisibility": None,
    "type": None,
    "messagesTotal": None,
    "messagesUnread": None,
    "threadsTotal": None,
    "threadsUnread": None,
    "color": {"textColor": None, "backgroundColor": None},
}
LABEL_LIST: Schema = {"labels": LABEL}
PROFILE: Schema = {"emailAddress": None, "messagesTotal": None, "threadsTotal": None, "historyId": None}
ATTACHMENT: Schema = _BODY
_HISTORY_MESSAGE: Schema = {"message": MESSAGE}
_LABEL_CHANGE: Schema = {"message": MESSAGE, "labelIds": None}
HISTORY: Schema = {
    "id": None,
    "messages": MESSAGE,
    "messagesAdded": _HISTORY_MESSAGE,
    "messagesDeleted": _HISTORY_MESSAGE,
    "labelsAdded": _LABEL_CHANGE,
    "labelsRemoved": _LABEL_CHANGE,
}
HISTORY_LIST: Schema = {"history": HISTORY, "nextPageToken": None, "historyId": None}

_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*|\*|[,/()])")


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens: list[str] = []
        position = 0
        text = text.strip()
        while position < len(text):
            match = _TOKEN.match(text, position)
            if match is None:
                raise _invalid(text)
            self.tokens.append(match.group(1))
            position = match.end()
        self.text = text
        self.position = 0

    def peek(self) -> str:
        return self.tokens[self.position] if self.position < len(self.tokens) else ""

    def take(self) -> str:
        token = self.peek()
        self.position += 1
        return token

    def fields(self, tree: Tree) -> None:
        self.selection(tree)
        while self.peek() == ",":
            self.take()
            self.selection(tree)

    def selection(self, tree: Tree) -> None:
        names = [self.name()]
        while self.peek() == "/":
            self.take()
            names.append(self.name())
        sub: Tree | None = None
        if self.peek() == "(":
            self.take()
            sub = {}
            self.fields(sub)
            if self.take() != ")":
                raise _invalid(self.text)
        _add(tree, names, sub)

    def name(self) -> str:
        token = self.take()
        if not token or token in ",/()":
            raise _invalid(self.text)
        return token


def _add(tree: Tree, names: list[str], sub: Tree | None) -> None:
    head, rest = names[0], names[1:]
    if head in tree and tree[head] is None:
        return  # already selected whole
    if not rest and sub is None:
        tree[head] = None
        return
    child = tree.setdefault(head, {})
    if rest:
        _add(child, rest, sub)
        return
    for name, value in (sub or {}).items():
        _add(child, [name], value)


def _invalid(text: str) -> ApiError:
    return ApiError(400, "invalidParameter", f"Invalid field selection {text}")


def _validate(tree: Tree, schema: Schema, prefix: str) -> None:
    for name, sub in tree.items():
        path = f"{prefix}{name}"
        if name == "*":
            continue
        if name not in schema:
            raise _invalid(path)
        if sub is not None:
            if schema[name] is None:
                raise _invalid(f"{path}/{next(iter(sub), '')}")
            _validate(sub, schema[name], path + "/")


def parse_fields(text: str, schema: Schema) -> Tree:
    """Parses and validates a `fields` value against a resource schema; ApiError(400) when invalid."""
    parser = _Parser(text)
    tree: Tree = {}
    parser.fields(tree)
    if parser.position != len(parser.tokens):
        raise _invalid(text)
    _validate(tree, schema, "")
    return tree


def select(value: Any, tree: Tree | None) -> Any:
    """Keeps only the selected fields of a JSON value; empty objects left behind are dropped."""
    if tree is None:
        return value
    if isinstance(value, list):
        return [select(item, tree) for item in value]
    if not isinstance(value, dict):
        return value
    picked: dict[str, Any] = {}
    for key, item in value.items():
        if key in tree or "*" in tree:
            chosen = select(item, tree[key] if key in tree else tree["*"])
            if chosen != {}:
                picked[key] = chosen
    return picked


def apply_fields(resource: dict[str, Any], fields: str, schema: Schema) -> dict[str, Any]:
    """The resource trimmed to `fields` (unchanged when `fields` is empty)."""
    if not fields.strip():
        return resource
    return select(resource, parse_fields(fields, schema))
