"""The demo company: a small coffee roaster, so a first run has real tools to call."""
