"""Scrapy integration: deduplicate requests by their dedust canonical URL.

Settings::

    ADDONS = {"dedust.scrapy.Addon": 600}
    DEDUST_RULES = ["rules.json"]        # rule files written by `dedust learn`, applied in order
    DEDUST_BASE = True                   # the base layer (default on, as `dedust normalize`)

The addon sets ``REQUEST_FINGERPRINTER_CLASS`` to :class:`RequestFingerprinter` and
``DUPEFILTER_CLASS`` to :class:`DupeFilter`. A request is still sent to its URL as found; only
its fingerprint (the already-seen key) is computed from the canonical URL, and only when a rule
changed it: other requests keep Scrapy's default fingerprint. Stats: ``dedust/rewritten``
(requests whose fingerprint a rule changed) and ``dedust/duplicates_filtered`` (URLs dropped as
already seen by their dedust key that Scrapy's default fingerprint would have let through; each
such URL counted once).
"""

import logging
from weakref import WeakKeyDictionary

from scrapy.dupefilters import RFPDupeFilter
from scrapy.utils.request import RequestFingerprinter as _ScrapyFingerprinter

from . import Normalizer

logger = logging.getLogger(__name__)


class RequestFingerprinter:
    """Scrapy's fingerprint of the request with its URL replaced by the dedust canonical URL,
    for URLs a rule rewrites; Scrapy's own fingerprint for the others."""

    def __init__(self, crawler=None):
        settings = crawler.settings if crawler is not None else None
        paths = settings.getlist("DEDUST_RULES") if settings is not None else []
        paths = [p.strip() for p in paths if p.strip()]
        base = settings.getbool("DEDUST_BASE", True) if settings is not None else True
        self.normalizer = Normalizer.from_file(paths, base=base) if paths else None
        if self.normalizer is None and crawler is not None:
            # The addon is on but has nothing to apply: say so once, rather than crawl as if
            # dedust were working.
            logger.warning(
                "dedust: DEDUST_RULES names no rule file; requests keep Scrapy's own fingerprint "
                "(set DEDUST_RULES = [\"rules.json\"], files written by `dedust learn`)"
            )
        self.stats = crawler.stats if crawler is not None else None
        self.fallback = _ScrapyFingerprinter(crawler)
        # Per request object, as Scrapy's own fingerprinter caches (the dupe filter asks again).
        self._cache = WeakKeyDictionary()

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def canonical(self, url):
        """``(canonical URL, rule id)`` or ``(url, None)`` when no rule changes it."""
        if self.normalizer is None:
            return url, None
        return self.normalizer.explain(url)

    def fingerprint(self, request):
        hit = self._cache.get(request)
        if hit is None:
            key, rule = self.canonical(request.url)
            if rule is None:
                hit = (self.fallback.fingerprint(request), False)
            else:
                hit = (self.fallback.fingerprint(request.replace(url=key)), True)
                if self.stats is not None:
                    self.stats.inc_value("dedust/rewritten")
            self._cache[request] = hit
        return hit[0]

    def rewritten(self, request):
        """Whether a rule changed the URL this request's fingerprint was computed from."""
        self.fingerprint(request)
        return self._cache[request][1]


class DupeFilter(RFPDupeFilter):
    """Scrapy's duplicate filter, counting the requests dropped only because of dedust: already
    seen by their dedust key, while Scrapy's default fingerprint had not been seen (each such
    URL once)."""

    @classmethod
    def from_crawler(cls, crawler):
        df = super().from_crawler(crawler)
        df._dedust_stats = crawler.stats
        df._default_seen = set()
        return df

    def request_seen(self, request):
        seen = super().request_seen(request)
        fpr = getattr(self, "fingerprinter", None)
        known = getattr(self, "_default_seen", None)
        if isinstance(fpr, RequestFingerprinter) and known is not None:
            plain = fpr.fallback.fingerprint(request)
            if seen and plain not in known and self._dedust_stats is not None:
                self._dedust_stats.inc_value("dedust/duplicates_filtered")
            known.add(plain)
        return seen


class Addon:
    """``ADDONS = {"dedust.scrapy.Addon": 600}``: sets the fingerprinter and the dupe filter."""

    def update_settings(self, settings):
        settings.set("REQUEST_FINGERPRINTER_CLASS", RequestFingerprinter, "addon")
        settings.set("DUPEFILTER_CLASS", DupeFilter, "addon")
