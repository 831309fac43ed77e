"""One shard's data and logic (no Ray, no asyncio); see ``/work/shared/DESIGN.md``."""
