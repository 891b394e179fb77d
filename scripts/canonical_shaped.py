#!/usr/bin/env python3
"""Duplicate clusters shaped like sites' own rel=canonical declarations, on real URLs.

Real data of that kind (a page and the canonical it declares, one or two pages per site, over
a thousand sites) is what a crawl engineer has most of, and what host-scoped rules cannot use:
each site gives one or two pairs. This script builds a stand-in from real URLs nobody on the
team wrote (`../shared/datasets/urls/kasztp.txt`: real paths and real query strings, content
parameters included): 1,350 real hosts, up to four real pages each; one or two pages per site get
one variant by a mechanism drawn from a list (http/https, www., trailing slash, tracking
parameters — several together, as campaign links carry them — default documents, a fragment,
AMP, a mobile host `m.`), the other pages stay alone (real pages with real parameters a rule must not merge).

The mechanisms are this script's choice, so the set measures whether evidence of one or two
pairs per site adds up across sites (the cross-host tier), not which mechanisms real sites
declare. Writes `cluster<TAB>url` to stdout.

Usage: scripts/canonical_shaped.py [SEED] [--case] > clusters.tsv
Then:  dedust evaluate --truth clusters.tsv --split host --test-fraction 0.5 --seed S

`--case`: an IIS page (a path with an upper-case letter ending in `.asp` or `.aspx`) that gets
a variant gets its path in lower case, the spelling such sites declare canonical (a server that
ignores case answers both); without it the output is the same as before the option existed.
"""
import random
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

SOURCE = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets" / "urls" / "kasztp.txt"
SITES = 1350


def tracking(rng):
    """One campaign or click-id suffix, as links carry them."""
    return rng.choice([
        lambda: "utm_source=" + rng.choice(["twitter", "rss", "newsletter", "fb"])
        + "&utm_medium=" + rng.choice(["social", "email"]),
        lambda: "utm_source=" + rng.choice(["rss", "newsletter"]) + "&utm_medium=email&utm_campaign="
        + rng.choice(["spring", "weekly", "launch"]),
        lambda: "fbclid=IwAR" + str(rng.randint(10**8, 10**9)),
        lambda: "gclid=Cj0K" + str(rng.randint(10**6, 10**7)),
        lambda: "ref=" + rng.choice(["hp", "nav", "footer"]),
        lambda: "cmpid=" + rng.choice(["nl", "rss", "tw"]),
        lambda: "_ga=2." + str(rng.randint(1000, 9999)),
        lambda: "mc_cid=" + format(rng.getrandbits(40), "x"),
    ])()


def variant(rng, url, mech):
    s = urlsplit(url)
    if mech == "scheme":
        return urlunsplit(("http" if s.scheme == "https" else "https",) + tuple(s[1:]))
    if mech == "www":
        host = s.netloc[4:] if s.netloc.startswith("www.") else "www." + s.netloc
        return urlunsplit((s.scheme, host) + tuple(s[2:]))
    if mech == "slash":
        p = s.path
        if p.endswith("/") and len(p) > 1:
            p = p[:-1]
        elif not p.endswith("/"):
            p += "/"
        else:
            return None
        return urlunsplit((s.scheme, s.netloc, p, s.query, ""))
    if mech == "track":
        q = (s.query + "&" if s.query else "") + tracking(rng)
        return urlunsplit((s.scheme, s.netloc, s.path, q, ""))
    if mech == "index":
        if not s.path.endswith("/"):
            return None
        doc = rng.choice(["index.html", "index.php", "index.htm", "default.aspx"])
        return urlunsplit((s.scheme, s.netloc, s.path + doc, s.query, ""))
    if mech == "mobile":
        host = s.netloc[4:] if s.netloc.startswith("www.") else s.netloc
        return urlunsplit((s.scheme, "m." + host) + tuple(s[2:]))
    if mech == "fragment":
        return url + "#comments"
    if mech == "amp":
        if s.path.endswith("/"):
            return urlunsplit((s.scheme, s.netloc, s.path + "amp/", s.query, ""))
        return urlunsplit((s.scheme, s.netloc, s.path, (s.query + "&" if s.query else "") + "amp=1", ""))
    return None


MECHANISMS = ["scheme"] * 20 + ["www"] * 15 + ["slash"] * 15 + ["track"] * 25 + ["index"] * 5 \
    + ["fragment"] * 5 + ["amp"] * 5 + ["mobile"] * 5


def iis_lower(url):
    """The URL with its path in lower case, for an IIS page with an upper-case letter."""
    s = urlsplit(url)
    if s.path.rsplit(".", 1)[-1] in ("asp", "aspx") and s.path != s.path.lower():
        return urlunsplit((s.scheme, s.netloc, s.path.lower(), s.query, ""))
    return None


def main():
    args = [a for a in sys.argv[1:] if a != "--case"]
    case = "--case" in sys.argv[1:]
    seed = int(args[0]) if args else 1
    if not SOURCE.exists():
        sys.exit(f"SKIP: {SOURCE} not found")
    rng = random.Random(seed)
    by_host = {}
    for line in SOURCE.read_text(errors="replace").splitlines():
        u = line.strip()
        try:
            s = urlsplit(u)
            host = s.hostname
        except ValueError:
            continue
        if s.scheme in ("http", "https") and host:
            by_host.setdefault(host, []).append(u)
    hosts = sorted(h for h, us in by_host.items() if len(set(us)) >= 2)
    rng.shuffle(hosts)
    out = ["cluster\turl"]
    c = 0
    for h in hosts[:SITES]:
        pages = sorted(set(by_host[h]))
        rng.shuffle(pages)
        with_variant = rng.choice([1, 1, 1, 2])
        for i, u in enumerate(pages[:4]):
            c += 1
            out.append(f"c{c}\t{u}")
            if i < with_variant and case and iis_lower(u):
                out.append(f"c{c}\t{iis_lower(u)}")
            elif i < with_variant:
                for _ in range(5):
                    v = variant(rng, u, rng.choice(MECHANISMS))
                    if v and v != u:
                        out.append(f"c{c}\t{v}")
                        break
    print("\n".join(out))


if __name__ == "__main__":
    main()
