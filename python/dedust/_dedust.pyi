from os import PathLike
from typing import Iterable, List, Mapping, Optional, Sequence, Tuple, Union

class RuleFileError(ValueError):
    """A rule file that cannot be used; the message names the file (and line)."""

class Normalizer:
    """A compiled rule set: canonical URLs as ``dedust normalize`` computes them."""

    @staticmethod
    def from_file(
        path: Union[str, PathLike, Sequence[Union[str, PathLike]]], base: bool = True
    ) -> "Normalizer":
        """Load one rule file or several (applied in order; revoked rules left out).

        Raises ``OSError`` (``FileNotFoundError``…) when a file cannot be read, ``RuleFileError``
        for a broken one.
        ``base=False`` turns the base layer (scheme/host case, default port, query order…) off.
        """
    def normalize(self, url: str) -> str:
        """The canonical form of ``url`` (unchanged when it is no usable URL)."""
    def normalize_many(self, urls: Sequence[str]) -> List[str]:
        """The canonical forms of ``urls``, in order: worker threads on all cores normalize
        without the GIL while the calling thread makes the result strings."""
    def explain(self, url: str) -> Tuple[str, Optional[str]]:
        """``(canonical, id of the rule that last changed it, or None)``."""
    def __len__(self) -> int: ...

def learn(
    clusters: Union[Mapping[object, Iterable[str]], Iterable[Tuple[object, str]]],
    *,
    validate: bool = True,
    min_support: int = 2,
    max_fpr: float = 0.15,
    min_sites: int = 2,
    min_collapse: int = 10,
    keep_fragment: bool = False,
    keep_query_order: bool = False,
    allow_cross_site: bool = False,
    priors: Optional[bool] = None,
) -> str:
    """Learn a rule file (JSON text) from duplicate clusters, as ``dedust learn`` does:
    ``{cluster: [urls]}`` or ``(cluster, url)`` pairs. Runs without the GIL.
    Priors are on by default when validating, as in ``dedust learn``; ``priors=False`` is
    ``--no-priors``."""
