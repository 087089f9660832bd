"""Text: charsets and their guessing, HTML to text, links, calendar summaries, tidying, slicing, snippets."""
