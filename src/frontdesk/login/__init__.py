"""Connectors to a company's own login: how its customers prove who they are."""
