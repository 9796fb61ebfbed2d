"""Drive the MS-FSCADM methods of a running `trawl multinode` and its
`trawl node` with Python's standard xmlrpc.client, checking each answer and
its effect on the crawl (the farm's request log).

Environment: MNS and NODE (XML-RPC URLs), FARM (the test's request-log
server), XML and KEEPXML (crawl configuration files of collections mc and
keep), SITE0 (host:port of a farm site), NODEPORT (the node's admin port),
MODE ("main", or "restart" after both processes restarted)."""

import json
import marshal
import os
import sys
import time
import urllib.request
import xmlrpc.client as xc

E = os.environ
mns = xc.ServerProxy(E["MNS"], allow_none=True)
node = xc.ServerProxy(E["NODE"], allow_none=True)
FARM = E["FARM"]
step = [0]


def check(cond, what):
    step[0] += 1
    if not cond:
        print("FAIL:", what, flush=True)
        sys.exit(1)
    print("ok %3d %s" % (step[0], what), flush=True)


def fault(fn, *args):
    try:
        r = fn(*args)
    except xc.Fault as f:
        return f
    raise AssertionError("expected a fault, got %r" % (r,))


def cresult(r, ok=1):
    return isinstance(r, list) and len(r) == 2 and r[0] == ok and isinstance(r[1], str)


def farm(path, url=""):
    q = "?url=" + urllib.request.quote(url, safe="") if url else ""
    with urllib.request.urlopen(FARM + path + q) as f:
        return json.load(f)


def wait(cond, what, timeout=30.0):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.1)
    print("FAIL (timeout):", what, flush=True)
    sys.exit(1)


def settle(quiet_for=2.0, timeout=60.0):
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


def url(path):
    return "http://" + E["SITE0"] + path


if E["MODE"] == "restart":
    # Both processes restarted with the same --data: the collection added
    # over the API is back and crawls.
    check(mns.CollectionGetList() == ["keep"], "after the restart, CollectionGetList -> ['keep'] (saved copy restored)")
    x = mns.CollectionGetConfigurationXML("keep")
    check('<DomainSpecification name="keep">' in x, "after the restart, the saved collection's XML is served")
    wait(lambda: "keep" in node.CollectionGetList(), "the restored collection reaches the node")
    u = url("/?after-restart=1")
    check(cresult(mns.AddURIs("keep", 1, [u])), "AddURIs on the restored collection")
    wait(lambda: farm("/count", u) > 0, "the restored collection fetches a new URI")
    check(True, "the crawl continues after the restart")
    print("MULTINODE RESTART OK", flush=True)
    sys.exit(0)

# --- roles ---
check(mns.ping() == 1 and node.ping() == 1, "ping -> 1 on both")
check(mns.IsMultiNodeScheduler() == 1, "IsMultiNodeScheduler -> 1 on trawl multinode")
check(node.IsMultiNodeScheduler() == 0, "IsMultiNodeScheduler -> 0 on trawl node")
check(mns.IsDistributed() == 1, "IsDistributed -> 1 on trawl multinode")
ports = mns.GetNodeSchedulerXmlRpcPorts()
check(isinstance(ports, list) and any(isinstance(p, list) and p[1] == int(E["NODEPORT"]) for p in ports),
      "GetNodeSchedulerXmlRpcPorts -> %r holds the node's admin port %s" % (ports, E["NODEPORT"]))
f = fault(node.GetNodeSchedulerXmlRpcPorts)
check("not a multinode scheduler" in f.faultString, "GetNodeSchedulerXmlRpcPorts faults on the node")
check(mns.CollectionGetList() == [], "CollectionGetList -> [] before any collection")

# --- the node refuses collection changes without Force ---
xml = open(E["XML"]).read()
f = fault(node.CollectionAdd, xml, 0)
check("Force" in f.faultString, "CollectionAdd on the node without Force faults: %s" % f.faultString)
f = fault(node.CollectionDelete, "mc", 0)
check("Force" in f.faultString, "CollectionDelete on the node without Force faults")

# --- add ---
r = mns.CollectionAdd(xml, 0)
check(cresult(r) and "mc" in r[1], "CollectionAdd on the multinode scheduler -> %r" % r)
check(mns.CollectionGetList() == ["mc"], "CollectionGetList -> ['mc']")
x = mns.CollectionGetConfigurationXML("mc")
check(isinstance(x, str) and '<DomainSpecification name="mc">' in x, "CollectionGetConfigurationXML returns mc's XML")
f = fault(mns.CollectionGetConfigurationXML, "nosuch")
check(isinstance(f.faultCode, int), "CollectionGetConfigurationXML of an unknown collection faults")
wait(lambda: "mc" in node.CollectionGetList(), "the node receives mc from the multinode scheduler")
wait(lambda: farm("/total") > 0, "the node crawls mc (the farm sees requests)")
check(mns.CollectionGetStatus("mc") == "crawling", "CollectionGetStatus -> crawling")
total = settle()
check(total > 10, "the crawl of mc fetched %d pages" % total)

# --- statistics (the multinode scheduler sums the node's deltas) ---
def downloaded():
    r = mns.CollectionGetStatistics2("mc")
    return r[1]["cur"]["Downloaded"] if r[0] == 1 else -1

# The node reports CMD_UM_STAT every nodesched.StatsInterval (60 s).
wait(lambda: downloaded() > 0, "CollectionGetStatistics2 on the multinode scheduler counts downloads", timeout=90)
st = mns.CollectionGetStatistics2("mc")
check(st[0] == 1 and isinstance(st[1], dict) and "cur" in st[1], "CollectionGetStatistics2 -> [1, {cur, ...}]")
cur = st[1]["cur"]
check(0 < cur["Downloaded"] <= farm("/total"), "Downloaded %d within the farm's %d requests" % (cur["Downloaded"], farm("/total")))
# LastUri (a discrete attribute of CollectionGetStatistics) travels in the
# node's CMD_UM_STAT (last_uri) to the multinode scheduler.
def last_uri():
    d = marshal.loads(mns.CollectionGetStatistics("mc").data)
    rec = d[b"mc"][1][b"cOmPIEtE"]
    for attr, v in rec.get(b"discrete", []):
        if attr == b"LastUri":
            val = v[0] if isinstance(v, (list, tuple)) else v
            return val.decode() if isinstance(val, bytes) else str(val)
    return ""
wait(lambda: last_uri().startswith("http"), "LastUri on the multinode scheduler", timeout=30)
lu = last_uri()
check(farm("/count", lu) > 0, "LastUri %r is a URI the farm served" % lu)
b = mns.CollectionGetStatistics("mc")
check(isinstance(b, xc.Binary), "CollectionGetStatistics -> base64")
d = marshal.loads(b.data)
check(isinstance(d, dict) and b"mc" in d and b"global" in d and b"dspec" in d, "marshal.loads gives dspec, global and mc")
delta, cycles = d[b"mc"]
check(b"cOmPIEtE" in cycles, "mc's cycles hold cOmPIEtE")
cont = dict(cycles[b"cOmPIEtE"][b"continuous"])
check(cont[b"Downloaded"][0] > 0, "marshalled Downloaded %r > 0" % (cont[b"Downloaded"],))
g = mns.GetGlobalStatistics()
check(g[0] == 1 and "complete" in g[1], "GetGlobalStatistics -> [1, {complete, ...}]")

# --- log level: set on the multinode scheduler, forwarded to the node ---
lvl = mns.GetLogLevel()
check(isinstance(lvl, int) and lvl != 0, "GetLogLevel -> %#x" % lvl)
check(mns.SetLogLevel(0x28) == 1, "SetLogLevel(0x28) on the multinode scheduler -> 1")
check(mns.GetLogLevel() == 0x28, "the multinode scheduler's level is 0x28")
check(node.GetLogLevel() == 0x28, "SetLogLevel was forwarded: the node's level is 0x28")
mns.SetLogLevel(lvl)
check(node.GetLogLevel() == lvl, "SetLogLevel back to %#x, forwarded too" % lvl)

# --- suspend: a suspended collection fetches nothing on the node ---
r = mns.CollectionSuspend("mc")
check(cresult(r), "CollectionSuspend -> %r" % r)
check(mns.CollectionGetStatus("mc") in ("suspended", "suspending"), "CollectionGetStatus -> suspended")
before = settle()
u1 = url("/?admin-suspended=1")
check(cresult(mns.AddURIs("mc", 1, [u1])), "AddURIs while suspended is accepted")
time.sleep(2)
check(farm("/count", u1) == 0 and farm("/total") == before, "a suspended collection fetches nothing (farm total stays %d)" % before)
r = mns.CollectionResume("mc")
check(cresult(r), "CollectionResume -> %r" % r)
check(mns.CollectionGetStatus("mc") == "crawling", "CollectionGetStatus -> crawling after resume")
u2 = url("/?admin-resumed=1")
check(cresult(mns.AddURIs("mc", 1, [u2])), "AddURIs after resume")
wait(lambda: farm("/count", u2) > 0, "a resumed collection fetches again")

# --- refresh only: forwarded; new URIs are not fetched ---
r = mns.CollectionEnableRefreshOnly("mc")
check(cresult(r), "CollectionEnableRefreshOnly -> %r" % r)
settle()
u3 = url("/?admin-refresh-only=1")
check(cresult(mns.AddURIs("mc", 1, [u3])), "AddURIs in refresh-only mode is accepted")
time.sleep(2)
check(farm("/count", u3) == 0, "refresh-only mode does not fetch a new URI")
r = mns.CollectionDisableRefreshOnly("mc")
check(cresult(r), "CollectionDisableRefreshOnly -> %r" % r)
u4 = url("/?admin-crawl-new=1")
check(cresult(mns.AddURIs("mc", 1, [u4])), "AddURIs after refresh-only is off")
wait(lambda: farm("/count", u4) > 0, "new URIs are fetched again once refresh-only is off")

# --- a second collection, kept across the restart; delete mc ---
r = mns.CollectionAdd(open(E["KEEPXML"]).read(), 0)
check(cresult(r) and "keep" in r[1], "CollectionAdd keep -> %r" % r)
r = mns.CollectionDelete("mc", 0)
check(cresult(r), "CollectionDelete mc -> %r" % r)
wait(lambda: "mc" not in mns.CollectionGetList(), "mc leaves the multinode scheduler's list")
wait(lambda: "mc" not in node.CollectionGetList(), "mc leaves the node's list")
check(mns.CollectionGetList() == ["keep"], "CollectionGetList -> ['keep']")
f = fault(mns.CollectionSuspend, "mc")
check(isinstance(f.faultCode, int), "CollectionSuspend of the deleted collection faults")
wait(lambda: "keep" in node.CollectionGetList(), "keep reaches the node")
print("MULTINODE METHODS OK", flush=True)
