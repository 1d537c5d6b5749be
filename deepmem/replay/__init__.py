"""Replaying sessions step by step: the one replay loop, next-step support, and the audit of a user's history."""
