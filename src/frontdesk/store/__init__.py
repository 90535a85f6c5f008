"""Storage: tables, migrations and repositories. Protocol code never writes SQL."""
