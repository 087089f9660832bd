"""What is suspicious about a message, judged from the message alone: sender authentication, sender identity, text
hidden from its reader. Pure (no I/O); the tools layer (`server/toolsets/envelope.py`) turns it into results."""
