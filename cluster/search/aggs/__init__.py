"""Aggregations at the coordinator: reduce the shards' partials, run pipelines, render."""
from __future__ import annotations

from .render import aggregations_response

__all__ = ["aggregations_response"]
