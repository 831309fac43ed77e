"""The HTTP front end: Elasticsearch's REST API mapped onto the coordinator."""
