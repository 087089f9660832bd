"""Helpers of gmail_client: Gmail error translation, retry policy, quota limiter, batch bodies, query syntax."""
