"""What operators and companies may do to a company's stored state, as typed functions the
CLI, the admin API and the console share: its state, its definition as a document, its
admin keys, and the database a command works on.

May import: the store, the companies' definitions and everything below them; never a route.
"""
