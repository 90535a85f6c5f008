"""Tool providers: where a company's tool calls are answered.

May import: the store (signing keys), outbound calls, sealing, ``limits`` and the
foundations; never the companies, which build on the tools.
"""
