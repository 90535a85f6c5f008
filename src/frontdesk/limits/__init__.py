"""Limits shared by every layer: request rates per caller, and how deep JSON may nest.

May import: nothing of Frontdesk's (a leaf).
"""
