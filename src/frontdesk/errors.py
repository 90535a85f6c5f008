"""Errors shared by every layer that are not part of a wire protocol."""


class FrontdeskError(Exception):
    """Base of every error Frontdesk raises on purpose."""


class ConfigurationError(FrontdeskError):
    """The settings or a companies file cannot be used as given."""


class DatabaseNotReady(FrontdeskError):
    """The database could not be migrated or seeded, so the service does not start."""


class CannotListen(FrontdeskError):
    """The address to serve on cannot be bound (taken, or not this machine's)."""
