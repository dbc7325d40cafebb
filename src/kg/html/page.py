"""The page itself: node, edge and panel data, vis-network options, the template, the file.

pyvis carries the nodes, edges and vis-network options and renders them through kg's own
Jinja template (``assets/graph.html.j2``), which inlines pyvis's bundled vis-network and
kg's script (``assets/graph.js``: labels, regions, filters, search, highlight, side panel).
Why not pyvis's own templates: even ``cdn_resources="in_line"`` links Bootstrap from a
CDN, and its tooltips render node titles as HTML. Here:

* nothing is fetched: every script and style is inline, and a Content-Security-Policy
  allows only those inline scripts (by hash) and no network at all;
* nothing from the corpus executes: data is JSON in ``<script type="application/json">``
  with ``<``, ``>``, ``&``, U+2028 and U+2029 escaped, and the page script only ever
  puts it into the DOM with ``textContent``; links are kept only when http(s);
* large graphs stay responsive: positions are computed here (see `kg.html.regions`),
  browser physics is off, and the page draws only the labels that fit.

The panel needs more than the drawn nodes: each paper's related papers (ranked here, as
`kg related` ranks them, top `RELATED` per paper) and every concept it mentions, drawn or
not. Whatever is referred to but not drawn travels in an "extra" table of compact rows;
references are numbers (drawn nodes 0…N-1 in the order of the node list, extras N…) to keep
pages small.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import networkx as nx

from kg.graph import concept_key, paper_key
from kg.html.regions import OTHER_COLOR, Region, find_regions, focus_layout, layout
from kg.html.select import AUTO_MAX_NODES, concept_paper_counts, select_subgraph
from kg.results import MIN_RESULT_SCORE
from kg.util.atomic import output_errors, write_text
from kg.util.gcpause import gc_paused

if TYPE_CHECKING:
    from kg.related_work.embed import Embeddings

HTML_FILE = "graph.html"
TEMPLATE = "graph.html.j2"  # in kg/assets/, beside graph.js and graph.css

# Node styles per type (vis-network "groups"), in legend order: distinct colours (Tableau 10)
# and distinct shapes, so types stay apart without colour vision too.
GROUPS: dict[str, dict[str, Any]] = {
    # Papers are coloured by region (kg.html.regions); this colour is for the legend.
    "paper": {"label": "Paper", "plural": "Papers", "shape": "dot", "color": "#64748b"},
    "METHOD": {"label": "Method", "plural": "Methods", "shape": "diamond", "color": "#f28e2b"},
    "DATASET": {"label": "Dataset", "plural": "Datasets", "shape": "square", "color": "#59a14f"},
    "TASK": {"label": "Task", "plural": "Tasks", "shape": "triangle", "color": "#b07aa1"},
    "METRIC": {"label": "Metric", "plural": "Metrics", "shape": "triangleDown", "color": "#e15759"},
    "HARDWARE": {"label": "Hardware", "plural": "Hardware", "shape": "hexagon", "color": "#17a2b8"},
    # Terms are many and less specific: off until the reader turns them on.
    "TERM": {"label": "Term", "plural": "Terms", "shape": "star", "color": "#9c755f", "hidden": True},
}

SHORT_TITLE = 40  # characters of a paper's title used as its node label
TOOLTIP_ABSTRACT = 600  # characters of abstract kept for tooltip and side panel
MAX_AUTHORS = 8
MAX_ALT_LABELS = 8
RELATED = 8  # related papers listed in a paper's panel
RELATED_REASONS = 3  # shared concepts shown for each

# A node's marker size (vis-network "size": a radius in layout units) grows with the square
# root of its degree from these bases. Zoomed out to the overview, markers would shrink below a
# pixel: graph.js draws none smaller on screen than MIN_MARKER_PX in radius (a node of the
# smallest base size; a bigger one in proportion to the square root of its size), as it keeps
# its labels a legible size.
PAPER_SIZE = 8.0
CONCEPT_SIZE = 10.0
MIN_MARKER_PX = 3.0

# Edge kinds, in the order of an edge's third number in the page data, with the vis-network
# edge options that draw each (graph.js reads both from the page data).
EDGE_KINDS: dict[str, dict[str, Any]] = {"used": {}, "proposed": {"width": 2}, "broader": {"dashes": True}}
_EDGE_NUMBER = {kind: number for number, kind in enumerate(EDGE_KINDS)}

# What may never appear raw inside <script>: "</script>", "<!--", "&" entities, and the two
# line separators that old JavaScript engines treat as newlines inside string literals.
_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)
_CSP_PLACEHOLDER = "KG_SCRIPT_HASHES"


@dataclass(frozen=True)
class HtmlSummary:
    path: str
    nodes: int
    edges: int
    papers: int
    concepts: int
    papers_available: int  # papers that passed the filters (more than `papers` when capped)
    min_papers: int
    bytes: int


def script_json(value: Any) -> str:
    """JSON that is safe to place verbatim between <script …> and </script>."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    # One str.replace per character: str.translate with a mapping is far slower on big pages.
    for char, escape in _SCRIPT_ESCAPES.items():
        text = text.replace(char, escape)
    return text


def safe_url(url: Any) -> str | None:
    """The URL if it is an absolute http(s) URL, else None (no javascript:, data:, …)."""
    if not isinstance(url, str):
        return None
    stripped = url.strip()
    try:
        parts = urlsplit(stripped)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc or any(c in stripped for c in "\x00\r\n\t \"'<>`"):
        return None
    return stripped


def short_title(title: str, limit: int = SHORT_TITLE) -> str:
    """The title cut at a word boundary to about `limit` characters, with an ellipsis."""
    title = " ".join(str(title).split())
    if len(title) <= limit:
        return title
    cut = title[:limit].rsplit(" ", 1)[0] if " " in title[:limit] else title[:limit]
    return cut.rstrip(" ,;:-") + "…"


def _clip(value: Any, limit: int) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


class _Refs:
    """Numbers for everything the page data refers to: drawn nodes first, then extras."""

    def __init__(self, source: nx.DiGraph[str], drawn: list[str], counts: dict[str, int]) -> None:
        self.source, self.counts = source, counts
        self.number = {key: i for i, key in enumerate(drawn)}
        self.extra: list[list[Any]] = []

    def __call__(self, key: str) -> int:
        number = self.number.get(key)
        if number is None:
            number = self.number[key] = len(self.number)
            self.extra.append(_extra_record(self.source, key, self.counts))
        return number


def _extra_record(graph: nx.DiGraph[str], key: str, counts: dict[str, int]) -> list[Any]:
    """What the panel shows of a node that is not drawn, as a compact row (there can be tens
    of thousands): ["paper", title, venue, year] or [type, label, papers, *alt_labels]."""
    data = graph.nodes[key]
    if data.get("kind") == "paper":
        meta = _paper_meta(data)
        return ["paper", str(data.get("title") or data.get("id") or key), meta["venue"], meta["year"]]
    alt = [str(a) for a in list(data.get("alt_labels") or ())[:MAX_ALT_LABELS]]
    return [str(data.get("type")), str(data.get("label") or data.get("id") or key), counts.get(key, 0), *alt]


def _paper_meta(data: dict[str, Any]) -> dict[str, Any]:
    return {"venue": str(data.get("venue") or ""), "year": data.get("year") if isinstance(data.get("year"), int) else None}


def _node_records(
    graph: nx.DiGraph[str],
    counts: dict[str, int],
    positions: dict[str, tuple[float, float]],
    region_of: dict[str, Region],
) -> list[dict[str, Any]]:
    records = []
    for key in sorted(graph):
        data = graph.nodes[key]
        degree = graph.degree(key)
        x, y = positions[key]
        if data.get("kind") == "paper":
            title = str(data.get("title") or data.get("id") or key)
            region = region_of.get(key)
            record: dict[str, Any] = {
                "id": key,
                "group": "paper",
                "label": short_title(title),
                "size": round(PAPER_SIZE + 2.5 * math.sqrt(degree), 1),
                "x": x,
                "y": y,
                "kg": {
                    "title": title,
                    **_paper_meta(data),
                    "authors": [str(a) for a in list(data.get("authors") or ())[:MAX_AUTHORS]],
                    "more_authors": max(0, len(data.get("authors") or ()) - MAX_AUTHORS),
                    "abstract": _clip(data.get("abstract"), TOOLTIP_ABSTRACT),
                    "url": safe_url(data.get("url")),
                    "region": region.index if region is not None else -1,
                    "claims": _claims(data),
                },
            }
        else:
            papers = counts.get(key, 0)
            record = {
                "id": key,
                "group": str(data.get("type")),
                "label": str(data.get("label") or data.get("id") or key),
                "size": round(CONCEPT_SIZE + 4 * math.sqrt(degree), 1),
                "x": x,
                "y": y,
                "kg": {
                    "papers": papers,
                    "alt_labels": [str(a) for a in list(data.get("alt_labels") or ())[:MAX_ALT_LABELS]],
                },
            }
        records.append(record)
    return records


CLAIM_SENTENCE = 300  # characters of a claim's sentence kept on the page (cut around the value)


def _claims(data: dict[str, Any]) -> list[list[Any]]:
    """A paper's result claims for its panel, in text order: [value, unit, kind, metric, dataset,
    method, proposed, score, sentence, value start, value end, baseline] (the value at [start, end)
    of the sentence, which is cut to about `CLAIM_SENTENCE` characters around it)."""
    from kg.results.leaderboard import cut_sentence

    abstract = str(data.get("abstract") or "")
    out = []
    for result in data.get("results") or ():
        if not isinstance(result, dict):
            continue
        sentence = cut_sentence(abstract, result, CLAIM_SENTENCE)
        score = result.get("score")
        if sentence is None or not isinstance(score, (int, float)) or not math.isfinite(score):
            continue
        out.append([
            str(result.get("value") or ""), result.get("unit") if result.get("unit") in ("%", "points", "dB", "x") else None,
            str(result.get("kind") or "absolute"), _text_or_none(result.get("metric")), _text_or_none(result.get("dataset")),
            str(result.get("method") or "(proposed)"), bool(result.get("proposed")), round(float(score), 2), *sentence,
            _text_or_none(result.get("baseline")),
        ])  # fmt: skip
    return out


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _leaderboards(source: nx.DiGraph[str], records: list[dict[str, Any]], refs: _Refs) -> None:
    """Fill each drawn dataset's and metric's ``leaderboard``: [[heading, direction, [[paper,
    value, unit, method, proposed, year, score, sentence, value start, value end], …]], …]
    (`kg.results.leaderboard.concept_tables`: claims at kg's threshold, best first)."""
    from kg.results.leaderboard import concept_tables

    wanted = [record for record in records if record["group"] in ("DATASET", "METRIC")]
    if not wanted:
        return
    tables = concept_tables(source)
    for record in wanted:
        found = tables.get(str(source.nodes[record["id"]].get("id")), [])
        record["kg"]["leaderboard"] = [
            [heading, way, [[refs(paper_key(row.paper_id)), row.value, row.unit, row.method, row.proposed, row.year, round(row.score, 2),
                             row.sentence, row.value_start, row.value_end] for row in rows]]
            for heading, way, rows in found
        ]  # fmt: skip


def _panel_data(
    source: nx.DiGraph[str], graph: nx.DiGraph[str], records: list[dict[str, Any]], counts: dict[str, int], embeddings: Embeddings | None = None
) -> dict[str, Any]:
    """Fill each drawn paper's ``related`` ([paper, score, [concepts], similarity or None, [words], by similarity]),
    ``more`` (concepts it mentions that are not drawn) and ``more_proposed``; returns the extras
    and the hierarchy (narrower, broader) among every concept referred to. Related papers are
    ranked as `kg related` ranks them, with `embeddings` (a `kg.related_work.embed.Embeddings`)
    or else the vectors stored beside the graph `kg.load` read."""
    from kg.related_work.batch import Ranker  # the ranking `kg related` uses, for many papers
    from kg.related_work.rank import graph_embeddings, index_of

    refs = _Refs(source, [record["id"] for record in records], counts)
    index = index_of(source)
    ranker = Ranker(index)
    if embeddings is not None:
        vectors = embeddings.vectors if tuple(embeddings.ids) == tuple(index.paper_ids) else None
    else:
        vectors = graph_embeddings(source, index)
    succ, nodes = dict(source.adjacency()), source.nodes  # plain dicts: no view per look-up
    number = {paper_key(pid): n for n, pid in enumerate(index.paper_ids)}
    for record in records:
        if record["group"] != "paper":
            continue
        key = record["id"]
        info = record["kg"]
        info["related"] = [
            [refs(paper_key(result.id)), round(result.score, 3),
             [refs(concept_key(reason.concept)) for reason in result.reasons[:RELATED_REASONS]],
             None if result.similarity is None else round(result.similarity, 3), list(result.words), result.by_similarity]
            for result in ranker.rank(number[key], top=RELATED, embeddings=vectors)
        ]  # fmt: skip
        targets = succ[key]
        more = sorted(t for t in targets if t not in graph and nodes[t].get("kind") == "concept")
        info["more"] = [refs(t) for t in more]
        info["more_proposed"] = [refs(t) for t in more if targets[t].get("role") == "proposed"]
    _leaderboards(source, records, refs)
    # Broader/narrower links of every concept referred to that are not drawn edges (one
    # step out: a concept reached only through such a link does not bring in its own).
    # Only concepts with a narrower one have broader links coming in: the others' (often
    # thousands of) predecessors are papers, and are not scanned.
    concepts = [key for key, data in nodes(data=True) if data.get("kind") == "concept"]
    broadened = {t for key in concepts for t, data in succ[key].items() if data.get("kind") == "broader"}
    hierarchy = set()
    for key in [key for key in refs.number if nodes[key].get("kind") == "concept"]:
        for other, data in succ[key].items():
            if data.get("kind") == "broader" and not graph.has_edge(key, other):
                hierarchy.add((refs(key), refs(other)))
        if key not in broadened:
            continue
        for other, data in source.pred[key].items():
            if data.get("kind") == "broader" and not graph.has_edge(other, key):
                hierarchy.add((refs(other), refs(key)))
    return {"extra": refs.extra, "hierarchy": sorted(map(list, hierarchy))}


def _edge_records(graph: nx.DiGraph[str], number: dict[str, int]) -> list[list[int]]:
    """Edges as [from, to, kind] numbers (node list places; `EDGE_KINDS`): node keys are long
    slugs, and repeating them per edge made edges the largest part of big pages."""
    records = []
    for source, target, data in sorted(graph.edges(data=True), key=lambda e: (e[0], e[1])):
        kind = "broader" if data.get("kind") == "broader" else "proposed" if data.get("role") == "proposed" else "used"
        records.append([number[source], number[target], _EDGE_NUMBER[kind]])
    return records


def vis_options(*, nodes: int, edges: int) -> dict[str, Any]:
    """vis-network options: no physics (positions are precomputed), straight edges, hover."""
    large = nodes + edges > 4000
    groups = {
        name: {
            "shape": style["shape"],
            "color": {"background": style["color"], "border": "#ffffff", "highlight": {"background": style["color"], "border": "#111827"},
                "hover": {"background": style["color"], "border": "#111827"}},
        }
        for name, style in GROUPS.items()
    }
    return {
        "autoResize": True,
        "physics": {"enabled": False},
        "layout": {"improvedLayout": False, "randomSeed": 0},
        "interaction": {"hover": True, "hideEdgesOnDrag": large, "hideEdgesOnZoom": large, "tooltipDelay": 120, "multiselect": False},
        "nodes": {
            "borderWidth": 1.5,
            # vis-network is given no labels: graph.js draws them, in this face.
            "font": {"face": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif"},
        },
        "edges": {
            "smooth": False,
            "width": 0.7,
            "selectionWidth": 2,
            # Faint on big pages, so that the regions' colours show through the edges.
            "color": {"color": "#b8c0cc", "highlight": "#374151", "hover": "#6b7280", "opacity": 0.3 if large else 0.7},
        },
        "groups": groups,
    }


def render_html(
    graph: nx.DiGraph[str],
    *,
    min_papers: int = 1,
    papers_available: int | None = None,
    title: str = "kg — paper–concept graph",
    counts: dict[str, int] | None = None,
    source: nx.DiGraph[str] | None = None,
    focus: str | None = None,
    rings: Sequence[Sequence[str]] = (),
    seed: int = 0,
    embeddings: Embeddings | None = None,
) -> str:
    """The page for `graph` (already filtered) as a string. `source` is the whole graph it
    was cut from (related papers, concepts not drawn; default: `graph`), `counts` are papers
    per concept in it, `papers_available` how many papers the filters let through, `focus`
    the key of a paper to open selected, drawn in the middle of `rings` of related papers;
    `embeddings` (`kg.related_work.embed.Embeddings`) rank the related papers with the concepts
    (default: the vectors stored beside the graph `kg.load` read, if any)."""
    import jinja2
    import markupsafe
    from pyvis.network import Network

    source = graph if source is None else source
    counts = counts if counts is not None else concept_paper_counts(source)
    papers = sorted(key for key, data in graph.nodes(data=True) if data.get("kind") == "paper")
    regions = find_regions(source, papers, counts, seed=seed)
    region_of = {key: region for region in regions for key in region.papers}
    net = Network(height="100%", width="100%", heading=title, cdn_resources="in_line")
    # Fill pyvis's lists directly: Network.from_nx is quadratic in the node count.
    positions = focus_layout(graph, focus, rings) if focus is not None and focus in graph else layout(graph, regions=regions, seed=seed)
    net.nodes = _node_records(graph, counts, positions, region_of)
    panel = _panel_data(source, graph, net.nodes, counts, embeddings)
    number = {record["id"]: i for i, record in enumerate(net.nodes)}
    net.edges = _edge_records(graph, number)
    net.options = vis_options(nodes=len(net.nodes), edges=len(net.edges))
    pyvis_templates = Path(net.template_dir)
    net.templateEnv = jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.PackageLoader("kg", "assets"), jinja2.FileSystemLoader(str(pyvis_templates))]),
        autoescape=True,
    )
    net.templateEnv.filters["script_json"] = lambda value: markupsafe.Markup(script_json(value))
    data = {
        "regions": [{**region.to_dict(), "concepts": [number[c] for c in region.concepts if c in number]} for region in regions],
        "other_color": OTHER_COLOR,
        "focus": focus if focus in number else None,
        "edge_kinds": [[kind, style] for kind, style in EDGE_KINDS.items()],
        "min_marker": {"px": MIN_MARKER_PX, "size": min(PAPER_SIZE, CONCEPT_SIZE)},
        "min_result_score": MIN_RESULT_SCORE,
        **panel,
    }
    net.templateEnv.globals["kg"] = {
        "groups": GROUPS, "min_papers": min_papers, "papers": len(papers),
        "papers_available": max(len(papers), papers_available or 0), "data": data,
    }  # fmt: skip
    net.path = TEMPLATE
    return _with_script_hashes(net.generate_html())


def _with_script_hashes(page: str) -> str:
    """Fill the CSP placeholder with the hashes of the page's own inline scripts, so that
    nothing else (an injected inline handler, say) may run."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode("ascii") + "'"
        for body in _INLINE_SCRIPT.findall(page)
    )
    return page.replace(_CSP_PLACEHOLDER, hashes, 1)


def write_html(
    graph: nx.DiGraph[str],
    path: str | os.PathLike[str],
    *,
    focus: str | None = None,
    depth: int = 1,
    types: Sequence[str] | None = None,
    min_papers: int | None = None,
    max_nodes: int = AUTO_MAX_NODES,
    embeddings: Embeddings | None = None,
) -> HtmlSummary:
    """Filter the graph (see `select_subgraph`), render the page and write it atomically;
    `embeddings` as for `render_html`."""
    with gc_paused():
        counts = concept_paper_counts(graph)
        selection = select_subgraph(graph, focus=focus, depth=depth, types=types, min_papers=min_papers, max_nodes=max_nodes, counts=counts)
        view = selection.graph
        page = render_html(
            view, min_papers=selection.min_papers, papers_available=selection.papers_available, counts=counts, source=graph,
            focus=selection.focus, rings=selection.rings, embeddings=embeddings,
        )
    with output_errors(path):
        write_text(path, page)
    papers = sum(1 for _, data in view.nodes(data=True) if data.get("kind") == "paper")
    return HtmlSummary(
        path=str(path),
        nodes=view.number_of_nodes(),
        edges=view.number_of_edges(),
        papers=papers,
        concepts=view.number_of_nodes() - papers,
        papers_available=selection.papers_available,
        min_papers=selection.min_papers,
        bytes=len(page.encode("utf-8")),
    )
