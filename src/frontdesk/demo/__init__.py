"""The demo company: a small coffee roaster, so a first run has real tools to call.

May import: the companies and tools below it, as any company's code would.
"""
