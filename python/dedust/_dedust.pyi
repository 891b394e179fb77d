from os import PathLike
from typing import List, Optional, Sequence, Tuple, Union

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
        """The canonical forms of ``urls``, in order, on all cores without the GIL."""
    def explain(self, url: str) -> Tuple[str, Optional[str]]:
        """``(canonical, id of the rule that last changed it, or None)``."""
    def __len__(self) -> int: ...
