"""Shipped models (the default static embedding model) and the script that builds them."""
