"""Outgoing mail, built without I/O: recipients, reply threading, quoting, MIME, and the confirmation summary.

addresses  parse and validate recipients; tell the person's own addresses apart
reply      threading headers, Re:/Fwd: subjects, reply and reply-all recipients from the original's headers
quoting    the original quoted under a reply, or set out under a forward (plain text and HTML)
build      OutgoingMessage -> RFC 5322 bytes (RFC 2047/2231 encodings, attachments)
reading    raw bytes -> body text, HTML and attachments with their bytes (forwarding, editing a draft)
summary    what the person sees before a send, and the digest binding their yes to that exact draft
"""
