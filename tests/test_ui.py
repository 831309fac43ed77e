"""``GET /_ui`` in a real headless browser (Debian's ``chromium`` driven by Selenium through
``chromedriver``; never a downloaded browser): search, page forward and back with from/size,
page with search_after, each page's hits equal to the API's answer for the same request; the
per-shard profile table; the indices and shards view. Skips, naming the packages, when the
browser is not installed (``apt-get install -y chromium chromium-driver``)."""
from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


@pytest.fixture
def browser() -> Iterator[Any]:
    if not (shutil.which(CHROMIUM) and shutil.which(DRIVER)):
        pytest.skip("no headless browser: install Debian's chromium and chromium-driver "
                    "(apt-get install -y chromium chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


@pytest.fixture
def books(es: httpx.Client) -> httpx.Client:
    es.put("/books", json={"settings": {"number_of_shards": 3, "number_of_replicas": 0},
                           "mappings": {"properties": {"title": {"type": "text"},
                                                       "year": {"type": "long"}}}})
    lines = []
    for i in range(25):
        lines += [json.dumps({"index": {"_index": "books", "_id": f"b{i}"}}),
                  json.dumps({"title": f"fox book {i}" if i % 2 else f"dog book {i}",
                              "year": 1900 + i})]
    r = es.post("/_bulk?refresh=true", content="\n".join(lines) + "\n",
                headers={"content-type": "application/x-ndjson"})
    assert not r.json()["errors"]
    return es


def _wait(driver: Any, check: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(driver, 30).until(lambda d: check(d))


def _shown_ids(driver: Any) -> list[str]:
    """The ``_id`` column of the hits table, read in one step (the page may be redrawing)."""
    return driver.execute_script(
        "return [...document.querySelectorAll('#hits tbody tr')].map(r => r.cells[2].textContent)")


def _api_ids(es: httpx.Client, body: dict[str, Any]) -> list[str]:
    return [h["_id"] for h in es.post("/books/_search", json=body).json()["hits"]["hits"]]


def _click_and_wait(driver: Any, button: str, expected: list[str]) -> None:
    from selenium.webdriver.common.by import By
    driver.find_element(By.ID, button).click()
    _wait(driver, lambda d: _shown_ids(d) == expected)


def test_the_page_searches_pages_and_shows_profile_and_cluster(
        browser: Any, books: httpx.Client, base_url: str) -> None:
    from selenium.webdriver.common.by import By
    browser.get(f"{base_url}/_ui")
    _wait(browser, lambda d: "books" in d.find_element(By.ID, "indices").text)
    shards = books.get("/_cat/shards?format=json").json()
    assert len(browser.find_elements(By.CSS_SELECTOR, "#shards tbody tr")) == len(shards) == 3
    health = books.get("/_cluster/health").json()["status"]
    assert health in browser.find_element(By.ID, "health").text
    for field, value in (("index", "books"), ("size", "4"), ("sort", "year:asc")):
        el = browser.find_element(By.ID, field)
        el.clear()
        el.send_keys(value)
    browser.find_element(By.ID, "dsl").send_keys('{"match": {"title": "fox"}}')
    page = {"query": {"match": {"title": "fox"}}, "sort": [{"year": "asc"}], "size": 4}
    _click_and_wait(browser, "search", _api_ids(books, {**page, "from": 0}))
    assert "total: 12" in browser.find_element(By.ID, "summary").text
    _click_and_wait(browser, "next", _api_ids(books, {**page, "from": 4}))
    _click_and_wait(browser, "next", _api_ids(books, {**page, "from": 8}))
    _click_and_wait(browser, "prev", _api_ids(books, {**page, "from": 4}))
    last = books.post("/books/_search", json={**page, "from": 4}).json()["hits"]["hits"][-1]
    _click_and_wait(browser, "after", _api_ids(books, {**page, "search_after": last["sort"]}))
    profile = browser.execute_script(
        "return [...document.querySelectorAll('#profile tbody tr')].map(r => r.textContent)")
    assert len(profile) == 3
    assert all("[books][" in r for r in profile)


def test_the_page_shows_the_apis_error(browser: Any, books: httpx.Client, base_url: str) -> None:
    from selenium.webdriver.common.by import By
    browser.get(f"{base_url}/_ui")
    browser.find_element(By.ID, "index").clear()
    browser.find_element(By.ID, "index").send_keys("nope")
    browser.find_element(By.ID, "search").click()
    _wait(browser, lambda d: "index_not_found_exception" in d.find_element(By.ID, "error").text)


def test_the_page_and_script_are_served(base_url: str) -> None:
    page = httpx.get(f"{base_url}/_ui")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script src="/_ui/ui.js">' in page.text
    script = httpx.get(f"{base_url}/_ui/ui.js")
    assert script.status_code == 200 and "search_after" in script.text
