"""Check with Python's xmlrpc.client that a collection added over the API
of `trawl run` survives a restart with the same --data.

Environment: ADMIN (XML-RPC URL), FARM (the test's request-log server),
XML (crawl configuration of collection extra), SITE0 (host:port of a farm
site), MODE ("add" before the restart, "check" after)."""

import json
import os
import sys
import time
import urllib.request
import xmlrpc.client as xc

E = os.environ
s = xc.ServerProxy(E["ADMIN"], allow_none=True)


def check(cond, what):
    if not cond:
        print("FAIL:", what, flush=True)
        sys.exit(1)
    print("ok", what, flush=True)


def count(url):
    q = "?url=" + urllib.request.quote(url, safe="")
    with urllib.request.urlopen(E["FARM"] + "/count" + q) as f:
        return json.load(f)


def fetched(url, timeout=30.0):
    end = time.time() + timeout
    while time.time() < end:
        if count(url) > 0:
            return True
        time.sleep(0.1)
    return False


if E["MODE"] == "add":
    r = s.CollectionAdd(open(E["XML"]).read(), 0)
    check(r[0] == 1 and "added extra" in r[1], "CollectionAdd extra -> %r" % r)
    check(sorted(s.CollectionGetList()) == ["c1", "extra"], "CollectionGetList -> [c1, extra]")
    u = "http://" + E["SITE0"] + "/?before-restart=1"
    check(s.AddURIs("extra", 1, [u])[0] == 1 and fetched(u), "extra crawls before the restart")
else:
    check(sorted(s.CollectionGetList()) == ["c1", "extra"], "after the restart, CollectionGetList -> [c1, extra]")
    x = s.CollectionGetConfigurationXML("extra")
    check('<DomainSpecification name="extra">' in x, "after the restart, extra's XML is served")
    check(s.CollectionGetStatus("extra") == "crawling", "after the restart, extra is crawling")
    u = "http://" + E["SITE0"] + "/?after-restart=1"
    check(s.AddURIs("extra", 1, [u])[0] == 1 and fetched(u), "extra crawls after the restart")
print("RESTART OK", flush=True)
