"""The console for companies (``/console/``): a company's staff, or the deployment's
operators, sign in and manage the company's tools, sign-in, branding, clients and grants,
and read its audit and usage, through the same typed functions as the command line.

May import: ``administration``, ``openapi_import``, sign-in (``oauth``, ``login``,
``account``), the companies and everything below them.
"""
