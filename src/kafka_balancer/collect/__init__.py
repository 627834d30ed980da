"""collect package."""
