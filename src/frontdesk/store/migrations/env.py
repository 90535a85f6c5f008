"""Alembic runs migrations on the connection Database.migrate hands it."""

from alembic import context

from frontdesk.store.tables import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata)
with context.begin_transaction():
    context.run_migrations()
