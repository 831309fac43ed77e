"""One module per family of Elasticsearch endpoints."""
