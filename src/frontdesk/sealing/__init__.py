"""Secrets and signatures: values sealed at rest under the operator's data keys, signed
values that travel through browsers and clients, and the CSRF token of a signed session.

May import: the root foundations only.
"""
