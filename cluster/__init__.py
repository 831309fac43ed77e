"""The engine: shards, coordinator, and the pure logic they share (usable without HTTP)."""
