"""One shard's data and logic (no Ray, no asyncio); see ``../shared/DESIGN.md`` (beside the repository)."""
