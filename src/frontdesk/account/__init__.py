"""The customer's own page (``/v1/{tenantKey}/account``): signed in through the company's
login, it lists the assistants connected to their account and cuts one off.

May import: sign-in (``oauth``, ``login``), the store and everything below them.
"""
