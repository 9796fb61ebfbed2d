"""Drive every MS-FSCADM method of a running `trawl run` with Python's
standard xmlrpc.client and check each answer and its effect on the crawl.

Environment: ADMIN (URL with credentials), ADMIN_NOAUTH, FARM (the test's
request-log server), URIDIR (the --admin-files directory), OUTSIDE (a file
outside it), START (a start URI), SITE0..SITE3 (host:port of farm sites)."""

import json
import marshal
import os
import sys
import time
import urllib.request
import xmlrpc.client as xc

E = os.environ
s = xc.ServerProxy(E["ADMIN"], allow_none=True)
FARM = E["FARM"]
COLL = "c1"
called = set()
step = [0]


def call(name, *args):
    called.add(name)
    return getattr(s, name)(*args)


def check(cond, what):
    step[0] += 1
    if not cond:
        print("FAIL:", what, flush=True)
        sys.exit(1)
    print("ok %3d %s" % (step[0], what), flush=True)


def fault(name, *args):
    try:
        r = call(name, *args)
    except xc.Fault as f:
        return f
    raise AssertionError("%s%r: expected a fault, got %r" % (name, args, r))


def cresult(r, ok=1):
    return isinstance(r, list) and len(r) == 2 and r[0] == ok and isinstance(r[1], str)


def farm(path, url=""):
    q = "?url=" + urllib.request.quote(url, safe="") if url else ""
    with urllib.request.urlopen(FARM + path + q) as f:
        return json.load(f)


def count(url):
    return farm("/count", url)


def wait(cond, what, timeout=20.0):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.1)
    print("FAIL (timeout):", what, flush=True)
    sys.exit(1)


def stats2():
    r = call("CollectionGetStatistics2", COLL)
    assert r[0] == 1 and isinstance(r[1], dict), r
    return r[1]


def settle():
    """Wait until neither the farm's request count nor the collection's
    Downloaded statistic has moved for two seconds."""
    last = [None, time.time()]

    def quiet():
        n = (farm("/total"), stats2()["complete"]["Downloaded"])
        if n != last[0]:
            last[0], last[1] = n, time.time()
        return time.time() - last[1] > 2.0
    wait(quiet, "crawl settles", 90)


def url(site, path="/"):
    return "http://" + site + path


# --- authentication ---
try:
    xc.ServerProxy(E["ADMIN_NOAUTH"]).ping()
    check(False, "a call without the token is refused")
except xc.ProtocolError as e:
    check(e.errcode == 401, "a call without the token gets HTTP 401")

# --- management (2.2.8) and MS-FSCX ---
methods = s.system.listMethods()
check(isinstance(methods, list) and "CollectionGetStatistics2" in methods and len(methods) >= 37, "system.listMethods lists %d methods" % len(methods))
check(call("ping") == 1, "ping -> 1")
check(call("IsDistributed") == 0, "IsDistributed -> 0 (standalone)")
check(call("IsMultiNodeScheduler") == 0, "IsMultiNodeScheduler -> 0")
check(call("GetSiteManagerNum") == 1, "GetSiteManagerNum -> 1")
f = fault("GetNodeSchedulerXmlRpcPorts")
check("not a multinode scheduler" in f.faultString, "GetNodeSchedulerXmlRpcPorts faults on a node scheduler")
lvl = call("GetLogLevel")
check(isinstance(lvl, int) and lvl & ~0xFC == 0 and lvl != 0, "GetLogLevel -> mask %#x" % lvl)
check(call("SetLogLevel", 0x28) == 1 and call("GetLogLevel") == 0x28, "SetLogLevel(0x28) -> 1, then GetLogLevel -> 0x28")
check(call("SetLogLevel", 0x200) == 0, "SetLogLevel(0x200) -> 0 (undefined bit)")
call("SetLogLevel", lvl)
check(call("ConfigurationChanged") == 1, "ConfigurationChanged -> 1 (configuration reread)")
check(call("ReRegister") == 1, "ReRegister -> 1")

# --- the crawl ---
check(call("CollectionGetList") == [COLL], "CollectionGetList -> [c1]")
x = call("CollectionGetConfigurationXML", COLL)
check(isinstance(x, str) and '<DomainSpecification name="c1">' in x, "CollectionGetConfigurationXML returns the collection's XML")
check(call("CollectionGetStatus", COLL) == "crawling", "CollectionGetStatus -> crawling")
settle()
st = stats2()
cur = st["cur"]
check(set(st) == {"cur", "complete"}, "CollectionGetStatistics2 -> cur and complete, no prev before a second cycle")
check(cur["Downloaded"] > 50 and cur["Stored"] > 0 and cur["Status"] == "Crawling", "the crawl downloaded %d documents, stored %d" % (cur["Downloaded"], cur["Stored"]))
check(isinstance(cur["HTTPResponse"], dict) and cur["HTTPResponse"].get("200", 0) > 0, "HTTPResponse histogram has 200s")
check(cur["Downloaded"] <= farm("/total"), "Downloaded (%d) <= requests the farm saw (%d)" % (cur["Downloaded"], farm("/total")))

b = call("CollectionGetStatistics", COLL)
check(isinstance(b, xc.Binary), "CollectionGetStatistics -> base64")
d = marshal.loads(b.data)
check(set(d) >= {b"dspec", b"global", b"c1"}, "statistics dictionary has dspec, global and c1")
delta, cycles = d[b"c1"]
check(0 in cycles and b"cOmPIEtE" in cycles, "c1's cycles hold cycle 0 and cOmPIEtE")
comp = dict((bytes(k) if isinstance(k, bytes) else k, v) for k, v in cycles[b"cOmPIEtE"].items())
cont = dict((n, v) for n, v in comp[b"continuous"])
check(cont[b"Downloaded"][0] == cur["Downloaded"], "marshalled Downloaded equals the flattened one")
check(d[b"dspec"][b"c1"][b"refresh_mode"] in (1, 2, 4, 8, 32), "dspec carries refresh_mode")

sb = call("CollectionGetSiteStatistics", COLL, E["SITE0"])
sd = marshal.loads(sb.data)
check(isinstance(sb, xc.Binary) and E["SITE0"].encode() in sd and b"global" not in sd, "CollectionGetSiteStatistics -> the site's series, no global")
g = call("GetGlobalStatistics")
check(g[0] == 1 and set(g[1]) >= {"complete"} and "DNSRequests" in g[1]["complete"], "GetGlobalStatistics -> [1, {delta, complete}]")

# --- suspend: nothing is fetched; resume: it is ---
r = call("CollectionSuspend", COLL)
check(cresult(r), "CollectionSuspend -> %r" % r)
check(call("CollectionGetStatus", COLL) == "suspended", "CollectionGetStatus -> suspended")
f = fault("CollectionSuspend", COLL)
check("already suspended" in f.faultString, "CollectionSuspend of a suspended collection faults")
settle()
before = farm("/total")
start = E["START"]
n0 = count(start)
r = call("CollectionRefetchURI", COLL, start, 0, 0, 1)
check(cresult(r), "CollectionRefetchURI while suspended -> %r" % r)
time.sleep(2.5)
check(farm("/total") == before, "a suspended collection fetches nothing (%d requests before, %d after)" % (before, farm("/total")))
r = call("CollectionResume", COLL)
check(cresult(r) and call("CollectionGetStatus", COLL) == "crawling", "CollectionResume -> %r, status crawling" % r)
wait(lambda: count(start) > n0, "the refetched URI is fetched after the resume")
check(True, "CollectionRefetchURI fetched %s again after the resume" % start)
f = fault("CollectionResume", COLL)
check("not suspended" in f.faultString, "CollectionResume of a crawling collection faults")

# --- add URIs ---
u1 = url(E["SITE0"], "/?admin=1")
r = call("AddURIs", COLL, 1, [u1])
check(r == [1, "Queued collection c1 with 1 URIs"], "AddURIs -> %r" % r)
wait(lambda: count(u1) == 1, "AddURIs' URI is fetched")
check(True, "the added URI was fetched")
check(call("AddURIs", COLL, 0, ["not a uri"])[0] == 0, "AddURIs of a relative URI -> [0, ...]")
u2 = url(E["SITE0"], "/?admin=2")
path = os.path.join(E["URIDIR"], "uris.txt")
with open(path, "w") as fh:
    fh.write("# URIs for the test\n" + u2 + "\n")
r = call("AddURIFile", COLL, 0, path)
check(r == [1, "Queued collection c1 with 1 URIs"], "AddURIFile -> %r" % r)
wait(lambda: count(u2) == 1, "AddURIFile's URI is fetched")
r = call("AddURIFile", COLL, 0, E["OUTSIDE"])
check(r[0] == 0 and "not a file inside the directory" in r[1], "AddURIFile outside --admin-files -> %r" % r)
f = fault("AddURIFile", "nosuch", 0, path)
check("no such collection" in f.faultString, "AddURIFile of an unknown collection faults")

# --- refetch the collection: a new cycle fetches the start URI again ---
n1 = count(start)
r = call("CollectionRefetch", COLL, "")
check(cresult(r), "CollectionRefetch -> %r" % r)
wait(lambda: count(start) > n1, "the refetch fetches the start URI again")
check(True, "CollectionRefetch fetched the start URI again")
check(call("CollectionRefetch", COLL, "nosub")[0] == 0, "CollectionRefetch of an unknown subcollection -> [0, ...]")
settle()
st = stats2()
check("prev" in st and st["cur"]["Epoch"] == st["prev"]["Epoch"] + 1, "after the refetch, cycle %d follows cycle %d" % (st["cur"]["Epoch"], st.get("prev", {}).get("Epoch", -1)))

# --- refresh only: new URIs are not fetched ---
r = call("CollectionEnableRefreshOnly", COLL)
check(cresult(r), "CollectionEnableRefreshOnly -> %r" % r)
check(stats2()["cur"]["CrawlMode"] == "Refreshing(limit=user)", "CrawlMode -> Refreshing(limit=user)")
u3 = url(E["SITE1"], "/?admin=3")
check(cresult(call("AddURIs", COLL, 1, [u3])), "AddURIs in refresh-only mode is accepted")
time.sleep(2)
check(count(u3) == 0, "refresh-only mode does not fetch a new URI")
r = call("CollectionDisableRefreshOnly", COLL)
check(cresult(r) and stats2()["cur"]["CrawlMode"] == "", "CollectionDisableRefreshOnly -> %r, CrawlMode ''" % r)
check(cresult(call("CollectionRefetchURI", COLL, u3, 1, 0, 1)), "CollectionRefetchURI with Refeed and Immediately")
wait(lambda: count(u3) == 1, "the new URI is fetched once refresh-only is off")
check(True, "new content is crawled again")
n2 = count(url(E["SITE1"]))
check(cresult(call("CollectionRefetchURI", COLL, url(E["SITE1"]), 0, 1, 0)), "CollectionRefetchURI with Site 1")
wait(lambda: count(url(E["SITE1"])) > n2, "the site refetch fetches the site's home page again")

# --- feeding ---
r = call("CollectionSuspendFeeding", COLL, "")
check(cresult(r) and stats2()["cur"]["Feeding"] == 0, "CollectionSuspendFeeding -> %r, Feeding 0" % r)
check(call("CollectionSuspendFeeding", COLL, "")[0] == 0, "CollectionSuspendFeeding again -> [0, ...]")
r = call("CollectionResumeFeeding", COLL, "")
check(cresult(r) and stats2()["cur"]["Feeding"] == 1, "CollectionResumeFeeding -> %r, Feeding 1" % r)

# --- sites ---
r = call("CollectionGetSiteRoutingAddress", COLL, E["SITE0"])
check(r[0] == 1 and isinstance(r[1], list) and isinstance(r[1][0], str) and isinstance(r[1][1], int), "CollectionGetSiteRoutingAddress -> %r" % r)
check(cresult(call("CollectionPreemptSite", COLL, E["SITE0"])), "CollectionPreemptSite")
r = call("CollectionQuarantineSite", COLL, E["SITE2"], 600)
check(cresult(r), "CollectionQuarantineSite -> %r" % r)
u4 = url(E["SITE2"], "/?admin=4")
call("AddURIs", COLL, 1, [u4])
time.sleep(2)
check(count(u4) == 0, "a quarantined site is not crawled")
# A reprocessed URI is fed again (PPFed grows) from the store: nothing is fetched.
settle()
fed = lambda: stats2()["complete"]["PPFed"]
last = [fed(), time.time()]


def fed_quiet():
    n = fed()
    if n != last[0]:
        last[0], last[1] = n, time.time()
    return time.time() - last[1] >= 1.0


wait(fed_quiet, "the feed caught up with the crawl")
fed0, total0 = last[0], farm("/total")
check(cresult(call("CollectionReprocessURI", COLL, "", [url(E["SITE0"]), "::bad::"])), "CollectionReprocessURI (skips the invalid URI)")
wait(lambda: fed() >= fed0 + 1, "the reprocessed URI is fed again")
check(True, "the reprocessed URI is fed again (PPFed %d -> %d)" % (fed0, fed()))
check(farm("/total") == total0, "reprocessing fetched nothing")
check(cresult(call("CollectionReprocessSite", COLL, "", E["SITE0"])), "CollectionReprocessSite")
check(cresult(call("CollectionReprocessSitePrefix", COLL, E["SITE0"], url(E["SITE0"], "/"), "")), "CollectionReprocessSitePrefix")

# --- deletions ---
settle()
del0 = stats2()["complete"]["Deleted"]
r = call("CollectionDeleteURIs", COLL, [url(E["SITE2"])])
check(cresult(r), "CollectionDeleteURIs -> %r" % r)
r = call("CollectionDeleteSite", COLL, E["SITE3"])
check(cresult(r), "CollectionDeleteSite -> %r" % r)
wait(lambda: stats2()["complete"]["Deleted"] > del0 + 1, "Deleted grows")
with open(path, "w") as fh:
    fh.write(u1 + "\n")
check(cresult(call("CollectionDeleteURIFile", COLL, path)), "CollectionDeleteURIFile")


def site_deleted():
    sd = marshal.loads(call("CollectionGetSiteStatistics", COLL, E["SITE3"]).data)
    _, cyc = sd[E["SITE3"].encode()]
    return dict((n, v) for n, v in cyc[b"cOmPIEtE"][b"continuous"])[b"Deleted"][0]


wait(lambda: site_deleted() >= 1, "the deleted site's statistics count its deletions")
check(True, "the deleted site's statistics count %d deletions" % site_deleted())

# --- collections ---
xml2 = x.replace('name="c1"', 'name="c2"')
r = call("CollectionAdd", xml2, 0)
check(r == [1, "Collection added c2"], "CollectionAdd -> %r" % r)
check(call("CollectionGetList") == ["c1", "c2"], "CollectionGetList -> [c1, c2]")
r = call("CollectionAdd", xml2, 0)
check(r == [1, "Collection updated c2"], "CollectionAdd of an existing collection updates it")
f = fault("CollectionAdd", '<CrawlerConfig><DomainSpecification name="c3"><attrib name="dealy" type="real">1</attrib></DomainSpecification></CrawlerConfig>', 0)
check('unknown parameter (did you mean "delay"?)' in f.faultString, "CollectionAdd of a bad configuration faults with the config check message")
r = call("CollectionDelete", "c2", 0)
check(cresult(r), "CollectionDelete -> %r" % r)
wait(lambda: "c2" not in call("CollectionGetList"), "the deleted collection disappears")
check(True, "c2 is gone")
f = fault("CollectionGetStatus", "c2")
check("no such collection" in f.faultString, "CollectionGetStatus of a deleted collection faults")

spec = {
    "GetLogLevel", "GetNodeSchedulerXmlRpcPorts", "GetSiteManagerNum", "IsDistributed", "IsMultiNodeScheduler", "SetLogLevel",
    "AddURIs", "AddURIFile", "CollectionAdd", "CollectionDelete", "CollectionDeleteSite", "CollectionDeleteURIs",
    "CollectionDeleteURIFile", "CollectionGetConfigurationXML", "CollectionGetList", "CollectionGetSiteRoutingAddress",
    "CollectionPreemptSite", "CollectionQuarantineSite", "CollectionRefetch", "CollectionRefetchURI",
    "CollectionReprocessSite", "CollectionReprocessSitePrefix", "CollectionReprocessURI", "CollectionResume",
    "CollectionResumeFeeding", "CollectionSuspend", "CollectionSuspendFeeding", "CollectionDisableRefreshOnly",
    "CollectionEnableRefreshOnly", "CollectionGetStatus", "CollectionGetSiteStatistics", "CollectionGetStatistics",
    "CollectionGetStatistics2", "GetGlobalStatistics", "ping", "ConfigurationChanged", "ReRegister",
}
missing = spec - called
check(not missing, "every one of the %d methods was called (missing: %s)" % (len(spec), sorted(missing)))
print("ALL METHODS OK")
