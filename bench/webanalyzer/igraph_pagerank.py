#!/usr/bin/env python3
"""PageRank of the web analyzer's input tables with python-igraph.

usage: igraph_pagerank.py TABLEDIR [DAMPING]   (prints the time and the top 5)
"""
import sys, time, igraph

d = sys.argv[1]
damping = float(sys.argv[2]) if len(sys.argv) > 2 else 0.85
t0 = time.time()
ids = {}
edges = []
for line in open(d + "/links"):
    f = line.split(" ", 2)
    edges.append((ids.setdefault(f[0], len(ids)), ids.setdefault(f[1], len(ids))))
for line in open(d + "/no_links"):
    ids.setdefault(line.split(" ", 1)[0], len(ids))
t1 = time.time()
g = igraph.Graph(n=len(ids), edges=edges, directed=True)
pr = g.pagerank(damping=damping, directed=True)
t2 = time.time()
names = sorted(ids, key=ids.get)
top = sorted(range(len(pr)), key=lambda i: -pr[i])[:5]
print("nodes %d edges %d: load %.1fs, graph+pagerank %.1fs" % (len(ids), len(edges), t1 - t0, t2 - t1))
for i in top:
    print(names[i], pr[i])
