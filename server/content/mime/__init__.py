"""The MIME tree: walking parts, choosing the body, decoding part payloads, raw RFC 822 messages."""
