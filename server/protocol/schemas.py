"""Tool schemas for `tools/list`: pydantic's JSON Schema minus what costs context and tells a client nothing.

Every conversation pays for the `tools/list` answer, so the generated schemas are compacted by rules that keep
their meaning for the model and for validating clients:

- `title` keywords go (pydantic derives them from the property names they sit under);
- `anyOf: [X, {"type": "null"}]` becomes X: an optional argument is simply left out, and results never carry
  nulls (the dispatcher serializes them with `exclude_none`), so `null` is never a value anyone sends;
- `"default": null` goes, and output schemas lose every default (a result states its values) and every
  description (the model reads a result's text, where every field is spelled out; the field descriptions stay
  in the result models' source and the README);
- `$ref`s are inlined and `$defs` dropped (each definition is used once, and some clients resolve no refs);
- a property that admits null is never `required` (results leave such fields out when they are None), except a
  field the model declares without a default: the model always sends it, null included (`next_page_token`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

_NULL = {"type": "null"}


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The `inputSchema` of a tool whose arguments `model` validates."""
    return _compact(model.model_json_schema(), keep_defaults=True)


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The `outputSchema` of a tool whose result is `model` dumped with `by_alias=True, exclude_none=True`.

    Nested objects (a search's items, a thread's messages) are declared by their type only: the top-level fields
    say what a result holds, the structured content itself shows the rest, and every conversation pays for
    tools/list. What is declared still validates every result."""
    return _plain_nested(_compact(model.model_json_schema(mode="serialization", by_alias=True), keep_defaults=False))


def _plain_nested(schema: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """Below the top level's fields, only types (an object's fields, an array's item fields go)."""
    if depth >= 2:
        return _type_only(schema)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _plain_nested(sub, depth + 1) for name, sub in value.items()}
        elif key == "items" and isinstance(value, dict):
            out[key] = _plain_nested(value, depth + 1)
        elif key == "anyOf" and isinstance(value, list):
            out[key] = [_plain_nested(sub, depth) if isinstance(sub, dict) else sub for sub in value]
        else:
            out[key] = value
    return out


def _type_only(schema: dict[str, Any]) -> dict[str, Any]:
    if "anyOf" in schema:
        return {"anyOf": [_type_only(sub) for sub in schema["anyOf"] if isinstance(sub, dict)]}
    return {"type": schema["type"]} if "type" in schema else {}


def _compact(schema: dict[str, Any], *, keep_defaults: bool) -> dict[str, Any]:
    definitions = schema.get("$defs", {})
    compacted: dict[str, Any] = _node(schema, definitions, keep_defaults)
    compacted.pop("$defs", None)
    return compacted


def _node(node: Any, definitions: dict[str, Any], keep_defaults: bool, keep_null: bool = False) -> Any:
    if isinstance(node, list):
        return [_node(item, definitions, keep_defaults) for item in node]
    if not isinstance(node, dict):
        return node
    if keep_null:
        return _nullable(_node(node, definitions, keep_defaults))
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        return _node({**definitions[ref.removeprefix("#/$defs/")], **siblings}, definitions, keep_defaults)
    variants = node.get("anyOf")
    if isinstance(variants, list) and len(variants) == 2 and _NULL in variants:
        rest = {key: value for key, value in node.items() if key != "anyOf"}
        (kept,) = [variant for variant in variants if variant != _NULL]
        return _node({**kept, **rest}, definitions, keep_defaults)
    out: dict[str, Any] = {}
    required = set(node.get("required") or ()) if not keep_defaults else set()  # output schemas only
    nullable = {name for name, sub in (node.get("properties") or {}).items() if _admits_null(sub)}
    always_sent = nullable & required
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and (value is None or not keep_defaults):
            continue
        if key == "description" and not keep_defaults and isinstance(value, str):
            continue  # output schemas: see the module docstring
        if key == "required" and isinstance(value, list) and nullable:
            # A field that may be None is left out of a result, so it cannot be required.
            out[key] = [name for name in value if name not in nullable or name in always_sent]
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            # Property names are data here, never keywords: a property called "title" stays.
            out[key] = {
                name: _node(sub, definitions, keep_defaults, keep_null=key == "properties" and name in always_sent)
                for name, sub in value.items()
            }
        else:
            out[key] = _node(value, definitions, keep_defaults)
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """The compacted schema of a field that is always sent and may be null.

    Spelled `anyOf` with one type per branch, not `"type": [X, "null"]`: clients that map tool schemas onto a
    single-type dialect reject the array form (the MCP Inspector's --strict check flags it).
    """
    annotations = {key: schema[key] for key in ("description",) if key in schema}
    branch = {key: value for key, value in schema.items() if key not in annotations}
    return {"anyOf": [branch, _NULL], **annotations}


def _admits_null(schema: Any) -> bool:
    return isinstance(schema, dict) and _NULL in (schema.get("anyOf") or ())


ACCOUNT_ARGUMENT = "account"


def with_accounts(schema: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """An input schema offering `account` as an enum of the configured `names` (default first), or, with one
    account, not at all: a single-account server pays nothing for the feature in `tools/list`."""
    properties = dict(schema.get("properties") or {})
    if len(names) > 1:
        properties[ACCOUNT_ARGUMENT] = {
            "type": "string",
            "enum": list(names),
            "description": f"Which account's mailbox to use (default: {names[0]}).",
        }
    else:
        properties.pop(ACCOUNT_ARGUMENT, None)
    return {**schema, "properties": properties}


def with_mailbox(schema: dict[str, Any], several: bool) -> dict[str, Any]:
    """An output schema that also declares `mailbox` (the Google address the result comes from) and, with
    several accounts, `account` (the account's name)."""
    # No description: the name and an address as its value say it, and every tool's schema carries it.
    properties = {**(schema.get("properties") or {}), "mailbox": {"type": "string"}}
    if several:
        properties[ACCOUNT_ARGUMENT] = {"type": "string"}
    return {**schema, "properties": properties}
