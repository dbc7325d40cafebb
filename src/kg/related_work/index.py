"""The related-papers index: posting lists of the paper–concept graph and the concept score.

A paper's weight for a concept is

    role × tf(m) × idf^p × (β if the paper has the concept only through a narrower one)

    role  = `proposed` if the paper proposes the concept, `used` if it uses it;
    tf(m) = m (k + 1) / (m + k), saturating in m, the mentions in the abstract and title (k = 0: 1 + ln m);
    idf   = ln(1 + N / df), N papers, df of them having the concept (directly or through a narrower);
    β     = weight of a broader concept reached through skos:broader ("semantic segmentation"
            → "segmentation"), up to `BROADER_DEPTH` steps;

and the concept score of a candidate is the dot product of the two papers' weights, divided by
(1 - b + b · n / n̄) with n the candidate's number of concepts (BM25's length normalisation,
available but off: b = 0 measured best). Each shared concept's product is a reason; the score
is their sum divided by the same length factor. A concept both papers have only through
narrower ones (two kinds of segmentation) is not shared. The parameters (`SCORING`) were
chosen by ``bench/related_eval.py --split tune --variants``, which prints the others.

`kg build` writes the index as ``related.idx`` (a versioned JSON header, then packed arrays,
mapped at query time: `kg related` loads no graph.json, networkx or spaCy). It also holds the
word postings (`kg.related_work.lexical`); `kg.related_work.rank` fuses the signals.
"""

from __future__ import annotations

import array
import json
import math
import mmap
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from kg.related_work import lexical
from kg.related_work.lookup import fold_titles, one_line, paper_id
from kg.util.atomic import atomic_open

if TYPE_CHECKING:  # networkx is imported only by the graph fallback: it costs ~0.4 s
    import networkx as nx

INDEX_FILE = "related.idx"
INDEX_FORMAT = "kg-related-index"
INDEX_VERSION = 7  # bump when the layout or the scoring formula changes: older indexes are then stale
MAGIC = b"KGRELIDX"
BROADER_DEPTH = 2  # broader concepts reached in at most this many skos:broader steps

# Scoring parameters. They are stored in the index; an index written with other values is stale.
# "concepts", "lexical" and "embedding" weigh the three signals `kg.related_work.rank` fuses.
SCORING: dict[str, float] = {
    "proposed": 1.5, "used": 1.0, "k": 1.2, "idf_power": 1.0, "broader": 0.5, "b": 0.0,
    "concepts": 0.03, "lexical": 0.45, "embedding": 0.52,
}  # fmt: skip

Numbers: TypeAlias = "array.array[int] | memoryview[int]"  # packed ints: built in memory, or viewed in a mapped file
# Lexical weights are stored as ints (`Postings` holds ints): idf × BM25 weight × this.
WEIGHT_SCALE = 1 << 16

# A posting's code packs the mention count, whether the concept came through a narrower one,
# and the role into one int: mentions << MENTIONS_SHIFT | BROADER_BIT | PROPOSED_BIT.
PROPOSED_BIT = 1
BROADER_BIT = 2
MENTIONS_SHIFT = 2


def posting_code(role: str, mentions: int, broader: bool = False) -> int:
    return max(int(mentions), 1) << MENTIONS_SHIFT | (BROADER_BIT if broader else 0) | (PROPOSED_BIT if role == "proposed" else 0)


def role_of(code: int) -> str:
    return "proposed" if code & PROPOSED_BIT else "used"


def is_broader(code: int) -> bool:
    return bool(code & BROADER_BIT)


def idf_weight(papers: int, df: int, power: float) -> float:
    return float(math.log(1.0 + papers / df) ** power)


def term(code: int, idf: float, scoring: dict[str, float]) -> float:
    """A paper's weight for a concept: role × tf × idf (× β through a narrower concept)."""
    mentions, k = code >> MENTIONS_SHIFT, scoring["k"]
    tf = mentions * (k + 1) / (mentions + k) if k > 0 else 1.0 + math.log(mentions)
    weight = (scoring["proposed"] if code & PROPOSED_BIT else scoring["used"]) * tf * idf
    return weight * scoring["broader"] if code & BROADER_BIT else weight


class PackedStrings:
    """A read-only sequence of strings packed as UTF-8 bytes with an offsets array: the index
    keeps concept ids, labels and types this way so that a query decodes only the few it
    shows (decoding 175,000 labels from JSON took longer than the ranking)."""

    def __init__(self, data: bytes | Numbers, offsets: Numbers) -> None:
        self._data, self._offsets = data, offsets

    @classmethod
    def pack(cls, strings: list[str]) -> PackedStrings:
        encoded = [s.encode("utf-8") for s in strings]
        offsets = array.array("q", [0])
        for item in encoded:
            offsets.append(offsets[-1] + len(item))
        return cls(b"".join(encoded), offsets)

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, number: int) -> str:
        if not 0 <= number < len(self):
            raise IndexError(number)
        return bytes(self._data[self._offsets[number] : self._offsets[number + 1]]).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return (self[n] for n in range(len(self)))


@dataclass(frozen=True, slots=True)
class Postings:
    """Posting lists in compressed sparse rows: row r's items are ``items[ptr[r]:ptr[r + 1]]``,
    ascending, each with its value (a posting code or a weight) at the same position. The
    index holds four: papers' concepts and concepts' papers, papers' terms and terms' papers."""

    ptr: Numbers  # rows + 1 offsets ("q")
    items: Numbers  # the column of each posting ("i")
    values: Numbers  # the value of each posting ("i")

    @classmethod
    def from_rows(cls, rows: Iterable[Sequence[tuple[int, int]]]) -> Postings:
        """Rows of (item, value), each already sorted by item."""
        ptr, items, values = array.array("q", [0]), array.array("i"), array.array("i")
        for row in rows:
            items.extend([item for item, _ in row])
            values.extend([value for _, value in row])
            ptr.append(len(items))
        return cls(ptr, items, values)

    def transposed(self, columns: int) -> Postings:
        """The same postings by item (`columns` of them), each one's rows ascending: what
        `from_rows` makes of the transposed rows, by a stable sort instead of a Python pass
        per posting."""
        import numpy as np  # only when an index is built from a graph

        items = np.asarray(self.items)
        rows = np.repeat(np.arange(len(self)), np.diff(np.asarray(self.ptr)))
        order = np.argsort(items, kind="stable")  # stable: rows stay ascending within a column
        column_ptr = np.concatenate(([0], np.cumsum(np.bincount(items, minlength=columns))))
        return Postings(
            array.array("q", column_ptr.astype(np.int64).tobytes()),
            array.array("i", rows[order].astype(np.intc).tobytes()),
            array.array("i", np.asarray(self.values)[order].astype(np.intc).tobytes()),
        )

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def bounds(self, row: int) -> tuple[int, int]:
        """Where row `row`'s postings lie in `items` and `values`."""
        return self.ptr[row], self.ptr[row + 1]

    def count(self, row: int) -> int:
        """How many postings row `row` has (a concept's or a term's papers: its document frequency)."""
        return self.ptr[row + 1] - self.ptr[row]

    def row(self, row: int) -> zip[tuple[int, int]]:
        """Row `row`'s (item, value) pairs."""
        start, end = self.ptr[row], self.ptr[row + 1]
        return zip(self.items[start:end], self.values[start:end], strict=True)


@dataclass(frozen=True, slots=True)
class SharedConcept:
    """One concept a candidate shares with the query, and what it adds to the concept score."""

    concept: int
    contribution: float
    query_code: int
    candidate_code: int


class RelatedIndex:
    """Posting lists of the paper–concept graph, ready for ranking.

    Papers and concepts are numbered in sorted-id order; `concept_papers` lists each concept's
    papers and `paper_concepts` each paper's concepts (broader ones included, marked in the
    posting code), both with their posting codes.
    """

    # How related.idx names each `Postings`' three arrays (ptr, items, values); `_ARRAYS` is the
    # order of all its arrays in the file. Loading and saving map these names onto the attributes.
    _POSTINGS = {
        "paper_concepts": ("paper_ptr", "paper_concepts", "paper_codes"),
        "concept_papers": ("concept_ptr", "concept_papers", "concept_codes"),
        "term_papers": ("term_ptr", "term_papers", "term_weights"),
        "paper_terms": ("paper_term_ptr", "paper_terms", "paper_term_weights"),
    }
    _ARRAYS = (
        "paper_ptr", "paper_concepts", "paper_codes", "concept_ptr", "concept_papers", "concept_codes", "lengths",
        "term_ptr", "term_papers", "term_weights", "paper_term_ptr", "paper_terms", "paper_term_weights", "key_concepts",
    )  # fmt: skip
    # Stored packed (PackedStrings). `terms` is the sorted lexical vocabulary, `concept_keys` the
    # sorted match keys of every concept label (`key_concepts` the concept of each).
    _STRINGS = ("concept_ids", "concept_labels", "concept_types", "terms", "concept_keys")

    def __init__(
        self,
        *,
        paper_ids: list[str],
        titles: list[str],
        concept_ids: list[str] | PackedStrings,
        concept_labels: list[str] | PackedStrings,
        concept_types: list[str] | PackedStrings,
        paper_concepts: Postings,
        concept_papers: Postings,
        lengths: Numbers,
        terms: list[str] | PackedStrings,
        term_papers: Postings,
        paper_terms: Postings,
        concept_keys: list[str] | PackedStrings,
        key_concepts: Numbers,
        scoring: dict[str, float],
        folded_titles: str | None = None,
        lexical_rules: str | None = lexical.SIGNATURE,
    ) -> None:
        self.paper_ids = paper_ids
        self.titles = titles
        self.concept_ids = concept_ids
        self.concept_labels = concept_labels
        self.concept_types = concept_types
        self.paper_concepts = paper_concepts
        self.concept_papers = concept_papers
        self.lengths = lengths  # each paper's number of concepts of its own (not broader)
        # The lexical postings (`kg.related_work.lexical`): each term's papers and each paper's
        # terms, with idf × BM25 weight × `WEIGHT_SCALE`.
        self.terms = terms
        self.term_papers = term_papers
        self.paper_terms = paper_terms
        self.concept_keys = concept_keys
        self.key_concepts = key_concepts
        self.scoring = dict(scoring)
        self.lexical_rules = lexical_rules  # `lexical.SIGNATURE` of the rules that made the word postings
        self.mean_length = (sum(lengths) / len(lengths)) if len(lengths) else 1.0
        # Stored with the index so that `kg.related_work.lookup` need not fold every title on each query.
        self.folded_titles = fold_titles(titles) if folded_titles is None else folded_titles

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_graph(cls, graph: nx.DiGraph[str], *, scoring: dict[str, float] | None = None) -> RelatedIndex:
        scoring = {**SCORING, **(scoring or {})}
        papers = sorted((key, data) for key, data in graph.nodes(data=True) if data.get("kind") == "paper")
        concepts = sorted((key, data) for key, data in graph.nodes(data=True) if data.get("kind") == "concept")
        paper_number = {key: number for number, (key, _) in enumerate(papers)}
        concept_number = {key: number for number, (key, _) in enumerate(concepts)}
        up: dict[int, list[int]] = {}  # concept → its broader concepts
        direct: list[dict[int, int]] = [{} for _ in papers]  # paper → {concept: code}
        # Over the adjacency dicts, in graph.edges() order: the edge view's per-edge cost was
        # a third of the build on large graphs. Papers' mentions, concepts' broader links.
        for source, targets in graph.adjacency():
            if source in paper_number:
                own = direct[paper_number[source]]
                for target, edge in targets.items():
                    if edge.get("kind") == "mentions" and target in concept_number:
                        own[concept_number[target]] = posting_code(edge.get("role", "used"), edge.get("mentions", 1))
            elif source in concept_number:
                for target, edge in targets.items():
                    if edge.get("kind") == "broader" and target in concept_number:
                        up.setdefault(concept_number[source], []).append(concept_number[target])

        by_paper: list[list[tuple[int, int]]] = []
        for own in direct:
            lifted: dict[int, int] = {}  # broader concept → the strongest code reaching it
            frontier = [(concept, code) for concept, code in own.items() if concept in up]  # the rest lift nothing
            for _ in range(BROADER_DEPTH if scoring["broader"] else 0):
                nxt = []
                for concept, code in frontier:
                    for parent in up.get(concept, ()):
                        if parent in own:
                            continue
                        lifted_code = code | 2
                        if lifted_code > lifted.get(parent, 0):
                            lifted[parent] = lifted_code
                            nxt.append((parent, lifted_code))
                frontier = nxt
            row = sorted({**lifted, **own}.items() if lifted else own.items())
            by_paper.append(row)

        paper_concepts = Postings.from_rows(by_paper)
        vocabulary, rows, idfs = lexical.postings([lexical.paper_text(data.get("title"), data.get("abstract")) for _, data in papers])
        paper_terms = Postings.from_rows([[(term, round(idfs[term] * weight * WEIGHT_SCALE)) for term, weight in row] for row in rows])
        keys = sorted({(key, number) for number, (_, data) in enumerate(concepts) for key in lexical.label_keys(data)})
        return cls(
            paper_ids=[paper_id(key, data) for key, data in papers],
            titles=[one_line(data.get("title")) for _, data in papers],
            concept_ids=[data.get("id") or key.removeprefix("concept:") for key, data in concepts],
            concept_labels=[data.get("label") or "" for _, data in concepts],
            concept_types=[data.get("type") or "" for _, data in concepts],
            paper_concepts=paper_concepts,
            concept_papers=paper_concepts.transposed(len(concepts)),
            lengths=array.array("i", [len(own) for own in direct]),
            terms=vocabulary,
            term_papers=paper_terms.transposed(len(vocabulary)),
            paper_terms=paper_terms,
            concept_keys=[key for key, _ in keys],
            key_concepts=array.array("i", [number for _, number in keys]),
            scoring=scoring,
        )

    # -- on disk ---------------------------------------------------------------------------
    # related.idx = MAGIC, an 8-byte little-endian header length, a UTF-8 JSON header (format,
    # version, graph stamp, scoring, ids, titles, labels, where each array lies), then the
    # arrays as raw little-endian bytes. Loading maps the file and views the arrays in place,
    # so a query reads only the postings it touches.

    def save(self, path: str | os.PathLike[str], *, graph_stamp: dict[str, Any] | None = None) -> Path:
        """Write the index atomically. `graph_stamp` (graph.json's content id) marks what it indexes."""
        layout, blobs, offset = {}, [], 0
        packed = {name: PackedStrings.pack(list(getattr(self, name))) for name in self._STRINGS}
        sources: dict[str, Any] = self._file_arrays()
        for name, strings in packed.items():
            sources[f"{name}.offsets"] = strings._offsets
            sources[f"{name}.bytes"] = array.array("B", strings._data)
        for name, source in sources.items():  # an array, or a memoryview of a loaded index
            values = array.array(getattr(source, "typecode", None) or source.format, source)
            if sys.byteorder == "big":
                values.byteswap()
            data = values.tobytes()
            layout[name] = {"type": values.typecode, "offset": offset, "count": len(values)}
            padding = -len(data) % 8  # keep every array 8-byte aligned
            blobs.append(data + bytes(padding))
            offset += len(data) + padding
        header = {
            "format": INDEX_FORMAT,
            "version": INDEX_VERSION,
            "graph": graph_stamp,
            "scoring": self.scoring,
            "lexical": self.lexical_rules,
            "papers": {"ids": self.paper_ids, "titles": self.titles, "folded_titles": self.folded_titles},
            "arrays": layout,
        }
        encoded = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        encoded += b" " * (-(len(MAGIC) + 8 + len(encoded)) % 8)
        target = Path(path)
        with atomic_open(target, "wb") as handle:
            handle.write(MAGIC + len(encoded).to_bytes(8, "little") + encoded)
            for blob in blobs:
                handle.write(blob)
        return target

    def _file_arrays(self) -> dict[str, Numbers]:
        """The index's arrays by their names in related.idx, in file order (`_ARRAYS`)."""
        named = {"lengths": self.lengths, "key_concepts": self.key_concepts}
        for attribute, names in self._POSTINGS.items():
            postings = getattr(self, attribute)
            named.update(zip(names, (postings.ptr, postings.items, postings.values), strict=True))
        return {name: named[name] for name in self._ARRAYS}

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> tuple[RelatedIndex, dict[str, Any] | None]:
        """Read an index; returns it with the graph stamp it was written for. ValueError if unusable."""
        with open(path, "rb") as handle:
            if handle.read(len(MAGIC)) != MAGIC:
                raise ValueError(f"{path}: not a version {INDEX_VERSION} related-papers index")
            size = int.from_bytes(handle.read(8), "little")
            header = json.loads(handle.read(size).decode("utf-8"))
            start = len(MAGIC) + 8 + size
            data = memoryview(mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ))[start:]
        if header.get("format") != INDEX_FORMAT or header.get("version") != INDEX_VERSION:
            raise ValueError(f"{path}: not a version {INDEX_VERSION} related-papers index")
        arrays: dict[str, Numbers] = {}
        for name in header["arrays"]:
            spec = header["arrays"][name]
            width = array.array(spec["type"]).itemsize
            chunk = data[spec["offset"] : spec["offset"] + width * spec["count"]]
            if len(chunk) != width * spec["count"]:
                raise ValueError(f"{path}: truncated index")
            if sys.byteorder == "little":
                arrays[name] = chunk.cast(spec["type"])  # a view into the mapped file: no copy
            else:
                swapped = array.array(spec["type"], chunk.tobytes())
                swapped.byteswap()
                arrays[name] = swapped
        strings = {name: PackedStrings(arrays.pop(f"{name}.bytes"), arrays.pop(f"{name}.offsets")) for name in cls._STRINGS}
        postings = {attribute: Postings(*(arrays.pop(name) for name in names)) for attribute, names in cls._POSTINGS.items()}
        rest: dict[str, Any] = {**strings, **postings, **arrays}  # the names of __init__'s parameters
        index = cls(
            paper_ids=header["papers"]["ids"],
            titles=header["papers"]["titles"],
            folded_titles=header["papers"]["folded_titles"],
            scoring=header["scoring"],
            lexical_rules=header.get("lexical"),
            **rest,
        )
        return index, header.get("graph")

    # -- concept scores ----------------------------------------------------------------------

    def query_terms(self, paper: int, types: Iterable[str] | None = None) -> dict[int, tuple[float, int, float]]:
        """The query paper's concepts: concept → (its weight, posting code, idf)."""
        allowed = None if types is None else set(types)
        total, scoring, power = len(self.paper_ids), self.scoring, self.scoring["idf_power"]
        terms = {}
        for concept, code in self.paper_concepts.row(paper):
            if allowed is not None and self.concept_types[concept] not in allowed:
                continue
            idf = idf_weight(total, self.concept_papers.count(concept), power)
            terms[concept] = (term(code, idf, scoring), code, idf)
        return terms

    def concept_scores(self, paper: int, terms: dict[int, tuple[float, int, float]]) -> dict[int, float]:
        """Every candidate sharing a concept with `paper`: its length-normalised concept score."""
        scoring = self.scoring
        dots: dict[int, float] = {}  # candidate -> dot product with the query vector
        for concept, (query_weight, query_code, idf) in terms.items():
            # Two concepts both reached only through narrower ones say little: such a pair
            # is skipped (a broader concept counts when one side names it).
            query_broader = query_code & BROADER_BIT
            products: dict[int, float] = {}  # candidate's posting code -> weight product (few codes)
            get = dots.get
            # The hot loop (a common concept has thousands of papers): keep it minimal.
            for candidate, candidate_code in self.concept_papers.row(concept):
                product = products.get(candidate_code)
                if product is None:
                    both_broader = query_broader and candidate_code & BROADER_BIT
                    product = 0.0 if both_broader else query_weight * term(candidate_code, idf, scoring)
                    products[candidate_code] = product
                if product:
                    dots[candidate] = get(candidate, 0.0) + product
        dots.pop(paper, None)
        b, mean, lengths = scoring["b"], self.mean_length or 1.0, self.lengths
        if b:
            for candidate in dots:
                dots[candidate] /= 1.0 - b + b * lengths[candidate] / mean
        return dots

    def shared(self, candidate: int, terms: dict[int, tuple[float, int, float]]) -> list[SharedConcept]:
        """The concepts `candidate` shares with the query, each with its share of the score."""
        b = self.scoring["b"]
        norm = 1.0 - b + b * self.lengths[candidate] / (self.mean_length or 1.0) if b else 1.0
        found = []
        for concept, code in self.paper_concepts.row(candidate):
            found_term = terms.get(concept)
            if found_term is None:
                continue
            query_weight, query_code, idf = found_term
            if query_code & BROADER_BIT and code & BROADER_BIT:
                continue
            found.append(SharedConcept(concept, query_weight * term(code, idf, self.scoring) / norm, query_code, code))
        found.sort(key=lambda s: (-s.contribution, self.concept_ids[s.concept]))
        return found

    # -- the lexical signal and the words behind it --------------------------------------------

    def paper_words(self, paper: int) -> list[int]:
        """The paper's terms (numbers into `terms`): the lexical query of a paper."""
        start, end = self.paper_terms.bounds(paper)
        return list(self.paper_terms.items[start:end])

    def lexical_scores(self, words: Iterable[int]) -> Any:
        """Every paper's lexical score for a query of these terms (a numpy array)."""
        import numpy as np

        ptr, papers, weights = self._lexical_arrays()
        words = list(words)
        if not words:
            return np.zeros(len(self.paper_ids))
        chosen = np.concatenate([np.arange(ptr[w], ptr[w + 1]) for w in words])
        return np.bincount(papers[chosen], weights=weights[chosen].astype(np.float64), minlength=len(self.paper_ids)) / WEIGHT_SCALE

    def _lexical_arrays(self) -> tuple[Any, Any, Any]:
        """The lexical postings as numpy arrays: views of the mapped file, nothing copied."""
        cached = getattr(self, "_lexical_numpy", None)
        if cached is None:
            import numpy as np

            postings = self.term_papers
            cached = (np.asarray(postings.ptr), np.asarray(postings.items), np.asarray(postings.values))
            self._lexical_numpy = cached
        return cached


def bisect_strings(strings: PackedStrings | list[str], key: str) -> int:
    """The first position in sorted `strings` not before `key`."""
    low, high = 0, len(strings)
    while low < high:
        middle = (low + high) // 2
        if strings[middle] < key:
            low = middle + 1
        else:
            high = middle
    return low


def find_string(strings: PackedStrings | list[str], key: str) -> int | None:
    position = bisect_strings(strings, key)
    return position if position < len(strings) and strings[position] == key else None

