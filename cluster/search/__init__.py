"""The phases of a search at the coordinator (request, query, fetch, reduce, response)."""
