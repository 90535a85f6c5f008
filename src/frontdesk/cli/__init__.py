"""The ``frontdesk`` command: argument parsing only, each command forwarding to typed
functions in ``administration`` (and ``server`` for ``serve``).

May import: anything below it; nothing imports it.
"""
