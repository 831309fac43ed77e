import json
def test_scratch(es):
    r = es.post("/t/_update/1", json={"doc": {"a": 1}}); print(r.status_code, r.text)
    r = es.post("/t/_update/1", json={"doc": {"a": 1}, "doc_as_upsert": True}); print(r.status_code, r.text)
    r = es.post("/t/_update/1?_source=true", json={"doc": {"a": 1}}); print(r.status_code, r.text)
    r = es.post("/t/_update/1?_source=true&refresh=true", json={"doc": {"b": {"c": 2}}}); print(r.status_code, r.text)
    r = es.post("/t/_update/1?if_seq_no=0&if_primary_term=1", json={"doc": {"b": 3}}); print(r.status_code, r.text)
    r = es.put("/t/_doc/2?version=5&version_type=external", json={"x": 1}); print(r.status_code, r.text)
    r = es.put("/t/_doc/2?version=5&version_type=external", json={"x": 1}); print(r.status_code, r.text)
    r = es.put("/t/_doc/2?version=5&version_type=external_gte", json={"x": 1}); print(r.status_code, r.text)
    r = es.put("/t/_doc/2?version=5", json={"x": 1}); print(r.status_code, r.text)
    r = es.get("/t/_doc/2?version=4"); print(r.status_code, r.text)
    body = "\n".join(json.dumps(x) for x in [{"update": {"_index": "t", "_id": "1"}}, {"doc": {"z": 1}}, {"index": {"_index": "t", "_id": "3"}}, {"q": 1}, {"update": {"_index": "t", "_id": "3", "_source": True}}, {"doc": {"q": 2}}, {"update": {"_index": "t", "_id": "3", "if_seq_no": 100, "if_primary_term": 200}}, {"doc": {"q": 2}}]) + "\n"
    r = es.post("/_bulk", content=body, headers={"content-type": "application/x-ndjson"}); print(r.status_code, r.text)
    r = es.get("/_msearch/"); print(r.status_code, r.text)
    r = es.get("/t/_search/"); print(r.status_code, r.text[:100])
