"""Importing a company's OpenAPI document as tools of the ``openapi`` provider.

document (read, fetch and validate a document), schemas (an OpenAPI schema as the JSON
Schema a tool declares), operations (each operation as a tool), plan (the diff against the
company's tools, and applying it).

May import: ``administration``, the companies, outbound calls, the store and everything
below them.
"""

from frontdesk.errors import FrontdeskError


class ImportRefused(FrontdeskError):
    """The document cannot be imported as given; the message says what, and where."""
