"""dedust: apply learned URL normalization rules (DUST removal) in process.

``Normalizer.from_file("rules.json")`` loads one rule file (or a list of them, applied in
order) written by ``dedust learn``; ``.normalize(url)`` gives the URL's canonical form, the
same bytes ``dedust normalize`` writes; ``.normalize_many(urls)`` does a whole list on all cores
without holding the GIL; ``.explain(url)`` also names the rule that changed it. A canonical
URL is a dedup key: fetch the URL as found, use the key for the already-seen check.

``learn(clusters)`` learns a rule file (JSON text) from duplicate clusters, as ``dedust learn``
does: a mapping ``{cluster: [urls]}`` or ``(cluster, url)`` pairs.

Scrapy: ``dedust.scrapy.Addon`` (see that module).
"""

from ._dedust import Normalizer, RuleFileError, learn

__all__ = ["Normalizer", "RuleFileError", "learn"]
__version__ = "0.1.0"
