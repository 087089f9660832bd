"""The keys that seal 2026-07-28 `requestState`, the same on every replica of a deployment.

A client of the 2026-07-28 revision may send the repeat of a call (with the `requestState` the first answer gave
it) to any replica behind the load balancer, so every replica must open what another sealed. The SDK's
`RequestStateSecurity(keys=[...])` seals with `keys[0]` and opens with any key of the ring, and binds each state to
the server name (`gmail`, the same everywhere) and the tool and arguments.

Where the ring comes from: derived deterministically (HKDF-SHA256, its own salt and info) from the vault key every
replica already shares, `GMAIL_MCP_TOKEN_KEY`, which seals the Google grants in the state store. Chosen over a ring
kept in the store (first replica to `add` a period's key wins) because it costs no store round trip when sealing
or opening, works while the store is unreachable, needs no rotation schedule of its own, and adds no secret to
distribute: replicas that can read each other's Google grants can open each other's request states, and no
others. The vault key itself never seals request states (a separate key is derived from it).

Rotation: the ring follows the vault key. `previous` keys (the vault keys being rotated out) open states sealed
before a rotation; request states live at most `STATE_TTL_S`, so an overlap that long is enough.
"""

from __future__ import annotations

from collections.abc import Sequence

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from mcp.server.request_state import RequestStateSecurity

SALT = b"gmail-mcp request-state key ring"
INFO = b"gmail-mcp/request-state/v1"
STATE_TTL_S = 600.0  # the SDK's default lifetime of a sealed request state


def derive_key(vault_key: bytes) -> bytes:
    """The 32-byte request-state key of one vault key (the same on every replica given the same vault key)."""
    if not vault_key:
        raise ValueError("the request-state key ring needs the vault key (GMAIL_MCP_TOKEN_KEY)")
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=SALT, info=INFO).derive(vault_key)


def key_ring(vault_key: bytes, previous: Sequence[bytes] = ()) -> list[bytes]:
    """The ring: the current vault key's key first (it seals), then those of `previous` vault keys (open only)."""
    ring = [derive_key(vault_key)]
    for old in previous:
        key = derive_key(old)
        if key not in ring:
            ring.append(key)
    return ring


def request_state_security(vault_key: bytes, previous: Sequence[bytes] = ()) -> RequestStateSecurity:
    """The SDK's request-state policy over the shared ring (see the module docstring)."""
    return RequestStateSecurity(keys=key_ring(vault_key, previous), ttl=STATE_TTL_S)
