"""Conformance tests the service cannot pass yet: ``"relative/file.yml::test name" -> reason``.

One list, so progress is visible: each entry is marked ``xfail(strict=True)``, so a test that
starts passing fails the run until its entry is removed here. Keys are paths relative to
``CONFORMANCE_DIR`` and the test's name as written in the YAML file.
"""
from __future__ import annotations

ISSUE4 = "issue 4: scroll/PIT/search_after not implemented yet"

XFAIL: dict[str, str] = {
    # core, waiting for the beyond-the-window issue
    "elasticsearch/search/90_search_after.yml::Format sort values":
        ISSUE4 + " (sort format strict_date_optional_time_nanos prints 9 fraction digits)",
    "opensearch/pit/10_basic.yml::Create PIT, Search with PIT ID and Delete":
        ISSUE4 + " (get_all_pits still lists PITs of earlier tests' deleted indices)",
    "opensearch/pit/10_basic.yml::Delete all":
        ISSUE4 + " (get_all_pits still lists PITs of earlier tests' deleted indices)",
    # stretch (INDEX.md)
    "elasticsearch/scroll/20_keep_alive.yml::Max keep alive":
        "stretch: cluster.put_settings (search.max_keep_alive) not implemented",
    "elasticsearch/search/350_point_in_time.yml::msearch":
        "stretch: msearch not implemented",
}
