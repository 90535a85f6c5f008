"""Companies: their definitions, the file operators manage them with, and lookup by tenant key."""
