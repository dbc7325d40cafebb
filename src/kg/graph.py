"""The paper–concept graph (networkx) and its on-disk form, ``out/graph.json``.

Node keys are namespaced so paper and concept ids can never collide:

* ``paper:<id>``   kind="paper": id, title, title_derived, abstract, authors, year,
  venue, url, doi, arxiv_id, keywords, and results (the paper's result claims, `kg.model.Result`
  dicts without paper_id, in text order; only on papers that state some)
* ``concept:<id>`` kind="concept": id, type (METHOD|DATASET|HARDWARE|METRIC|TASK),
  label (preferred), alt_labels, broader (concept ids)

Edges:

* paper → concept, kind="mentions": role ("proposed" if any mention is proposed, else
  "used"), mentions (count, the title's included), weight (sum of mention confidences), spans
  ([[start, end, score], …] character offsets into the paper's abstract, for provenance;
  [start, end, score, "title"] into its title)
* concept → broader concept, kind="broader"
* paper → paper, kind="similar": similarity (cosine of the two papers' sentence embeddings,
  4 places), rank (1 = the source's nearest); only with `kg build --embed`, the source's
  `kg.related_work.embed.NEIGHBOURS` nearest papers

`load` needs only the standard library and networkx: commands that read a built graph
never import spaCy (and `content_id` not even networkx). GraphML, the other file format of
the networkx graph itself (not RDF: that is `kg.rdf`), is written here too.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import weakref
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from kg.errors import GraphDamaged, GraphNotFound
from kg.model import Concept, Paper, PaperEntities, Result
from kg.util.atomic import atomic_open, open_output, output_errors

if TYPE_CHECKING:  # networkx is imported where a graph is made, keeping `content_id` light
    import networkx as nx

GRAPH_FILE = "graph.json"
FORMAT = "kg-graph"
FORMAT_VERSION = 1

_CONTENT_ID = re.compile(r'"content_id":"([0-9a-f]{64})"')

PAPER_FIELDS = ("id", "title", "title_derived", "abstract", "authors", "year", "venue", "url", "doi", "arxiv_id", "keywords")


def paper_key(paper_id: str) -> str:
    return f"paper:{paper_id}"


def concept_key(concept_id: str) -> str:
    return f"concept:{concept_id}"


def build_graph(
    papers: Iterable[Paper],
    entities: Iterable[PaperEntities],
    concepts: Iterable[Concept],
    *,
    meta: dict[str, Any] | None = None,
    similar: Iterable[tuple[str, str, float]] = (),
    results: Iterable[Iterable[Result]] = (),
) -> nx.DiGraph[str]:
    """Assemble the graph. Insertion order is sorted so the saved file is deterministic.
    `similar`: (paper id, neighbour id, cosine), each paper's neighbours best first.
    `results`: each paper's result claims (`kg.results.link`)."""
    import networkx as nx

    graph: nx.DiGraph[str] = nx.DiGraph(**(meta or {}))
    for paper in sorted(papers, key=lambda p: p.id):
        attrs = {name: getattr(paper, name) for name in PAPER_FIELDS}
        attrs["authors"] = list(paper.authors)
        attrs["keywords"] = list(paper.keywords)
        graph.add_node(paper_key(paper.id), kind="paper", **attrs)
    for claims in results:
        for result in claims:
            node = graph.nodes.get(paper_key(result.paper_id))
            if node is not None:
                node.setdefault("results", []).append({k: v for k, v in result.to_dict().items() if k != "paper_id"})
    concepts = sorted(concepts, key=lambda c: c.id)
    for concept in concepts:
        graph.add_node(
            concept_key(concept.id),
            kind="concept",
            id=concept.id,
            type=concept.type,
            label=concept.pref_label,
            alt_labels=list(concept.alt_labels),
            broader=list(concept.broader),
        )
    for concept in concepts:
        for broader in concept.broader:
            if concept_key(broader) in graph:
                graph.add_edge(concept_key(concept.id), concept_key(broader), kind="broader")
    nodes = graph.nodes
    for record in sorted(entities, key=lambda e: e.paper_id):
        source = paper_key(record.paper_id)
        if source not in nodes:
            continue
        # One paper's links gathered first (in order of their first mention), then added at
        # once: networkx lookups per mention were most of this stage on a big corpus.
        links: dict[str, dict[str, Any]] = {}
        for mention in sorted(record.mentions, key=lambda m: (m.start, m.end, m.concept)):
            target = concept_key(mention.concept)
            edge = links.get(target)
            if edge is None:
                if target not in nodes:
                    continue
                edge = links[target] = {"kind": "mentions", "role": "used", "mentions": 0, "weight": 0.0, "spans": []}
            edge["mentions"] += 1
            edge["weight"] = round(edge["weight"] + float(mention.score), 6)
            edge["spans"].append([mention.start, mention.end, mention.score] + (["title"] if mention.where == "title" else []))
            if mention.role == "proposed":
                edge["role"] = "proposed"
        graph.add_edges_from((source, target, edge) for target, edge in links.items())
    ranks: dict[str, int] = {}
    for source_id, target_id, similarity in similar:
        source, target = paper_key(source_id), paper_key(target_id)
        if source in graph and target in graph and source != target:
            ranks[source] = ranks.get(source, 0) + 1
            graph.add_edge(source, target, kind="similar", similarity=float(similarity), rank=ranks[source])
    return graph


def papers_of(graph: nx.DiGraph[str]) -> Iterable[tuple[str, dict[str, Any]]]:
    return ((key, data) for key, data in graph.nodes(data=True) if data.get("kind") == "paper")


def concepts_of(graph: nx.DiGraph[str]) -> Iterable[tuple[str, dict[str, Any]]]:
    return ((key, data) for key, data in graph.nodes(data=True) if data.get("kind") == "concept")


def to_json(graph: nx.DiGraph[str]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "meta": dict(graph.graph),
        "nodes": [_node_record(node) for node in graph.nodes(data=True)],
        "edges": [_edge_record(edge) for edge in graph.edges(data=True)],
    }


def _node_record(node: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    key, data = node
    return {"key": key, **data}


def _edge_record(edge: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    source, target, data = edge
    return {"source": source, "target": target, **data}


def from_json(data: dict[str, Any]) -> nx.DiGraph[str]:
    import networkx as nx

    graph: nx.DiGraph[str] = nx.DiGraph(**data.get("meta", {}))
    graph.add_nodes_from((node.pop("key"), node) for node in data["nodes"])
    graph.add_edges_from((edge.pop("source"), edge.pop("target"), edge) for edge in data["edges"])
    return graph


def save(graph: nx.DiGraph[str], directory: str | os.PathLike[str]) -> Path:
    """Write ``graph.json``. Its header carries `content_id`, a SHA-256 of the rest, so
    derived files (e.g. the related-papers index) can tell cheaply which graph they index.

    Streamed: the body is encoded a batch of nodes or edges at a time, hashed as it is written
    after a header of the same length, which gets the digest at the end (on 66k papers the
    whole body as one string and its bytes held 2 GB more). The bytes are those of `to_json`
    dumped at once, content id included."""
    path = Path(directory) / GRAPH_FILE
    digest = hashlib.sha256()
    with atomic_open(path, "wb", encoding=None) as handle:
        # Header first (fixed order and length) so `content_id` can be read without parsing the file.
        handle.write(_header("0" * 64))
        pieces = _body(graph)
        digest.update(next(pieces).encode())  # "{": hashed, and written by the header
        for piece in pieces:
            data = piece.encode("utf-8")
            digest.update(data)
            handle.write(data)
        handle.seek(0)
        handle.write(_header(digest.hexdigest()))
    return path


_SAVE_BATCH = 2000  # nodes or edges encoded per piece of `_body`


def _header(content_id: str) -> bytes:
    """The file's opening, up to the body's first key; the body's own "{" is hashed, not written."""
    return f'{{"format":"{FORMAT}","version":{FORMAT_VERSION},"content_id":"{content_id}",'.encode()


def _body(graph: nx.DiGraph[str]) -> Iterator[str]:
    """``{"meta":…,"nodes":[…],"edges":[…]}`` as `json.dumps` would write it, in pieces; the
    first piece ("{") is left out of the file (the header opens the object)."""
    def dumps(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    yield "{"
    yield '"meta":' + dumps(dict(graph.graph)) + ',"nodes":['
    yield from _batches(graph.nodes(data=True), lambda node: dumps(_node_record(node)))
    yield '],"edges":['
    yield from _batches(graph.edges(data=True), lambda edge: dumps(_edge_record(edge)))
    yield "]}"


def _batches(items: Iterable[Any], encode: Callable[[Any], str]) -> Iterator[str]:
    batch: list[str] = []
    first = True
    for item in items:
        batch.append(encode(item))
        if len(batch) == _SAVE_BATCH:
            yield ("" if first else ",") + ",".join(batch)
            batch, first = [], False
    if batch:
        yield ("" if first else ",") + ",".join(batch)


def content_id(directory: str | os.PathLike[str]) -> str | None:
    """The `content_id` of a saved graph.json, read from its first bytes (None if absent)."""
    path = Path(directory)
    if path.is_dir():
        path = path / GRAPH_FILE
    try:
        with path.open("rb") as handle:
            head = handle.read(256).decode("utf-8", errors="replace")
    except OSError:
        return None
    match = _CONTENT_ID.search(head)
    return match.group(1) if match else None


def graph_stamp(path: str | os.PathLike[str]) -> dict[str, Any]:
    """What identifies a saved graph: its content id (size and mtime for an older file
    without one). Every derived file (related.idx, graph.oxigraph/) records it and is stale
    when it differs; content, not mtime, so a copied or touched graph.json is still fresh."""
    cid = content_id(path)
    if cid is not None:
        return {"content_id": cid}
    target = Path(path)
    stat = (target / GRAPH_FILE if target.is_dir() else target).stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


# The generation folder each loaded graph came from: what lies beside it (embeddings.npy) belongs to it.
_LOADED_FROM: weakref.WeakKeyDictionary[nx.DiGraph[str], Path] = weakref.WeakKeyDictionary()


def loaded_from(graph: nx.DiGraph[str]) -> Path | None:
    """The folder `load` read `graph` from (its generation), None for a graph built in memory."""
    return _LOADED_FROM.get(graph)


def names_a_folder(path: Path) -> bool:
    """Whether `path`, given as a graph, names its folder rather than its graph.json: a folder,
    or a path that is no file and does not end in .json (a folder not built yet, dotted or not:
    ``out.v2``, ``graphs/2024.01``)."""
    return path.is_dir() or not (path.is_file() or path.suffix.lower() == ".json")


def load(directory: str | os.PathLike[str] = "out") -> nx.DiGraph[str]:
    """Load a graph written by `kg build` from `directory` (or a path to graph.json). A path
    that `names_a_folder` is a folder, as `kg.generations.resolve` reads it: when not built yet,
    the error names its graph.json, and the build that makes it."""
    path = Path(directory)
    if names_a_folder(path):
        path = path / GRAPH_FILE
    out = _output_folder(path)
    if not path.is_file():
        if out != path.parent:  # a generation that is gone (a dangling .kg/current, or removed by hand)
            raise GraphNotFound(f"no graph at {out / path.name}: its current build {path.parent} is missing", folder=str(out))
        raise GraphNotFound(f"no graph at {path}", folder=str(out))
    try:
        with path.open(encoding="utf-8") as handle:
            data = json.load(handle)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise GraphNotFound(f"{path} is not a kg graph file")
        graph = from_json(data)
        _LOADED_FROM[graph] = path.resolve().parent  # the generation, not the folder its link may move in
        return graph
    except UnicodeDecodeError as error:
        raise GraphDamaged(f"{path} is damaged (not UTF-8 at byte {error.start:,})", folder=str(out)) from None
    except json.JSONDecodeError as error:
        raise GraphDamaged(f"{path} is damaged (not valid JSON at line {error.lineno}, column {error.colno}: {error.msg})", folder=str(out)) from None
    except (KeyError, TypeError, AttributeError, ValueError) as error:  # JSON of the wrong shape
        raise GraphDamaged(f"{path} is damaged (not the shape of a kg graph: {type(error).__name__} {error})", folder=str(out)) from None
    except RecursionError:
        raise GraphDamaged(f"{path} is damaged (nested too deep to be a kg graph)", folder=str(out)) from None
    except OSError as error:
        raise GraphDamaged(f"cannot read {path} ({error.strerror or error})", folder=str(out)) from None


def _output_folder(graph_file: Path) -> Path:
    """The output folder a graph file belongs to: its folder, or for a generation's file
    (``OUT/.kg/gen-…/graph.json``) the folder the build was made into."""
    folder = graph_file.parent
    return folder.parent.parent if folder.parent.name == ".kg" else folder


def graphml_ready(graph: nx.DiGraph[str]) -> nx.DiGraph[str]:
    """A copy GraphML can hold: lists/dicts become JSON strings, None values are dropped."""
    import networkx as nx

    def encode(attrs: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in attrs.items():
            if value is None:
                continue
            out[key] = json.dumps(value, ensure_ascii=False) if isinstance(value, (list, tuple, dict)) else value
        return out

    copy: nx.DiGraph[str] = nx.DiGraph(**encode(graph.graph))
    copy.add_nodes_from((n, encode(graph.nodes[n])) for n in sorted(graph))
    copy.add_edges_from((u, v, encode(d)) for u, v, d in sorted(graph.edges(data=True), key=lambda e: (e[0], e[1])))
    return copy


def serialize_graphml(graph: nx.DiGraph[str], output: IO[bytes]) -> None:
    """Write the graph as GraphML (UTF-8) to a binary file object."""
    import networkx as nx

    nx.write_graphml(graphml_ready(graph), output, encoding="utf-8")


def write_graphml(graph: nx.DiGraph[str], path: str | os.PathLike[str]) -> None:
    """Write the graph as GraphML to `path`, atomically."""
    with output_errors(path), open_output(path) as handle:
        serialize_graphml(graph, handle)
