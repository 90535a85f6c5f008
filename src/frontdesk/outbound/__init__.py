"""Outbound calls: every request Frontdesk makes to a company's API, its identity provider
or a stranger's document, and the address policy each must pass.

May import: the root foundations (``config``, ``errors``, ``domain``), ``limits``,
``sealing`` and ``observability``. Nothing here knows a route, a page or the store.
"""
