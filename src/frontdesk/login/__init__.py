"""Connectors to a company's own login: how its customers prove who they are.

May import: the companies, outbound calls, sealing and the foundations; never ``oauth``,
which builds on it.
"""
