"""The interactive HTML view of the graph: one self-contained page that works offline.

pyvis carries the nodes, edges and vis-network options and renders them through kg's own
Jinja template (``assets/graph.html.j2``), which inlines pyvis's bundled vis-network and
kg's small script (search, type toggles, threshold, neighbourhood highlight, side panel).
Why not pyvis's own templates: even ``cdn_resources="in_line"`` links Bootstrap from a
CDN, and its tooltips render node titles as HTML. Here:

* nothing is fetched: every script and style is inline, and a Content-Security-Policy
  allows only those inline scripts (by hash) and no network at all;
* nothing from the corpus executes: data is JSON in ``<script type="application/json">``
  with ``<``, ``>``, ``&``, U+2028 and U+2029 escaped, and the page script only ever
  puts it into the DOM with ``textContent``; links are kept only when http(s);
* large graphs stay responsive: positions are computed here with igraph's grid
  Fruchterman–Reingold (well under a second for thousands of nodes), browser physics
  is off, and rarely shared concepts can be filtered out (`min_papers`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import networkx as nx

from kg.atomic import output_errors, write_text
from kg.graph import paper_key
from kg.lookup import PaperLookup
from kg.model import ENTITY_TYPES, parse_types

HTML_FILE = "graph.html"
TEMPLATE = "graph.html.j2"  # in kg/assets/, beside graph.js and graph.css

# Above this many drawn nodes an automatic `min_papers` is raised until the page fits:
# vis-network draws ~5,000 nodes with physics off in a few seconds on a laptop-class CPU.
AUTO_MAX_NODES = 5000

# Node styles per type (vis-network "groups"), in legend order: distinct colours (Tableau 10)
# and distinct shapes, so types stay apart without colour vision too.
GROUPS: dict[str, dict[str, Any]] = {
    "paper": {"label": "Paper", "plural": "Papers", "shape": "dot", "color": "#4e79a7"},
    "METHOD": {"label": "Method", "plural": "Methods", "shape": "diamond", "color": "#f28e2b"},
    "DATASET": {"label": "Dataset", "plural": "Datasets", "shape": "square", "color": "#59a14f"},
    "TASK": {"label": "Task", "plural": "Tasks", "shape": "triangle", "color": "#b07aa1"},
    "METRIC": {"label": "Metric", "plural": "Metrics", "shape": "triangleDown", "color": "#e15759"},
    "HARDWARE": {"label": "Hardware", "plural": "Hardware", "shape": "hexagon", "color": "#17a2b8"},
    # Terms are many and less specific: off until the reader turns them on.
    "TERM": {"label": "Term", "plural": "Terms", "shape": "star", "color": "#9c755f", "hidden": True},
}

GRAVITY = 0.02  # weight of each node's tie to the layout's virtual centre (real edges: 1)
SHORT_TITLE = 40  # characters of a paper's title used as its node label
TOOLTIP_ABSTRACT = 600  # characters of abstract kept for tooltip and side panel
MAX_AUTHORS = 8
MAX_ALT_LABELS = 8

# What may never appear raw inside <script>: "</script>", "<!--", "&" entities, and the two
# line separators that old JavaScript engines treat as newlines inside string literals.
_SCRIPT_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"})
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
    return text.translate(_SCRIPT_ESCAPES)


def safe_url(url: Any) -> str | None:
    """The URL if it is an absolute http(s) URL, else None (no javascript:, data:, …)."""
    if not isinstance(url, str):
        return None
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc or any(c in url for c in "\x00\r\n\t \"'<>`"):
        return None
    return url


def short_title(title: str, limit: int = SHORT_TITLE) -> str:
    """The title cut at a word boundary to about `limit` characters, with an ellipsis."""
    title = " ".join(str(title).split())
    if len(title) <= limit:
        return title
    cut = title[:limit].rsplit(" ", 1)[0] if " " in title[:limit] else title[:limit]
    return cut.rstrip(" ,;:-") + "…"


def _clip(text: Any, limit: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def concept_paper_counts(graph: nx.DiGraph) -> dict[str, int]:
    """For each concept node, how many papers mention it (one pass over the edges)."""
    counts = {key: 0 for key, data in graph.nodes(data=True) if data.get("kind") == "concept"}
    for _, target, kind in graph.edges(data="kind"):
        if kind == "mentions" and target in counts:
            counts[target] += 1
    return counts


def find_paper(graph: nx.DiGraph, query: str) -> str:
    """The node key of the paper named by id, title or title fragment, found as `kg related` finds it."""
    lookup = PaperLookup.from_graph(graph)
    return paper_key(lookup.paper_ids[lookup.find(query)])


@dataclass(frozen=True)
class Selection:
    """What `select_subgraph` chose to draw."""

    graph: nx.DiGraph
    min_papers: int  # the papers-per-concept threshold applied
    papers_available: int  # papers that passed the filters, before the automatic size cap


def select_subgraph(
    graph: nx.DiGraph,
    *,
    focus: str | None = None,
    depth: int = 2,
    types: Iterable[str] | None = None,
    min_papers: int | None = None,
    max_nodes: int = AUTO_MAX_NODES,
    counts: dict[str, int] | None = None,
) -> Selection:
    """The part of the graph to draw.

    `types` keeps only those concept types (papers are always kept); `focus` keeps the nodes
    within `depth` hops of one paper; `min_papers` drops concepts mentioned by fewer papers.
    With `min_papers=None` the size is chosen automatically to stay near `max_nodes` nodes:
    the threshold is raised from 1 until the concepts fit beside the papers, and when the
    papers alone are too many, only those most linked to the remaining concepts are kept.
    `counts` (papers per concept, see `concept_paper_counts`) saves recounting.
    """
    counts = counts if counts is not None else concept_paper_counts(graph)
    wanted = set(parse_types(types)) if types is not None else set(ENTITY_TYPES)
    keep = [key for key, data in graph.nodes(data=True) if data.get("kind") == "paper" or data.get("type") in wanted]
    view: nx.DiGraph = graph.subgraph(keep)
    if focus is not None:
        centre = find_paper(graph, focus)
        if depth < 0:
            raise ValueError(f"depth must be 0 or more, not {depth}")
        reach = nx.single_source_shortest_path_length(view.to_undirected(as_view=True), centre, cutoff=depth)
        view = view.subgraph(reach)
    papers = sorted(key for key in view if key not in counts)
    auto = min_papers is None
    if min_papers is None:
        min_papers = _auto_min_papers(view, counts, max_nodes)
    elif min_papers < 1:
        raise ValueError(f"min_papers must be 1 or more, not {min_papers}")
    # At 1 everything stays, including broader concepts that no paper mentions directly.
    concepts = {key for key in view if key in counts and (min_papers == 1 or counts[key] >= min_papers)}
    drawn = papers
    if auto and len(papers) + len(concepts) > max_nodes:
        drawn = _best_linked(graph, papers, concepts, room=max(max_nodes - len(concepts), 0))
    return Selection(graph.subgraph([*drawn, *concepts]).copy(), min_papers, len(papers))


def _auto_min_papers(view: nx.DiGraph, counts: dict[str, int], max_nodes: int) -> int:
    """1 if everything fits in `max_nodes`; else the smallest threshold that leaves the
    concepts the room the papers leave, or a fifth of the budget if the papers take it all
    (keeping at least the most shared concepts)."""
    papers = sum(1 for key in view if key not in counts)
    shared = sorted((counts[key] for key in view if key in counts), reverse=True)
    if papers + len(shared) <= max_nodes:
        return 1
    room = max(max_nodes - papers, max_nodes // 5)
    if room >= len(shared):
        return 2
    return max(2, min(shared[room] + 1, shared[0]))


def _best_linked(graph: nx.DiGraph, papers: list[str], concepts: set[str], *, room: int) -> list[str]:
    """The `room` papers with the most links to `concepts` (ties: by key)."""
    links = {key: sum(1 for target in graph.successors(key) if target in concepts) for key in papers}
    return sorted(sorted(papers, key=lambda key: (-links[key], key))[:room])


def layout(graph: nx.DiGraph, *, seed: int = 0) -> dict[str, tuple[float, float]]:
    """Node positions in vis-network pixels: igraph Fruchterman–Reingold (grid variant on
    large graphs), deterministic for a given graph and seed."""
    import random

    import igraph

    keys = sorted(graph)
    if not keys:
        return {}
    index = {key: i for i, key in enumerate(keys)}
    edges = sorted({tuple(sorted((index[u], index[v]))) for u, v in graph.edges() if u != v})
    # Fruchterman–Reingold has no gravity: isolated papers and small components drift far
    # out and shrink the rest to a dot. A virtual centre node, weakly tied to every node,
    # keeps them near (weights scale the attraction).
    n = len(keys)
    centre = [(i, n) for i in range(n)]
    ig = igraph.Graph(n=n + 1, edges=edges + centre)
    weights = [1.0] * len(edges) + [GRAVITY] * n
    # Deterministic start on a spiral, and a private RNG for the rare random nudges.
    start = [[math.sqrt(i + 1) * math.cos(i * 2.39996), math.sqrt(i + 1) * math.sin(i * 2.39996)] for i in range(n)] + [[0.0, 0.0]]
    igraph.set_random_number_generator(random.Random(seed))
    try:
        coords = ig.layout_fruchterman_reingold(seed=start, weights=weights, niter=500, grid="auto")
    finally:
        igraph.set_random_number_generator(random)
    points = list(coords)[:n]
    # Scale so that linked nodes sit ~150 px apart, and so that each node has on average a
    # 70 px square to itself (dense star-like clusters would otherwise overlap).
    lengths = sorted(math.dist(points[a], points[b]) for a, b in edges) or [1.0]
    median = lengths[len(lengths) // 2] or 1.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    spacing = math.sqrt(max((max(xs) - min(xs)) * (max(ys) - min(ys)), 1e-9) / len(points))
    scale = max(150.0 / median, 70.0 / spacing)
    return {key: (round(points[i][0] * scale, 1), round(points[i][1] * scale, 1)) for key, i in index.items()}


def _node_records(graph: nx.DiGraph, counts: dict[str, int], positions: dict[str, tuple[float, float]]) -> list[dict[str, Any]]:
    records = []
    for key in sorted(graph):
        data = graph.nodes[key]
        degree = graph.degree(key)
        x, y = positions[key]
        if data.get("kind") == "paper":
            title = str(data.get("title") or data.get("id") or key)
            record: dict[str, Any] = {
                "id": key,
                "group": "paper",
                "label": short_title(title),
                "size": round(8 + 2.5 * math.sqrt(degree), 1),
                "x": x,
                "y": y,
                "kg": {
                    "title": title,
                    "venue": str(data.get("venue") or ""),
                    "year": data.get("year") if isinstance(data.get("year"), int) else None,
                    "authors": [str(a) for a in list(data.get("authors") or ())[:MAX_AUTHORS]],
                    "more_authors": max(0, len(data.get("authors") or ()) - MAX_AUTHORS),
                    "abstract": _clip(data.get("abstract"), TOOLTIP_ABSTRACT),
                    "url": safe_url(data.get("url")),
                },
            }
        else:
            papers = counts.get(key, 0)
            record = {
                "id": key,
                "group": str(data.get("type")),
                "label": str(data.get("label") or data.get("id") or key),
                "size": round(10 + 4 * math.sqrt(degree), 1),
                # Widely shared concepts get larger labels, still legible when zoomed out.
                "font": {"size": round(min(40.0, 14 + 10 * math.sqrt(max(papers - 1, 0))), 1)},
                "x": x,
                "y": y,
                "kg": {
                    "papers": papers,
                    "alt_labels": [str(a) for a in list(data.get("alt_labels") or ())[:MAX_ALT_LABELS]],
                },
            }
        records.append(record)
    return records


def _edge_records(graph: nx.DiGraph) -> list[dict[str, Any]]:
    records = []
    for source, target, data in sorted(graph.edges(data=True), key=lambda e: (e[0], e[1])):
        record: dict[str, Any] = {"from": source, "to": target}
        if data.get("kind") == "broader":
            record.update(dashes=True, kind="broader")
        elif data.get("role") == "proposed":
            record.update(width=2, kind="proposed")
        records.append(record)
    return records


def vis_options(*, nodes: int, edges: int) -> dict[str, Any]:
    """vis-network options: no physics (positions are precomputed), straight edges, hover."""
    large = nodes + edges > 4000
    groups = {
        name: {
            "shape": style["shape"],
            "color": {"background": style["color"], "border": "#ffffff", "highlight": {"background": style["color"], "border": "#111827"}, "hover": {"background": style["color"], "border": "#111827"}},
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
            "font": {"size": 18, "face": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "color": "#1f2937", "strokeWidth": 4, "strokeColor": "#ffffff"},
            "scaling": {"label": {"drawThreshold": 8}},
        },
        "edges": {
            "smooth": False,
            "width": 0.7,
            "selectionWidth": 2,
            "color": {"color": "#b8c0cc", "highlight": "#374151", "hover": "#6b7280", "opacity": 0.7},
        },
        "groups": groups,
    }


def render_html(
    graph: nx.DiGraph,
    *,
    min_papers: int = 1,
    papers_available: int | None = None,
    title: str = "kg — paper–concept graph",
    counts: dict[str, int] | None = None,
) -> str:
    """The page for `graph` (already filtered) as a string; `counts` are papers per concept
    (in the whole graph), `papers_available` how many papers the filters let through."""
    import jinja2
    import markupsafe
    from pyvis.network import Network

    counts = counts if counts is not None else concept_paper_counts(graph)
    net = Network(height="100%", width="100%", heading=title, cdn_resources="in_line")
    # Fill pyvis's lists directly: Network.from_nx is quadratic in the node count.
    net.nodes = _node_records(graph, counts, layout(graph))
    net.edges = _edge_records(graph)
    net.options = vis_options(nodes=len(net.nodes), edges=len(net.edges))
    pyvis_templates = Path(net.template_dir)
    net.templateEnv = jinja2.Environment(
        loader=jinja2.ChoiceLoader([jinja2.PackageLoader("kg", "assets"), jinja2.FileSystemLoader(str(pyvis_templates))]),
        autoescape=True,
    )
    net.templateEnv.filters["script_json"] = lambda value: markupsafe.Markup(script_json(value))
    papers = sum(1 for _, data in graph.nodes(data=True) if data.get("kind") == "paper")
    net.templateEnv.globals["kg"] = {"groups": GROUPS, "min_papers": min_papers, "papers": papers, "papers_available": max(papers, papers_available or 0)}
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
    graph: nx.DiGraph,
    path: str | os.PathLike[str],
    *,
    focus: str | None = None,
    depth: int = 2,
    types: Sequence[str] | None = None,
    min_papers: int | None = None,
    max_nodes: int = AUTO_MAX_NODES,
) -> HtmlSummary:
    """Filter the graph (see `select_subgraph`), render the page and write it atomically."""
    counts = concept_paper_counts(graph)
    selection = select_subgraph(graph, focus=focus, depth=depth, types=types, min_papers=min_papers, max_nodes=max_nodes, counts=counts)
    view = selection.graph
    page = render_html(view, min_papers=selection.min_papers, papers_available=selection.papers_available, counts=counts)
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
