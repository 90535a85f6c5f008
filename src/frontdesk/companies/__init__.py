"""Companies: their definitions, the file operators manage them with, and lookup by tenant key.

May import: tools, usage, the store, outbound calls, sealing and the foundations; never
sign-in or a route.
"""
