package admin

import "html/template"

// statusPage is the status page: the report is embedded for the first
// paint, then the script polls status.json every two seconds.
var statusPage = template.Must(template.New("status").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>trawl status</title>
<style>
:root { --fg:#1d2330; --muted:#667085; --line:#e4e7ec; --bg:#f7f8fa; --card:#fff; --accent:#2563eb; --ok:#16a34a; --warn:#d97706; --bad:#dc2626; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg); background:var(--bg); }
header { display:flex; align-items:baseline; gap:1em; padding:14px 24px; background:var(--card); border-bottom:1px solid var(--line); }
header h1 { font-size:18px; margin:0; }
header .meta { color:var(--muted); }
main { padding:16px 24px; display:grid; gap:16px; max-width:1400px; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:14px 16px; }
h2 { font-size:15px; margin:0 0 10px; }
table { border-collapse:collapse; width:100%; }
th, td { text-align:right; padding:4px 8px; border-bottom:1px solid var(--line); white-space:nowrap; }
th:first-child, td:first-child, table.left th, table.left td { text-align:left; }
th { color:var(--muted); font-weight:600; font-size:12px; text-transform:uppercase; letter-spacing:.03em; }
td.uri { text-align:left; max-width:560px; overflow:hidden; text-overflow:ellipsis; }
.badge { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; font-weight:600; color:#fff; }
.crawling { background:var(--ok); } .suspended { background:var(--warn); } .zombie, .compacting { background:var(--bad); }
.bar { background:var(--line); border-radius:4px; height:8px; width:160px; display:inline-block; vertical-align:middle; }
.bar > span { display:block; height:8px; border-radius:4px; background:var(--accent); }
.charts { display:grid; grid-template-columns:repeat(auto-fit,minmax(300px,1fr)); gap:12px; }
.chart h3 { font-size:13px; margin:0 0 4px; color:var(--muted); font-weight:600; }
.chart svg { width:100%; height:120px; background:#fbfcfd; border:1px solid var(--line); border-radius:4px; }
.empty { color:var(--muted); }
section.alert { border-color:var(--bad); background:#fef2f2; }
section.alert h2 { color:var(--bad); }
details summary { cursor:pointer; color:var(--accent); margin:6px 0; }
</style>
</head>
<body>
<header><h1>trawl</h1><span class="meta" id="meta">{{.Role}} · {{.Time}}</span></header>
<main>
<section id="disk-section" class="alert" hidden><h2 id="disk-title">disk full: paused</h2><div id="disk"></div></section>
<section><h2>Collections</h2><div id="collections"></div></section>
<section id="chain-section" hidden><h2>Feeding chain</h2><div id="chain"></div></section>
<section><h2>Rates</h2><div class="charts" id="charts"></div></section>
<section id="sites-section"><h2>Sites</h2><div id="sites"></div></section>
<section id="analyses-section" hidden><h2>Link analysis</h2><div id="analyses"></div></section>
<section><h2>Recent errors</h2><div id="errors"></div></section>
<noscript><section>This page draws its tables with JavaScript; the same data is at <a href="status.json">status.json</a>.</section></noscript>
</main>
<script>
"use strict";
let data = {{.Data}};
const el = (tag, attrs, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  return e;
};
const num = n => Number(n || 0).toLocaleString("en-US");
const bytes = n => { n = Number(n || 0); const u = ["B","KB","MB","GB","TB"]; let i = 0; while (n >= 1024 && i < u.length-1) { n /= 1024; i++; } return (i ? n.toFixed(1) : n) + " " + u[i]; };
const when = t => new Date(t * 1000).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
function table(head, rows) {
  const t = el("table");
  t.append(el("tr", {}, ...head.map(h => el("th", {}, h))));
  for (const r of rows) t.append(el("tr", {}, ...r.map(c => c instanceof Node ? el("td", {}, c) : el("td", {}, c))));
  return t;
}
function collections(d) {
  const box = document.getElementById("collections");
  box.replaceChildren();
  if (!d.collections || !d.collections.length) { box.append(el("p", {class:"empty"}, "No collection is configured.")); return; }
  box.append(table(["collection","status","cycle","progress","downloaded","stored","modified","deleted","errors","received","queued","in flight","active sites","screen timeouts","feeding","mode"],
    d.collections.map(c => {
      const bar = el("span", {class:"bar", title: c.progress_text}, el("span", {style: "width:" + Math.max(0, Math.min(100, c.progress_percent)) + "%"}));
      return [c.name, el("span", {class: "badge " + c.status}, c.status + (c.idle && c.status === "crawling" ? " (idle)" : "")), c.cycle,
        el("span", {}, bar, " " + c.progress_percent + "%"), num(c.downloaded), num(c.stored), num(c.modified), num(c.deleted), num(c.errors),
        bytes(c.bytes), num(c.queued), num(c.in_flight), num(c.active_sites),
        c.screen_timeouts ? el("span", {class: "badge zombie", title: "URIs rejected because a regexp rule ran out of time on them"}, num(c.screen_timeouts)) : "0",
        c.feeding ? "on" : "paused",
        c.crawl_mode || (c.refresh_only ? "refresh only" : "normal")];
    })));
}
function chart(title, pts, key, fmt, color) {
  const W = 600, H = 120, P = 4;
  const box = el("div", {class: "chart"});
  const last = pts.length ? pts[pts.length-1][key] : 0;
  box.append(el("h3", {}, title + " — now " + fmt(last)));
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", title);
  const maxv = Math.max(1e-9, ...pts.map(p => p[key]));
  if (pts.length > 1) {
    const t0 = pts[0].t, t1 = pts[pts.length-1].t, span = Math.max(t1 - t0, 1e-9);
    const xy = pts.map(p => [P + (W-2*P) * (p.t - t0) / span, H - P - (H-2*P) * p[key] / maxv]);
    const line = xy.map((q, i) => (i ? "L" : "M") + q[0].toFixed(1) + " " + q[1].toFixed(1)).join(" ");
    const area = document.createElementNS(ns, "path");
    area.setAttribute("d", line + " L" + xy[xy.length-1][0].toFixed(1) + " " + (H-P) + " L" + xy[0][0].toFixed(1) + " " + (H-P) + " Z");
    area.setAttribute("fill", color); area.setAttribute("fill-opacity", "0.15");
    const path = document.createElementNS(ns, "path");
    path.setAttribute("d", line); path.setAttribute("fill", "none"); path.setAttribute("stroke", color); path.setAttribute("stroke-width", "2");
    path.setAttribute("vector-effect", "non-scaling-stroke");
    svg.append(area, path);
  }
  const lbl = document.createElementNS(ns, "text");
  lbl.setAttribute("x", "8"); lbl.setAttribute("y", "16"); lbl.setAttribute("font-size", "12"); lbl.setAttribute("fill", "#667085");
  lbl.textContent = "max " + fmt(maxv < 1e-6 ? 0 : maxv);
  svg.append(lbl);
  box.append(svg);
  return box;
}
function charts(d) {
  const pts = d.rates || [];
  const box = document.getElementById("charts");
  box.replaceChildren(
    chart("pages / s", pts, "pages", v => v.toFixed(1), "#2563eb"),
    chart("bytes / s", pts, "bytes", v => bytes(v) + "/s", "#16a34a"),
    chart("errors / s", pts, "errors", v => v.toFixed(2), "#dc2626"));
}
function sites(d) {
  const box = document.getElementById("sites");
  box.replaceChildren();
  for (const c of d.collections || []) {
    const s = c.sites || [];
    const det = el("details", {open: ""}, el("summary", {}, c.name + " — " + s.length + " sites"));
    if (!s.length) det.append(el("p", {class:"empty"}, "No site crawled yet."));
    else det.append(table(["site","downloaded","stored","modified","deleted","errors","received"],
      s.map(x => [x.site, num(x.downloaded), num(x.stored), num(x.modified), num(x.deleted), num(x.errors), bytes(x.bytes)])));
    box.append(det);
  }
}
function errors(d) {
  const box = document.getElementById("errors");
  box.replaceChildren();
  const e = d.errors || [];
  if (!e.length) { box.append(el("p", {class:"empty"}, "No errors.")); return; }
  const t = table(["time","collection","status","error","URI"], e.map(x => {
    const u = el("span", {title: x.uri}, x.uri);
    return [when(x.t), x.collection, x.status || "-", x.error || "", u];
  }));
  t.setAttribute("class", "left");
  box.append(t);
}
function analyses(d) {
  const a = d.analyses || [];
  document.getElementById("analyses-section").hidden = !a.length;
  const box = document.getElementById("analyses");
  box.replaceChildren();
  if (!a.length) return;
  box.append(table(["analysis","last run","duration","state","pages ranked","links","changed links","ranks applied","click relevance","runs","failed","error"],
    a.map(x => [x.name, x.started ? when(x.started) : "not yet", x.running ? "…" : x.seconds.toFixed(1) + " s",
      x.running ? "running" : (x.runs ? (x.incremental ? (x.rank_kept ? "incremental, rank kept" : "incremental") : "full") : "-"),
      num(x.ranked), num(x.links), num(x.changed_links),
      num(x.ranks_applied || 0) + " of " + num(x.ranks_queued || 0) + (x.ranks_pending ? " (" + num(x.ranks_pending) + " pending)" : ""),
      x.click_runs ? num(x.click_relevance || 0) : "-", num(x.runs), num(x.failed), [x.error, x.click_error].filter(Boolean).join("; ")])));
}
function chain(d) {
  const sec = document.getElementById("chain-section"), box = document.getElementById("chain");
  const c = d.chain;
  sec.hidden = !c;
  if (!c) return;
  box.replaceChildren(el("p", {}, "name server " + c.nameserver + (c.in_process ? " (in this process)" : "") +
    " · master: " + (c.master_id >= 0 ? "distributor " + c.master_id + " at " + c.master : "none") + (c.error ? " · " + c.error : "")));
  const ds = c.distributors || [], ix = c.indexers || [];
  if (ds.length) box.append(table(["distributor","address","role","sessions","operations in flight","error"],
    ds.map(x => [x.node_id, x.addr, x.master ? "master" : "backup", num(x.sessions), num(x.operations_in_flight), x.error || ""])));
  if (ix.length) box.append(table(["indexer partition","address","documents","error"],
    ix.map(x => [x.partition, x.addr, num(x.documents), x.error || ""])));
}
function disk(d) {
  const k = d.disk, sec = document.getElementById("disk-section");
  sec.hidden = !(k && k.paused);
  if (sec.hidden) return;
  document.getElementById("disk").replaceChildren(el("p", {}, "The free space of " + k.dir + " is " + bytes(k.free_bytes) +
    ", under the low-water mark of " + bytes(k.low_water_bytes) + ": nothing new is fetched, indexed or stored until it is back at " +
    bytes(k.high_water_bytes) + "; the role resumes by itself."));
}
function render(d) {
  document.getElementById("meta").textContent = d.role + " · up since " + when(d.started) + " · updated " + when(d.time);
  disk(d); collections(d); chain(d); charts(d); sites(d); analyses(d); errors(d);
}
render(data);
async function poll() {
  try {
    const r = await fetch("status.json", {cache: "no-store"});
    if (r.ok) { data = await r.json(); render(data); }
  } catch (e) { document.getElementById("meta").textContent = "connection lost: " + e; }
  setTimeout(poll, 2000);
}
setTimeout(poll, 2000);
</script>
</body>
</html>
`))
