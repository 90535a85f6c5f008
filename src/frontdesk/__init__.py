"""Frontdesk: each company's assistant on MCP, with its customers signed in over OAuth 2.1."""

__version__ = "0.1.0"

__all__ = ["__version__"]
