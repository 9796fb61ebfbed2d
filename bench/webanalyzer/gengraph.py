#!/usr/bin/env python3
"""Write a synthetic link graph as the web analyzer's input tables.

usage: gengraph.py OUTDIR NODES LINKS [SEED]

Pages http://sS.bench/pN on NODES/500 sites; each link's source is uniform,
its target skewed towards low page numbers (N = NODES * u^3), so in-degrees
follow a heavy-tailed law as on the web. Page 0 of every 20 has no links.
Layouts: internal/webanalyzer/doc.go.
"""
import hashlib, os, random, sys

out, nodes, links = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
os.makedirs(out, exist_ok=True)
sites = max(1, nodes // 500)
url = lambda n: "http://s%d.bench/p%d" % (n % sites, n)
h = [hashlib.md5(url(n).encode()).hexdigest()[:16] for n in range(nodes)]
ts = "%019d" % 1735689600000000000
with open(os.path.join(out, "urimap"), "w") as f:
    f.writelines("%s %s\n" % (h[n], url(n)) for n in range(nodes))
with open(os.path.join(out, "sitemap"), "w") as f:
    f.writelines("%s s%d.bench\n" % (h[n], n % sites) for n in range(nodes))
dangling = set(range(0, nodes, 20))
with open(os.path.join(out, "links"), "w") as f:
    seen = set()
    written = 0
    while written < links:
        a = rng.randrange(nodes)
        if a in dangling:
            continue
        b = int(nodes * rng.random() ** 3)
        if (a, b) in seen:
            continue
        seen.add((a, b))
        f.write("%s %s %d %s w%d\n" % (h[a], h[b], int(a % sites == b % sites), ts, b % 97))
        written += 1
linked = {a for a, _ in seen}
with open(os.path.join(out, "no_links"), "w") as f:
    f.writelines("%s %s %s\n" % (h[n], ts, url(n)) for n in range(nodes) if n not in linked)
for t in ("urieq", "eqrepr", "delete"):
    open(os.path.join(out, t), "w").close()
