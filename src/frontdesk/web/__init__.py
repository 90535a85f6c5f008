"""The HTTP edge: what every request passes before and around a route (request id, access
log, body deadline and caps, allowed methods, the client's address, unrouted paths) and the
raw-ASGI helpers the hot path uses instead of a framework's request objects.

May import: the root foundations, ``limits`` and ``observability``. The routes (``protocol``,
``oauth``, ``admin_api``, ``console``, ``account``) build on it; it knows none of them.
"""
