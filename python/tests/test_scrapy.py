"""End to end: a Scrapy spider crawls a `dedust synth --html` site served on 127.0.0.1, once
with Scrapy's default request fingerprinter and once with dedust's addon. dedust must send
fewer requests and still fetch every distinct page.

The site: every page of `synth --html` (URLs turned to `http`, so the crawl needs no TLS) links
to every URL of its site, each DUST variant included. The server is an HTTP proxy (Scrapy's
`http_proxy`), so URLs keep their hosts (`forum0.example`, `www.…`) and the learned rules apply
as on the real web. Each crawl is a subprocess bounded in time; the server stops in `finally`.
"""

import collections
import gzip
import http.server
import json
import os
import subprocess
import sys
import threading

import pytest

from conftest import ROOT, run

try:
    import scrapy  # noqa: F401
except ImportError:
    if os.environ.get("CI") == "true":
        raise
    pytest.skip("SKIP: scrapy not installed (pip install scrapy)", allow_module_level=True)

SPIDER = r'''
import json, os, scrapy

class Site(scrapy.Spider):
    name = "site"
    custom_settings = {"ROBOTSTXT_OBEY": False, "TELNETCONSOLE_ENABLED": False,
                       "LOG_LEVEL": "WARNING", "CLOSESPIDER_TIMEOUT": 60,
                       "CONCURRENT_REQUESTS": 8, "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7"}
    start_urls = json.loads(os.environ["SITE_START"])

    def parse(self, response):
        yield from response.follow_all(css="a")

    def closed(self, reason):
        with open(os.environ["SITE_STATS"], "w") as f:
            json.dump({k: v for k, v in self.crawler.stats.get_stats().items()
                       if isinstance(v, int)}, f)
'''


def site(tmp_path):
    out = tmp_path / "syn"
    run("synth", "--sites", "3", "--pages", "25", "--seed", "4", "-o", str(out), "--html")
    pages, cluster = {}, {}
    with gzip.open(out / "pages.jsonl.gz", "rt") as f:
        for line in f:
            p = json.loads(line)
            u = "http://" + p["url"].split("://", 1)[1]
            pages.setdefault(u, p["html"])
            cluster.setdefault(u, p["cluster"])
    return pages, cluster


class Proxy(http.server.BaseHTTPRequestHandler):
    pages, links, fetched = {}, {}, []

    def do_GET(self):
        url = self.path  # absolute form: the client talks to a proxy
        html = self.pages.get(url)
        if html is None:
            self.send_error(404)
            return
        type(self).fetched.append(url)
        host = url.split("/")[2].removeprefix("www.")
        body = html.replace("</body>", "".join(
            f'<a href="{u}">x</a>' for u in self.links[host]) + "</body>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def crawl(tmp_path, proxy, starts, settings, tag):
    spider = tmp_path / "spider.py"
    spider.write_text(SPIDER)
    stats = tmp_path / f"stats-{tag}.json"
    env = dict(os.environ, http_proxy=proxy, SITE_START=json.dumps(starts), SITE_STATS=str(stats))
    env.pop("no_proxy", None)
    env.pop("NO_PROXY", None)
    args = [sys.executable, "-m", "scrapy", "runspider", str(spider)]
    for k, v in settings.items():
        args += ["-s", f"{k}={v}"]
    Proxy.fetched = []
    subprocess.run(args, env=env, check=True, timeout=180, cwd=tmp_path)
    return list(Proxy.fetched), json.loads(stats.read_text())


def test_fewer_requests_with_dedust_and_every_page_fetched(tmp_path):
    pages, cluster = site(tmp_path)
    tsv = tmp_path / "clusters.tsv"
    tsv.write_text("cluster\turl\n" + "".join(f"{cluster[u]}\t{u}\n" for u in pages))
    rules = tmp_path / "rules.json"
    run("learn", str(tsv), "-o", str(rules))
    links = collections.defaultdict(list)
    for u in pages:
        links[u.split("/")[2].removeprefix("www.")].append(u)
    Proxy.pages, Proxy.links = pages, links
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy = f"http://127.0.0.1:{server.server_address[1]}"
    starts = [v[0] for v in links.values()]
    try:
        plain, st_plain = crawl(tmp_path, proxy, starts, {}, "default")
        with_dedust, st = crawl(tmp_path, proxy, starts, {
            "ADDONS": json.dumps({"dedust.scrapy.Addon": 600}),
            "DEDUST_RULES": str(rules),
        }, "dedust")
    finally:
        server.shutdown()
        server.server_close()
    distinct = {cluster[u] for u in pages}
    print(f"\n{len(pages)} URLs, {len(distinct)} distinct pages: "
          f"{len(plain)} requests with Scrapy's fingerprinter, {len(with_dedust)} with dedust "
          f"(dedust/rewritten {st.get('dedust/rewritten', 0)}, "
          f"dedust/duplicates_filtered {st.get('dedust/duplicates_filtered', 0)})")
    assert {cluster[u] for u in plain} == distinct
    assert {cluster[u] for u in with_dedust} == distinct, "every distinct page fetched"
    assert len(with_dedust) < len(plain)
    assert st.get("dedust/rewritten", 0) > 0
    # Each URL dedust kept Scrapy from fetching is counted once, and only those.
    assert st.get("dedust/duplicates_filtered", 0) == len(set(plain)) - len(set(with_dedust))
    # Requests went to the URLs as found (a rewritten URL would be a 404 here).
    for s in (st_plain, st):
        assert s.get("downloader/response_status_count/404", 0) == 0
        assert s.get("downloader/response_status_count/200", 0) > 0
    assert "dedust/rewritten" not in st_plain


def test_addon_without_rules_warns_and_keeps_scrapys_fingerprint(caplog):
    from scrapy import Request
    from scrapy.utils.test import get_crawler
    from scrapy.utils.request import RequestFingerprinter as Plain

    from dedust.scrapy import RequestFingerprinter

    crawler = get_crawler(settings_dict={"DEDUST_RULES": []})
    with caplog.at_level("WARNING", logger="dedust.scrapy"):
        fp = RequestFingerprinter.from_crawler(crawler)
    assert any("DEDUST_RULES names no rule file" in r.getMessage() for r in caplog.records)
    r = Request("https://example.org/a?b=1")
    assert fp.fingerprint(r) == Plain(crawler).fingerprint(r)
