"""Network files in every format pgmpy 1.x reads, behind the strict validation of ``_pgmpy``.

A pgmpy adapter module (it imports pgmpy, lazily). The format comes from the root element of
an XML file, else from the suffix, else from the first keyword of the content:

=============  ================================  ===============================
format         suffixes                          read by
=============  ================================  ===============================
BIF            ``.bif``                          pgmpy ``BIFReader``
XMLBIF         ``.xml``, ``.xmlbif``             pgmpy ``XMLBIFReader``
Hugin NET      ``.net``                          pgmpy ``NETReader``
GeNIe XDSL     ``.xdsl``                         pgmpy ``XDSLReader``
XBN            ``.xbn``                          pgmpy ``XBNReader`` (state names restored)
UAI            ``.uai``                          this module (see below)
=============  ================================  ===============================

UAI is parsed here: pgmpy 1.1.2's ``UAIReader`` orders a node's parents by set iteration
order (a CPT with two or more parents gets its axes permuted differently from run to run,
and the columns still sum to 1, so no check catches it), rejects scientific notation
(``1e-05``) and re-parses the file once per table. A UAI file names neither variables nor
states: nodes are ``"var_0"``, ``"var_1"``, ... and states ``0 .. k-1``, as pgmpy names them.
The tables are read in the standard UAI layout (last variable of the scope fastest, the child
last) when all their columns sum to 1 that way, else in the layout pgmpy's ``UAIWriter``
writes (the scope read backwards, the child first) when that fits them all, so files from
both read correctly. The choice is made for the whole file: a single table can sum to 1 both
ways (alarm's CPT of ``HR``), a whole real network does not.

Examples
--------
>>> from pufferfish_pgm.scenarios import default_model_path
>>> t = read_network_file(default_model_path("asia.bif"))
>>> len(t.nodes), t.states["smoke"]
(8, ('yes', 'no'))
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidModelError, ModelFileError, ModelFileNotFoundError
from ._network_tables import (
    DEFAULT_RENORMALIZE,
    DEFAULT_TOLERANCE,
    NetworkTables,
    check_renormalize,
    validate_tables,
)
from ._pgmpy import tables_from_pgmpy

__all__ = ["FORMATS", "detect_format", "read_network_file", "read_uai"]

#: Format name -> (description, suffixes).
FORMATS = {
    "bif": ("BIF", (".bif",)),
    "xmlbif": ("XMLBIF", (".xml", ".xmlbif")),
    "net": ("Hugin NET", (".net",)),
    "xdsl": ("GeNIe XDSL", (".xdsl",)),
    "xbn": ("XBN", (".xbn",)),
    "uai": ("UAI", (".uai",)),
}
_BY_SUFFIX = {s: name for name, (_, suffixes) in FORMATS.items() for s in suffixes
              if s != ".xml"}
_XML_ROOTS = {"bif": "xmlbif", "smile": "xdsl", "analysisnotebook": "xbn"}
_READERS = {"bif": "BIFReader", "xmlbif": "XMLBIFReader", "net": "NETReader",
            "xdsl": "XDSLReader", "xbn": "XBNReader"}


def _supported() -> str:
    return ", ".join(f"{desc} ({'/'.join(sfx)})" for desc, sfx in FORMATS.values())


def detect_format(path: Path, text: str) -> str:
    """The format of a network file (a key of :data:`FORMATS`): the root element of an XML
    file, else the suffix, else the first keyword.

    Examples
    --------
    >>> detect_format(Path("m.txt"), "BAYES\\n1\\n2\\n1\\n1 0\\n2\\n0.5 0.5\\n")
    'uai'
    >>> detect_format(Path("m.xml"), '<?xml version="1.0"?>\\n<smile id="m">')
    'xdsl'
    """
    suffix = path.suffix.lower()
    head = re.sub(r"<\?.*?\?>|<!--.*?-->|<![^>]*>", "", text[:20000], flags=re.S).lstrip()
    root = re.match(r"<([\w.:-]+)", head)
    if root and root.group(1).lower() in _XML_ROOTS:  # XML says what it is, whatever the suffix
        return _XML_ROOTS[root.group(1).lower()]
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    if suffix != ".xml":
        body = re.sub(r"(?m)^\s*(//|%|#).*$", "", text[:20000]).lstrip()
        for pattern, name in ((r"network\b", "bif"), (r"net\s*\{", "net"),
                              (r"(BAYES|MARKOV)\b", "uai")):
            if re.match(pattern, body):
                return name
    raise ModelFileError(
        f"cannot tell the format of {str(path)!r} from its suffix {suffix or '(none)'!r} or "
        f"its content; supported network formats: {_supported()}"
    )


def read_network_file(path: str | Path, *, renormalize: float = DEFAULT_RENORMALIZE,
                      tolerance: float = DEFAULT_TOLERANCE) -> NetworkTables:
    """Read a network file in any supported format into validated tables.

    Validation is that of :func:`~pufferfish_pgm.scenarios._pgmpy.tables_from_pgmpy`; its
    errors are prefixed with the file's name.
    """
    renormalize = check_renormalize(renormalize)
    path = Path(path)
    if path.is_dir():
        raise ModelFileError(f"{str(path)!r} is a directory; give the path of a network file")
    if not path.is_file():
        raise ModelFileNotFoundError(
            f"model file {str(path)!r} does not exist; give the path of a network file "
            f"({_supported()})"
        )
    text = path.read_text(encoding="utf-8", errors="replace")
    fmt = detect_format(path, text)
    try:
        if fmt == "uai":
            return read_uai(text, renormalize=renormalize, tolerance=tolerance)
        return tables_from_pgmpy(_pgmpy_model(path, fmt), renormalize=renormalize,
                                 tolerance=tolerance)
    except InvalidModelError as err:
        raise InvalidModelError(f"{path.name}: {err}") from None
    except ModelFileError as err:
        raise ModelFileError(f"cannot read {str(path)!r}: {err}") from None


def _pgmpy_model(path: Path, fmt: str) -> Any:
    """The pgmpy model a pgmpy reader makes of the file, checked to be complete."""
    import pgmpy.readwrite  # type: ignore[import-untyped]  # no hints

    reader = getattr(pgmpy.readwrite, _READERS[fmt])
    desc = FORMATS[fmt][0]
    try:
        parsed = reader(path=str(path))
        model = parsed.get_model()
    except Exception as err:  # pgmpy raises many kinds on malformed files
        raise ModelFileError(
            f"not a valid {desc} network ({type(err).__name__}: {str(err)[:200]}); check the "
            "file's syntax"
        ) from err
    # pgmpy's readers skip what they cannot parse: a truncated file gives missing CPDs
    nodes = list(model.nodes())
    missing = [v for v in nodes if model.get_cpds(v) is None]
    if not nodes or missing:
        what = "no variables" if not nodes else f"no probability table for node {missing[0]!r}"
        raise ModelFileError(f"as a {desc} network it has {what}; check that the file is "
                             "complete")
    if fmt == "xbn":
        _restore_xbn_states(model, parsed)
    return model


def _restore_xbn_states(model: Any, reader: Any) -> None:
    """pgmpy's XBN reader parses the state names but numbers the states 0..k-1: put the
    names back on every CPD (when each variable names each of its states once)."""
    names = {v: list(props["STATES"]) for v, props in reader.variables.items()}
    if any(len(set(s)) != len(s) or not all(s) for s in names.values()):
        return
    for cpd in model.get_cpds():
        if all(len(names.get(v, ())) == len(cpd.state_names[v]) for v in cpd.variables):
            cpd.store_state_names(cpd.variables, cpd.cardinality,
                                  {v: names[v] for v in cpd.variables})


# ----------------------------------------------------------------------------- UAI

def read_uai(text: str, *, renormalize: float = DEFAULT_RENORMALIZE,
             tolerance: float = DEFAULT_TOLERANCE) -> NetworkTables:
    """Validated tables from the text of a UAI ``BAYES`` file (layouts: see the module).

    Examples
    --------
    A standard file: P(var_1 | var_0), one row per state of var_0, var_1 fastest.

    >>> t = read_uai("BAYES 2  2 2  2  1 0  2 0 1  2 0.3 0.7  4 0.9 0.1 0.2 0.8")
    >>> t.nodes, t.states["var_1"], t.cpts["var_1"].tolist()
    (('var_0', 'var_1'), (0, 1), [[0.9, 0.2], [0.1, 0.8]])
    """
    tokens = re.sub(r"#.*", "", text).split()  # comments, as pgmpy strips them
    if not tokens or tokens[0].upper() != "BAYES":
        kind = tokens[0] if tokens else "nothing"
        raise ModelFileError(
            f"a UAI network must start with BAYES (a Bayesian network), found {kind[:20]!r}; "
            "a MARKOV file is an undirected model, which is not supported"
        )
    cards, scopes, values = _uai_parts(tokens)
    n = len(cards)
    nodes = [f"var_{i}" for i in range(n)]
    children = [scope[-1] for scope in scopes]
    if sorted(children) != list(range(n)):
        lone = sorted(set(range(n)) - set(children)) or [c for c in children
                                                        if children.count(c) > 1]
        raise ModelFileError(f"variable {nodes[lone[0]]!r} is not the child (last variable) "
                             "of exactly one table; a BAYES file has one table per variable")
    limit = max(tolerance, check_renormalize(renormalize))
    tables = _uai_tables(cards, scopes, values, limit)
    raw = {nodes[scope[-1]]: table for scope, table in zip(scopes, tables, strict=True)}
    parents = {nodes[scope[-1]]: tuple(nodes[i] for i in scope[:-1]) for scope in scopes}
    states = {v: tuple(range(cards[i])) for i, v in enumerate(nodes)}
    return validate_tables(nodes, states, parents, raw, renormalize=renormalize,
                           tolerance=tolerance)


class _Tokens:
    """The whitespace-separated tokens of a UAI file, read front to back."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.pos = tokens, 1   # tokens[0] is BAYES

    def take(self, count: int, kind: type, what: str) -> list:
        if count < 0:
            raise ModelFileError(f"a count before {what} is negative ({count})")
        chunk = self.tokens[self.pos:self.pos + count]
        if len(chunk) < count:
            raise ModelFileError(f"the file ends while reading {what}; it is truncated")
        self.pos += count
        try:
            return [kind(x) for x in chunk]
        except ValueError:
            raise ModelFileError(f"{what} must be {kind.__name__}s, got {chunk[:8]}") from None


def _uai_parts(tokens: list[str]) -> tuple[list[int], list[list[int]], list[np.ndarray]]:
    """Cardinalities, function scopes and value blocks of a tokenised UAI file."""
    read = _Tokens(tokens)
    n = read.take(1, int, "the number of variables")[0]
    cards = read.take(n, int, "the cardinalities")
    if any(c < 1 for c in cards):
        raise ModelFileError(f"every variable needs at least one state, got cardinalities "
                             f"{cards[:20]}")
    m = read.take(1, int, "the number of tables")[0]
    scopes = [read.take(read.take(1, int, f"the scope size of table {f}")[0], int,
                        f"the scope of table {f}") for f in range(m)]
    if any(not s or not all(0 <= i < n for i in s) for s in scopes):
        raise ModelFileError(f"a table's scope is empty or names a variable outside 0..{n - 1}")
    values = []
    for f, scope in enumerate(scopes):
        size = read.take(1, int, f"the size of table {f}")[0]
        expected = math.prod(cards[i] for i in scope)
        if size != expected:
            raise ModelFileError(f"table {f} has {size} values, but its scope {scope} needs "
                                 f"{expected}")
        values.append(np.array(read.take(size, float, f"the values of table {f}")))
    if read.pos != len(tokens):
        raise ModelFileError(f"{len(tokens) - read.pos} unexpected values after the last table")
    return cards, scopes, values


def _uai_tables(cards: list[int], scopes: list[list[int]], values: list[np.ndarray],
                limit: float) -> list[np.ndarray]:
    """The tables with axes (child, *parents), all in one layout: the standard one (rows
    over the scope, child last and fastest) when every column then sums to 1 within
    ``limit``, else pgmpy's (rows over the reversed scope, child first) when that fits every
    table. Decided per file, not per table: a table such as alarm's CPT of ``HR`` sums to 1
    both ways. When neither fits, validation names the columns of the standard layout."""
    standard, written = [], []
    for scope, vals in zip(scopes, values, strict=True):
        shape = [cards[i] for i in scope]
        standard.append(np.moveaxis(vals.reshape(shape), -1, 0))
        k = len(shape)
        written.append(np.transpose(vals.reshape(shape[::-1]), [0, *range(k - 1, 0, -1)]))

    def fits(tables: list[np.ndarray]) -> bool:
        return all(np.all(np.abs(t.sum(axis=0) - 1.0) <= limit) for t in tables)

    return written if not fits(standard) and fits(written) else standard
