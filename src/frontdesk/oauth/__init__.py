"""Customer sign-in: each company's OAuth 2.1 authorization server, under
``/v1/{tenantKey}/oauth``.

May import: ``login``, the companies, tools, the store, the edge helpers (``web``) and
everything below them; never the MCP endpoint, which builds on it.
"""
