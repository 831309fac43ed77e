"""Tantivy (0.27, ``tantivy`` on PyPI) as a benchmark peer: one in-memory index per name."""
from __future__ import annotations

import threading
from typing import Any

import orjson

from .common import Search, sort_of, text_of


class TantivyPeer:
    """One in-memory Tantivy index per index name; ``_source`` kept as bytes beside it."""

    def __init__(self) -> None:
        self.indices: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()

    def create(self, name: str, text_field: str, sort_field: str) -> None:
        import tantivy
        sb = tantivy.SchemaBuilder()
        sb.add_text_field(text_field, stored=False)
        sb.add_text_field(sort_field, stored=False, tokenizer_name="raw", fast=True)
        sb.add_unsigned_field("_ord", stored=True, fast=True, indexed=False)
        schema = sb.build()
        index = tantivy.Index(schema)
        writer = index.writer(heap_size=256_000_000, num_threads=2)
        self.indices[name] = {"schema": schema, "index": index, "writer": writer, "ids": [],
                              "sources": [], "text": text_field, "sort": sort_field}

    def bulk(self, name: str, docs: list[tuple[str, bytes, dict[str, Any]]]) -> None:
        import tantivy
        ix = self.indices[name]
        with self.lock:
            for doc_id, src, doc in docs:
                ord_ = len(ix["ids"])
                ix["ids"].append(doc_id)
                ix["sources"].append(src)
                d = tantivy.Document()
                d.add_text(ix["text"], text_of(doc.get(ix["text"])))
                d.add_text(ix["sort"], sort_of(doc.get(ix["sort"])))
                d.add_unsigned("_ord", ord_)
                ix["writer"].add_document(d)

    def refresh(self, name: str) -> None:
        ix = self.indices[name]
        with self.lock:
            ix["writer"].commit()
            ix["writer"].wait_merging_threads()
            ix["writer"] = ix["index"].writer(heap_size=256_000_000, num_threads=2)
            ix["index"].reload()

    def search(self, name: str, s: Search) -> tuple[int, list[dict[str, Any]], float | None]:
        import tantivy
        ix = self.indices[name]
        searcher = ix["index"].searcher()
        if s.term is None:
            query = tantivy.Query.all_query()
        else:
            query = ix["index"].parse_query(s.term, [ix["text"]])
        kwargs: dict[str, Any] = {"limit": max(s.size, 1), "count": True, "offset": s.from_}
        if s.sort_field is not None:
            kwargs["order_by_field"] = s.sort_field
            kwargs["order"] = tantivy.Order.Desc if s.sort_desc else tantivy.Order.Asc
        res = searcher.search(query, **kwargs)
        hits = []
        max_score = None
        for key, addr in res.hits[:s.size]:
            ord_ = searcher.doc(addr)["_ord"][0]
            hit: dict[str, Any] = {"_index": name, "_id": ix["ids"][ord_],
                                   "_score": None if s.sort_field else key,
                                   "_source": orjson.Fragment(ix["sources"][ord_])}
            if s.sort_field:
                hit["sort"] = [key]
            elif max_score is None:
                max_score = key
            hits.append(hit)
        return res.count, hits, max_score
