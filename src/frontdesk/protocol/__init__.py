"""The MCP endpoint: JSON-RPC 2.0 over HTTP POST at ``/v1/{tenantKey}/mcp``.

Named ``protocol`` so that it never shadows the ``mcp`` SDK package.

May import: sign-in's grant rules (``oauth``), the companies, tools, usage, the edge
helpers (``web``) and everything below them; never another route family.
"""
