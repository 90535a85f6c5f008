"""The serving process: Granian as published, the RSGI bridge it serves the application
through, and the guard that makes one stop signal stop it.

May import: the application and everything below it; nothing imports it but the CLI.
"""
