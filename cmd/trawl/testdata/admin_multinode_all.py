"""Call every MS-FSCADM method of a running `trawl multinode` with two
`trawl node` processes from Python's standard xmlrpc.client and check each
call's effect on the crawl: the farm's request log (which node fetched a
site, what was fetched, not fetched or fetched again) and the statistics
of the multinode scheduler and of each node scheduler.

Environment: MNS, NODE1, NODE2 (XML-RPC URLs), NODE1PORT, NODE2PORT (the
nodes' admin ports), NODE1IP, NODE2IP (the address each node fetches
from), FARM (the test's request-log server), SITES (the farm's sites,
host:port, comma-separated), MCXML (the --config file of collection mc),
CCXML (the configuration of collection cc), FILES (the directory
AddURIFile and CollectionDeleteURIFile may read), SEARCH (the search API
of the index both nodes feed: `trawl search --nameserver --serve` over
the name server of their content distributor and indexer). The script
prints "STOP NODE2" when the test must stop node 2 for good (the
reroute).

The index is checked through the search API (/api/search and /api/doc):
every site's documents reach it; the documents of deleted URIs and of a
deleted site are in it before the delete and gone after it, while
another site's stay; a reprocessed URI is fed again (the index applies a
newer version of it) without being fetched. The
multinode scheduler's statistics are compared with the nodes' over the
whole crawl (cOmPIEtE): it gets the nodes' counters in CMD_UM_STAT,
every 2 s here (`trawl node --stats-interval`), so the check waits for a
report."""

import json
import marshal
import os
import re
import sys
import time
import urllib.request
import xmlrpc.client as xc

E = os.environ
mns = xc.ServerProxy(E["MNS"], allow_none=True)
nodes = [xc.ServerProxy(E["NODE1"], allow_none=True), xc.ServerProxy(E["NODE2"], allow_none=True)]
ports = [int(E["NODE1PORT"]), int(E["NODE2PORT"])]
ips = [E["NODE1IP"], E["NODE2IP"]]
SITES = E["SITES"].split(",")
FARM = E["FARM"]
SEARCH = E["SEARCH"]
T0 = time.time()
step = [0]
called = set()


class Track:
    """Records which methods the script called on the multinode scheduler."""

    def __init__(self, proxy):
        self.p = proxy

    def __getattr__(self, name):
        called.add(name)
        return getattr(self.p, name)


M = Track(mns)


def check(cond, what):
    step[0] += 1
    if not cond:
        print("FAIL:", what, flush=True)
        sys.exit(1)
    print("ok %3d %5.1fs %s" % (step[0], time.time() - T0, what), flush=True)


def fault(fn, *args):
    try:
        r = fn(*args)
    except xc.Fault as f:
        return f
    raise AssertionError("expected a fault, got %r" % (r,))


def cresult(r, ok=1):
    return isinstance(r, list) and len(r) == 2 and r[0] == ok and isinstance(r[1], str)


def farm(path, **q):
    qs = "?" + urllib.parse.urlencode(q) if q else ""
    with urllib.request.urlopen(FARM + path + qs) as f:
        return json.load(f)


def count(u):
    return farm("/count", url=u)


def host(site):
    return farm("/host", host=site.split(":")[0])


def wait(cond, what, timeout=30.0):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            check(True, what)
            return True
        time.sleep(0.1)
    print("FAIL (timeout):", what, flush=True)
    sys.exit(1)


def settle(quiet_for=1.5, timeout=60.0):
    """Wait until the farm's request count has not moved for quiet_for seconds."""
    last, since = farm("/total"), time.time()
    end = time.time() + timeout
    while time.time() < end:
        time.sleep(0.2)
        n = farm("/total")
        if n != last:
            last, since = n, time.time()
        elif time.time() - since >= quiet_for:
            return n
    print("FAIL (timeout): the crawl did not settle", flush=True)
    sys.exit(1)


def indexed(site):
    """The URLs of site's documents in the index (collection mc)."""
    q = urllib.parse.urlencode({"site": site.split(":")[0], "collection": "mc", "size": 100})
    with urllib.request.urlopen(SEARCH + "/api/search?" + q) as f:
        r = json.load(f)
    return {h["url"] for h in r["hits"] or []}


def doc(u):
    """The index's record of URL u in collection mc: found, version (the
    last version fed)."""
    q = urllib.parse.urlencode({"url": u, "collection": "mc"})
    with urllib.request.urlopen(SEARCH + "/api/doc?" + q) as f:
        return json.load(f)


def index_settled(site, quiet_for=1.0, timeout=30.0):
    """Wait until the index holds documents of site and their set has not
    changed for quiet_for seconds (the feeding has caught up)."""
    last, since = indexed(site), time.time()
    end = time.time() + timeout
    while time.time() < end:
        time.sleep(0.2)
        n = indexed(site)
        if n != last:
            last, since = n, time.time()
        elif last and time.time() - since >= quiet_for:
            return last
    print("FAIL (timeout): the index of %s did not settle (%d documents)" % (site, len(last)), flush=True)
    sys.exit(1)


def cur(proxy):
    r = proxy.CollectionGetStatistics2("mc")
    return r[1]["cur"] if r[0] == 1 else {}


def stat(proxy, name):
    return cur(proxy).get(name, 0)


def site_url(site, path):
    return "http://" + site + path


# --- roles, log level ---------------------------------------------------
check(M.ping() == 1 and all(n.ping() == 1 for n in nodes), "ping -> 1 on the multinode scheduler and both nodes")
check(M.IsMultiNodeScheduler() == 1, "IsMultiNodeScheduler -> 1 on trawl multinode")
check(all(n.IsMultiNodeScheduler() == 0 for n in nodes), "IsMultiNodeScheduler -> 0 on both nodes")
check(M.IsDistributed() == 1, "IsDistributed -> 1 on trawl multinode")
got = M.GetNodeSchedulerXmlRpcPorts()
check(sorted(p[1] for p in got) == sorted(ports), "GetNodeSchedulerXmlRpcPorts -> %r: both nodes' admin ports %r" % (got, ports))
check(M.GetSiteManagerNum() == 0, "GetSiteManagerNum -> 0 on the multinode scheduler (2.2.8.3)")
check(all(x.GetSiteManagerNum() == 1 for x in nodes), "GetSiteManagerNum -> 1 on each node (one site manager each)")
lvl = M.GetLogLevel()
check(isinstance(lvl, int) and lvl != 0, "GetLogLevel -> %#x" % lvl)
check(M.SetLogLevel(0x28) == 1, "SetLogLevel(0x28) -> 1")
check(M.GetLogLevel() == 0x28 and all(x.GetLogLevel() == 0x28 for x in nodes),
      "SetLogLevel is forwarded: both nodes' level is 0x28")
M.SetLogLevel(lvl)
check(all(x.GetLogLevel() == lvl for x in nodes), "SetLogLevel back to %#x, on both nodes" % lvl)

# --- the collection from --config, crawled by both nodes ------------------
check(M.CollectionGetList() == ["mc"], "CollectionGetList -> ['mc'] (from --config)")
x = M.CollectionGetConfigurationXML("mc")
check('<DomainSpecification name="mc">' in x, "CollectionGetConfigurationXML returns mc's XML")
check(isinstance(fault(M.CollectionGetConfigurationXML, "nosuch").faultCode, int),
      "CollectionGetConfigurationXML of an unknown collection faults")
for i, x in enumerate(nodes):
    wait(lambda: "mc" in x.CollectionGetList(), "node %d receives mc" % (i + 1))
check(M.CollectionGetStatus("mc") == "crawling", "CollectionGetStatus -> crawling")
total = settle()
check(total > 20, "the crawl of mc fetched %d pages" % total)

# --- routing: the node a site is routed to is the one that fetched it ---
owner = {}
for s in SITES:
    r = M.CollectionGetSiteRoutingAddress("mc", s)
    check(isinstance(r, list) and len(r) == 2 and r[0] == 1 and r[1][1] in ports,
          "CollectionGetSiteRoutingAddress(mc, %s) -> %r, a node's admin address" % (s, r))
    i = ports.index(r[1][1])
    owner[s] = i
    h = host(s)
    check(h["count"] > 0 and h["remotes"] == [ips[i]],
          "%s was fetched only from node %d's address %s (farm saw %r)" % (s, i + 1, ips[i], h["remotes"]))
check(set(owner.values()) == {0, 1}, "both nodes crawl sites: %r" % owner)
by_node = [[s for s in SITES if owner[s] == i] for i in (0, 1)]
wait(lambda: all(indexed(s) for s in SITES), "both nodes feed: the index holds documents of every site")

# --- site statistics ----------------------------------------------------
def site_stats(proxy, s):
    b = proxy.CollectionGetSiteStatistics("mc", s)
    check(isinstance(b, xc.Binary), "CollectionGetSiteStatistics(mc, %s) -> base64" % s)
    d = marshal.loads(b.data)
    check(isinstance(d, dict) and len(d) > 0, "it unmarshals to a dict with keys %r" % sorted(d)[:6])
    return d


for s in (by_node[0][0], by_node[1][0]):
    d = site_stats(nodes[owner[s]], s)
    check(s.encode() in d, "the node %s is routed to has its statistics" % s)

# --- suspend / resume ---------------------------------------------------
# A site of each node; pages the farm serves are fetched, new query URIs too.
sA, sB = by_node[0][0], by_node[1][0]
check(cresult(M.CollectionSuspend("mc")), "CollectionSuspend")
check(M.CollectionGetStatus("mc") in ("suspended", "suspending"), "CollectionGetStatus -> suspended")
before = settle()
us = [site_url(sA, "/?suspended=1"), site_url(sB, "/?suspended=1")]
check(cresult(M.AddURIs("mc", 1, us)), "AddURIs while suspended is accepted")
time.sleep(1.5)
check(all(count(u) == 0 for u in us) and farm("/total") == before, "neither node fetches while suspended")
check(cresult(M.CollectionResume("mc")), "CollectionResume")
check(M.CollectionGetStatus("mc") == "crawling", "CollectionGetStatus -> crawling after resume")
wait(lambda: all(count(u) > 0 for u in us), "both nodes fetch the URIs queued while suspended once resumed")

# --- AddURIFile ---------------------------------------------------------
uf = [site_url(sA, "/?file=1"), site_url(sB, "/?file=1")]
path = os.path.join(E["FILES"], "add.txt")
open(path, "w").write("\n".join(uf) + "\n")
check(cresult(M.AddURIFile("mc", 0, path)), "AddURIFile")
wait(lambda: all(count(u) > 0 for u in uf), "AddURIFile's URIs are fetched (a site of each node)")
check(cresult(M.AddURIFile("mc", 0, "/etc/passwd"), 0), "AddURIFile of a file outside --admin-files is refused")

# --- refresh only: forwarded to both nodes ------------------------------
check(cresult(M.CollectionEnableRefreshOnly("mc")), "CollectionEnableRefreshOnly")
settle()
ur = [site_url(sA, "/?refresh-only=1"), site_url(sB, "/?refresh-only=1")]
check(cresult(M.AddURIs("mc", 0, ur)), "AddURIs in refresh-only mode is accepted")
time.sleep(1.5)
check(all(count(u) == 0 for u in ur), "neither node fetches a new URI in refresh-only mode")
check(cresult(M.CollectionDisableRefreshOnly("mc")), "CollectionDisableRefreshOnly")
un = [site_url(sA, "/?crawl-new=1"), site_url(sB, "/?crawl-new=1")]
check(cresult(M.AddURIs("mc", 1, un)), "AddURIs after refresh-only is off")
wait(lambda: all(count(u) > 0 for u in un), "both nodes fetch new URIs again")

# --- feeding ------------------------------------------------------------
check(cresult(M.CollectionSuspendFeeding("mc", "")), "CollectionSuspendFeeding")
fm = stat(M, "Feeding")
check(cresult(M.CollectionSuspendFeeding("mc", ""), 0), "CollectionSuspendFeeding again is refused in band (already suspended)")
check(cresult(M.CollectionResumeFeeding("mc", "")), "CollectionResumeFeeding")
fr = stat(M, "Feeding")
check(fm != fr, "the Feeding statistic follows: %r suspended, %r resumed" % (fm, fr))
check(cresult(M.CollectionResumeFeeding("mc", ""), 0), "CollectionResumeFeeding again is refused in band")

# --- reprocess ----------------------------------------------------------
settle()
pA = host(sA)["ok"]
check(len(pA) >= 2, "the farm served %d pages of %s" % (len(pA), sA))
iA = index_settled(sA)
pA = [u for u in pA if u in iA] + [u for u in pA if u not in iA]
v0 = {u: doc(u) for u in pA[:2]}
check(all(d["found"] and d["version"] > 0 for d in v0.values()),
      "before the reprocess the index holds %s (versions %r)" % (pA[:2], [d["version"] for d in v0.values()]))
uK = sorted(indexed(sB))[0]
vK = doc(uK)["version"]
check(cresult(M.CollectionReprocessSite("mc", "", sA)), "CollectionReprocessSite")
check(cresult(M.CollectionReprocessSitePrefix("mc", sA, "http://" + sA + "/", "")), "CollectionReprocessSitePrefix")
check(cresult(M.CollectionReprocessURI("mc", "", pA[:2])), "CollectionReprocessURI")
check(cresult(M.CollectionReprocessURI("mc", "", ["not a uri"]), 0), "CollectionReprocessURI of no valid URI is refused in band")
check(isinstance(fault(M.CollectionReprocessSite, "nosuch", "", sA).faultCode, int), "CollectionReprocessSite of an unknown collection faults")
time.sleep(1)
check(count(pA[0]) == 1, "reprocessing refeeds from the store: it fetches nothing (%s fetched %d times)" % (pA[0], count(pA[0])))
wait(lambda: all(doc(u)["version"] > v0[u]["version"] for u in pA[:2]),
     "the reprocessed URIs are fed again: the index applied a newer version of each")
check(all(doc(u)["found"] for u in pA[:2]), "and still holds them")
check(doc(uK)["version"] == vK, "a page of %s, not reprocessed, keeps its version %d" % (sB, vK))

# --- refetch URI --------------------------------------------------------
for i, (flags, what) in enumerate((((0, 0, 1), "plain, immediately"), ((1, 0, 1), "refeed"))):
    s = (sA, sB)[i]
    u = host(s)["ok"][0]
    c0 = count(u)
    check(cresult(M.CollectionRefetchURI("mc", u, *flags)), "CollectionRefetchURI(%s) of %s" % (what, u))
    wait(lambda: count(u) > c0, "the URI is fetched again (%s)" % what)
s = by_node[1][-1]
known = host(s)["ok"]
c0 = {u: count(u) for u in known}
check(cresult(M.CollectionRefetchURI("mc", known[0], 0, 1, 0)), "CollectionRefetchURI(site) of %s" % known[0])
wait(lambda: all(count(u) > c0[u] for u in known), "every stored page of %s (%d) is fetched again" % (s, len(known)))

# --- delete URIs, URI file, site: gone from the node's store and the index
settle()
sD = by_node[0][-1]
xD = nodes[owner[sD]]
pD = host(sD)["ok"]
check(len(pD) >= 3, "%s has %d pages" % (sD, len(pD)))
iD = index_settled(sD)
# The URIs to delete one by one are pages the index holds.
pD = [u for u in pD if u in iD] + [u for u in pD if u not in iD]
check(len(iD) >= 3 and pD[0] in iD and pD[1] in iD,
      "before the deletes the index holds %d documents of %s, %s and %s among them" % (len(iD), sD, pD[0], pD[1]))
sK = by_node[1][0]  # a site of the other node, which no delete touches
iK = index_settled(sK)
d0 = stat(xD, "Deleted")
check(cresult(M.CollectionDeleteURIs("mc", [pD[0]])), "CollectionDeleteURIs of %s" % pD[0])
wait(lambda: stat(xD, "Deleted") == d0 + 1, "the node owning %s counts 1 Deleted" % sD)
wait(lambda: pD[0] not in indexed(sD), "CollectionDeleteURIs: %s is gone from the index" % pD[0])
check(indexed(sD) == iD - {pD[0]}, "and only it: %d documents of %s left" % (len(indexed(sD)), sD))
check(cresult(M.CollectionDeleteURIs("mc", [pD[0]])), "CollectionDeleteURIs of it again")
path = os.path.join(E["FILES"], "del.txt")
open(path, "w").write(pD[1] + "\n")
check(cresult(M.CollectionDeleteURIFile("mc", path)), "CollectionDeleteURIFile of %s" % pD[1])
wait(lambda: stat(xD, "Deleted") == d0 + 2, "the node counts 1 more Deleted (the first URI was gone already)")
wait(lambda: pD[1] not in indexed(sD), "CollectionDeleteURIFile: %s is gone from the index" % pD[1])
time.sleep(0.5)
check(stat(xD, "Deleted") == d0 + 2, "deleting a deleted URI again deletes nothing: it is gone from the store")
check(indexed(sD) == iD - {pD[0], pD[1]}, "the index holds the other %d documents of %s" % (len(iD) - 2, sD))
d1 = stat(xD, "Deleted")
stored = len(pD) - 2
check(cresult(M.CollectionDeleteSite("mc", sD)), "CollectionDeleteSite %s" % sD)
wait(lambda: stat(xD, "Deleted") >= d1 + stored, "the node counts the site's %d stored pages Deleted" % stored)
wait(lambda: not indexed(sD), "CollectionDeleteSite: every document of %s is gone from the index" % sD)
d2 = stat(xD, "Deleted")
check(cresult(M.CollectionDeleteSite("mc", sD)), "CollectionDeleteSite of it again")
time.sleep(1)
check(stat(xD, "Deleted") == d2, "deleting the site again deletes nothing: it is gone from the store")
check(count(pD[2]) == 1, "deleting fetches nothing")
check(not indexed(sD) and indexed(sK) == iK,
      "the index still holds none of %s and all %d documents of %s (another node's site)" % (sD, len(iK), sK))

# --- refetch the collection: every site is fetched again -----------------
settle()
roots = {s: host(s)["ok"][0] for s in SITES if s != sD}
c0 = {s: count(u) for s, u in roots.items()}
check(cresult(M.CollectionRefetch("mc", "nosuch"), 0), "CollectionRefetch of an unknown subcollection is refused in band")
check(cresult(M.CollectionRefetch("mc", "")), "CollectionRefetch")
wait(lambda: all(count(u) > c0[s] for s, u in roots.items()), "CollectionRefetch fetches a page of every site again (both nodes)")

# --- statistics add up across the two nodes ------------------------------
settle()
check(isinstance(M.CollectionGetStatistics("mc"), xc.Binary), "CollectionGetStatistics -> base64")
dm = marshal.loads(M.CollectionGetStatistics("mc").data)
check(b"mc" in dm and b"global" in dm, "it unmarshals to the global and mc statistics")
g = M.GetGlobalStatistics()
check(g[0] == 1 and "complete" in g[1], "GetGlobalStatistics -> [1, {complete, ...}]")


def all_cycles(proxy, attr):
    """attr over every cycle of mc (the cOmPIEtE record of
    CollectionGetStatistics)."""
    d = marshal.loads(proxy.CollectionGetStatistics("mc").data)
    v = dict(d[b"mc"][1][b"cOmPIEtE"].get(b"continuous", [])).get(attr.encode())
    return v[0] if v else 0


def sums():
    """The whole crawl's and the current cycle's (since CollectionRefetch,
    one cycle on the multinode scheduler as on each node)."""
    return [(k, all_cycles(M, k), all_cycles(nodes[0], k) + all_cycles(nodes[1], k))
            for k in ("Downloaded", "Deleted", "Processed")] + \
        [("cur " + k, stat(M, k), stat(nodes[0], k) + stat(nodes[1], k)) for k in ("Downloaded", "Processed")] + \
        [("cur Epoch", stat(M, "Epoch"), max(stat(nodes[0], "Epoch"), stat(nodes[1], "Epoch")))]


last = [None]


def summed():
    last[0] = sums()
    return all(x[1] == x[2] for x in last[0])


end = time.time() + 75
while not summed() and time.time() < end:
    time.sleep(0.5)
print("sums (name, multinode scheduler, nodes):", last[0], flush=True)
for s in (by_node[0][0], by_node[1][0]):
    site_stats(M, s)  # from the nodes' CMD_UM_STAT
for k, m, s in sums():
    check(m == s and (k != "Downloaded" or m > 0), "%s: %r on the multinode scheduler = %r over the nodes" % (k, m, s))
check(all_cycles(M, "Downloaded") <= farm("/total"), "Downloaded within the farm's %d requests" % farm("/total"))

# --- preempt ------------------------------------------------------------
settle()
sP = by_node[1][0]
up = [site_url(sP, "/?preempt=%d" % i) for i in range(24)]
check(cresult(M.AddURIs("mc", 1, up)), "AddURIs: 24 URIs of %s (crawled 4 a second)" % sP)
fetched = lambda: sum(1 for u in up if count(u) > 0)
wait(lambda: fetched() >= 3, "%s is being crawled" % sP)
check(cresult(M.CollectionPreemptSite("mc", sP)), "CollectionPreemptSite %s" % sP)
# MS-FSCADM 2.2.9.11: the crawl of the site SHOULD stop at once and MUST
# resume later. The node stops it (a fetch already sent to the site may
# still finish) and queues it again after 5 s (nodesched.PreemptPause).
f0 = fetched()
time.sleep(2.5)
f1 = fetched()
check(f1 <= f0 + 1 and f1 < 24, "the preempted site stops at once: %d of its URIs fetched at the call, %d 2.5 s later" % (f0, f1))
wait(lambda: fetched() == 24, "the preempted site's crawl resumes: all 24 URIs are fetched")

# --- quarantine ---------------------------------------------------------
sQ = by_node[0][0]
check(cresult(M.CollectionQuarantineSite("mc", sQ, 5)), "CollectionQuarantineSite %s for 5 s" % sQ)
uq = [site_url(sQ, "/?quarantined=%d" % i) for i in range(3)]
check(cresult(M.AddURIs("mc", 1, uq)), "AddURIs of the quarantined site")
time.sleep(2.5)
check(all(count(u) == 0 for u in uq), "the quarantined site is not fetched")
wait(lambda: all(count(u) > 0 for u in uq), "its URIs come back when the quarantine ends", timeout=20)

# --- quarantine with requeue (a trawl extension: CMD_UM_QUARANTINE_SITE_REQUEUE)
sR = by_node[1][-1]
r = M.CollectionQuarantineSiteRequeue("mc", sR, 4)
check(cresult(r) and "requeued" in r[1], "CollectionQuarantineSiteRequeue %s for 4 s -> %r" % (sR, r))
ur = [site_url(sR, "/?requeued=%d" % i) for i in range(3)]
check(cresult(M.AddURIs("mc", 1, ur)), "AddURIs of the site quarantined with requeue")
time.sleep(2)
check(all(count(u) == 0 for u in ur), "the site quarantined with requeue is not fetched")
wait(lambda: all(count(u) > 0 for u in ur), "with requeue its URIs come back when the quarantine ends", timeout=20)

# --- collection state (a trawl extension: CMD_UM_CONF_STATE) ---------------
r = M.CollectionSetState("mc", 7)
check(cresult(r) and "compacting" in r[1], "CollectionSetState(mc, 7) -> %r" % (r,))
for i, x in enumerate(nodes):
    wait(lambda: x.CollectionGetStatus("mc") == "compacting", "node %d reports the state set: compacting" % (i + 1))
check(M.CollectionGetStatus("mc") == "compacting", "the multinode scheduler reports compacting")
us = [site_url(sA, "/?compacting=1"), site_url(sB, "/?compacting=1")]
check(cresult(M.AddURIs("mc", 1, us)), "AddURIs while compacting is accepted")
time.sleep(1.5)
check(all(count(u) == 0 for u in us), "neither node crawls while the collection is compacting")
check(isinstance(fault(M.CollectionSetState, "mc", 3).faultCode, int), "CollectionSetState to 3 (being removed) faults")
check(cresult(M.CollectionSetState("mc", 1)), "CollectionSetState(mc, 1)")
for i, x in enumerate(nodes):
    wait(lambda: x.CollectionGetStatus("mc") == "crawling", "node %d reports crawling again" % (i + 1))
wait(lambda: all(count(u) > 0 for u in us), "both nodes crawl again once active")

# --- configuration callbacks -------------------------------------------
def delay(xml):
    m = re.search(r'name="delay"[^>]*>\s*([0-9.]+)\s*<', xml)
    return m and m.group(1)


x = open(E["MCXML"]).read()
check(delay(x) == "0.25" and delay(M.CollectionGetConfigurationXML("mc")) == "0.25", "mc's delay is 0.25")
open(E["MCXML"], "w").write(x.replace("> 0.25 <", "> 0.5 <"))
check(M.ConfigurationChanged() == 1, "ConfigurationChanged -> 1")
check(delay(M.CollectionGetConfigurationXML("mc")) == "0.5",
      "ConfigurationChanged reread --config: mc's XML has the new delay 0.5")
check(M.ReRegister() == 1, "ReRegister -> 1")
check(M.CollectionGetList() == ["mc"], "ReRegister changes nothing")

# --- add and delete a collection on both nodes ----------------------------
r = M.CollectionAdd(open(E["CCXML"]).read(), 0)
check(cresult(r) and "cc" in r[1], "CollectionAdd cc -> %r" % r)
for i, x in enumerate(nodes):
    wait(lambda: "cc" in x.CollectionGetList(), "cc reaches node %d" % (i + 1))
check(cresult(M.CollectionDelete("cc", 0)), "CollectionDelete cc")
wait(lambda: "cc" not in M.CollectionGetList(), "cc leaves the multinode scheduler")
for i, x in enumerate(nodes):
    wait(lambda: "cc" not in x.CollectionGetList(), "cc leaves node %d" % (i + 1))
check(isinstance(fault(M.CollectionSuspend, "cc").faultCode, int), "CollectionSuspend of the deleted collection faults")

# --- reroute a dead node's sites (a trawl extension) -----------------------
r = M.RerouteNodeScheduler("n1")
check(cresult(r, 0) and "connected" in r[1], "RerouteNodeScheduler of a connected node is refused in band: %r" % (r,))
print("STOP NODE2", flush=True)  # the test stops node 2 (it will not come back)


def node2_down():
    try:
        nodes[1].ping()
        return False
    except (OSError, xc.ProtocolError):
        return True


wait(node2_down, "node 2 is stopped")
end = time.time() + 20
r = M.RerouteNodeScheduler("n2")
while not cresult(r) and time.time() < end:  # until the multinode scheduler sees it gone
    time.sleep(0.2)
    r = M.RerouteNodeScheduler("n2")
moved = int(re.search(r"Rerouted (\d+) ", r[1]).group(1)) if cresult(r) else -1
check(moved >= len(by_node[1]), "RerouteNodeScheduler(n2) -> %r: node 2's %d sites moved" % (r, len(by_node[1])))
for s in by_node[1]:
    r = M.CollectionGetSiteRoutingAddress("mc", s)
    check(r[0] == 1 and r[1][1] == ports[0], "%s is routed to node 1 now: %r" % (s, r))
ux = [site_url(s, "/?rerouted=1") for s in by_node[1]]
check(cresult(M.AddURIs("mc", 1, ux)), "AddURIs of node 2's sites")
wait(lambda: all(count(u) > 0 for u in ux), "node 2's sites are crawled after the reroute")
check(all(farm("/remote", url=u) == [ips[0]] for u in ux), "by node 1 (from %s)" % ips[0])

ALL = """GetLogLevel GetNodeSchedulerXmlRpcPorts GetSiteManagerNum IsDistributed IsMultiNodeScheduler SetLogLevel
AddURIs AddURIFile CollectionAdd CollectionDelete CollectionDeleteSite CollectionDeleteURIs CollectionDeleteURIFile
CollectionGetConfigurationXML CollectionGetList CollectionGetSiteRoutingAddress CollectionPreemptSite
CollectionQuarantineSite CollectionRefetch CollectionRefetchURI CollectionReprocessSite CollectionReprocessSitePrefix
CollectionReprocessURI CollectionResume CollectionResumeFeeding CollectionSuspend CollectionSuspendFeeding
CollectionDisableRefreshOnly CollectionEnableRefreshOnly CollectionGetStatus CollectionGetSiteStatistics
CollectionGetStatistics CollectionGetStatistics2 GetGlobalStatistics ping ConfigurationChanged ReRegister""".split()
EXT = "CollectionQuarantineSiteRequeue CollectionSetState RerouteNodeScheduler".split()  # trawl's
listed = set(mns.system.listMethods()) - {m for m in mns.system.listMethods() if m.startswith("system.")}
check(set(ALL + EXT) == listed, "the multinode scheduler serves exactly the %d methods and trawl's %d (%r)" % (len(ALL), len(EXT), sorted(listed ^ set(ALL + EXT))))
check(called >= set(ALL + EXT), "every method was called on the multinode scheduler (missing %r)" % sorted(set(ALL + EXT) - called))
print("EVERY METHOD OK", flush=True)
