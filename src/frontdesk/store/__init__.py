"""Storage: tables, migrations and repositories. Protocol code never writes SQL.

May import: sealing, observability, ``config`` and the foundations; nothing that uses
the store.
"""
