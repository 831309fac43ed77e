// The /_ui page: every request goes to the service's own REST API (same origin, same auth).
"use strict";
const $ = (id) => document.getElementById(id);
const state = { from: 0, after: null, lastSort: null, mode: "from" };

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  const data = await r.json();
  if (!r.ok) throw new Error(`${r.status} ${data.error ? data.error.type + ": " + data.error.reason : ""}`);
  return data;
}

function cell(row, text, cls) {
  const td = document.createElement("td");
  td.textContent = text === undefined || text === null ? "" : String(text);
  if (cls) td.className = cls;
  row.appendChild(td);
}

function fill(tableId, rows, cols) {
  const tbody = $(tableId).querySelector("tbody");
  tbody.replaceChildren();
  for (const r of rows) {
    const tr = document.createElement("tr");
    for (const c of cols) cell(tr, typeof c === "function" ? c(r) : r[c]);
    tbody.appendChild(tr);
  }
}

function requestBody() {
  const size = Math.max(1, Math.min(100, parseInt($("size").value, 10) || 10));
  const body = { size, profile: true, track_total_hits: true };
  const dsl = $("dsl").value.trim();
  const q = $("q").value.trim();
  if (dsl) body.query = JSON.parse(dsl);
  else if (q) body.query = { query_string: { query: q } };
  const sort = $("sort").value.trim();
  if (sort) {
    const [field, order] = sort.split(":");
    body.sort = [{ [field]: order || "asc" }];
  }
  return body;
}

async function run(mode) {
  $("error").textContent = "";
  let body;
  try { body = requestBody(); } catch (e) { $("error").textContent = "Query DSL: " + e.message; return; }
  if (mode === "first") { state.from = 0; state.after = null; }
  if (mode === "next") state.from += body.size;
  if (mode === "prev") state.from = Math.max(0, state.from - body.size);
  if (mode === "after") { body.search_after = state.after; state.from = 0; }
  else body.from = state.from;
  state.mode = mode === "after" ? "after" : "from";
  const index = encodeURIComponent($("index").value.trim() || "_all");
  try {
    show(await api("POST", `/${index}/_search`, body), body);
  } catch (e) {
    $("error").textContent = e.message;
  }
}

function show(resp, body) {
  const hits = resp.hits.hits;
  const total = resp.hits.total;
  const start = state.mode === "after" ? "search_after" : `from ${state.from}`;
  $("summary").textContent = `total: ${total.value}${total.relation === "gte" ? "+" : ""} · ` +
    `${hits.length} shown (${start}) · took ${resp.took} ms · shards ${resp._shards.successful}/${resp._shards.total}`;
  fill("hits", hits.map((h, i) => ({ ...h, n: i + 1 })), ["n", "_index", "_id", "_score",
    (h) => h.sort ? JSON.stringify(h.sort) : "", (h) => JSON.stringify(h._source)]);
  $("hits").querySelectorAll("tbody td:last-child").forEach((td) => td.className = "src");
  const last = hits.length ? hits[hits.length - 1] : null;
  state.after = last && last.sort ? last.sort : null;
  $("prev").disabled = state.mode !== "from" || state.from === 0;
  $("next").disabled = state.from + hits.length >= total.value || hits.length < body.size;
  $("after").disabled = !state.after || hits.length < body.size;
  const ms = (ns) => ns === null || ns === undefined ? "" : (ns / 1e6).toFixed(3);
  const shards = (resp.profile && resp.profile.shards) || [];
  fill("profile", shards, ["id", "node_id",
    (s) => ms(s.searches[0].query[0].time_in_nanos),
    (s) => ms(s.searches[0].collector[0].time_in_nanos),
    (s) => s.fetch ? ms(s.fetch.time_in_nanos) : "",
    (s) => s.shardsearch.candidates, (s) => s.shardsearch.k,
    (s) => ms(s.shardsearch.query_round_trip_ns)]);
}

async function cluster() {
  try {
    const h = await api("GET", "/_cluster/health");
    $("health").textContent = `cluster ${h.cluster_name}: ${h.status} · nodes ${h.number_of_nodes} · ` +
      `active shards ${h.active_shards} · unassigned ${h.unassigned_shards}`;
    fill("indices", await api("GET", "/_cat/indices?format=json"),
      ["index", "health", "pri", "rep", "docs.count", "store.size"]);
    fill("shards", await api("GET", "/_cat/shards?format=json"),
      ["index", "shard", "prirep", "state", "docs", "node"]);
  } catch (e) {
    $("error").textContent = e.message;
  }
}

$("search").addEventListener("click", () => run("first"));
$("q").addEventListener("keydown", (e) => { if (e.key === "Enter") run("first"); });
$("next").addEventListener("click", () => run("next"));
$("prev").addEventListener("click", () => run("prev"));
$("after").addEventListener("click", () => run("after"));
$("refresh").addEventListener("click", cluster);
cluster();
