"""Regions of the field: communities of papers, named by their concepts, and a layout that
keeps each community together.

Two papers are linked by the concepts they share, each shared concept weighted by its rarity
(``1 / ln(1 + df)``, df = papers mentioning it), and concepts shared by more than a small
share of all papers are left out altogether: a hub such as "neural network" says nothing
about where a paper belongs and would otherwise glue every community into one. Leiden
(igraph, modularity, seeded) partitions that paper–paper graph; the largest communities are
the page's regions, each named by the concepts most specific to it (in-region count × idf).
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import networkx as nx

MAX_REGIONS = 12  # coloured and named in the legend; smaller communities stay grey
MIN_REGION = 3  # papers a community needs to become a region
# Leiden iterations at most: igraph's own "until no change" (n_iterations=-1) never ends on some
# graphs (nodes flip between moves of equal quality); stable runs stop after a few.
LEIDEN_MAX_ITERATIONS = 50
HUB_SHARE = 0.05  # concepts in more than this share of the papers do not link papers…
HUB_FLOOR = 25  # …unless in fewer papers than this (small graphs have few papers per concept)
NAME_CONCEPTS = 3  # concepts in a region's name

# Light, distinct fills (ColorBrewer Set3): papers are dots in their region's colour, while
# concepts keep their type's saturated colour and shape.
PALETTE = (
    "#80b1d3", "#fdb462", "#b3de69", "#fb8072", "#bebada", "#8dd3c7",
    "#fccde5", "#ffed6f", "#bc80bd", "#ccebc5", "#d9b38c", "#a6cee3",
)  # fmt: skip
OTHER_COLOR = "#cbd5e1"

GRAVITY = 0.02  # weight of each node's tie to the layout's virtual centre (real edges: 1)
FOCUS_RING = 420.0  # focus pages: radius of the first ring of related papers (px)
REGION_PULL = 5.0  # weight of a paper's tie to its region's virtual centre
ACROSS = 0.15  # weight of an edge between a paper and a concept of another region (inside: 1)
SHRINK = 0.55  # after the layout, each region is drawn this much tighter around its centre…
SPREAD = 1.7  # …and nodes of no region (with no neighbour in one) this much further from the middle
RING_GAP = 1.25  # the regions' ring is this much longer than their diameters laid end to end


@dataclass(frozen=True)
class Region:
    """One community of papers: its colour, name and members."""

    index: int
    name: str
    color: str
    concepts: tuple[str, ...]  # concept keys that name it, most specific first
    papers: tuple[str, ...]  # paper keys, sorted

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "name": self.name, "color": self.color, "concepts": list(self.concepts), "size": len(self.papers)}


def find_regions(
    graph: nx.DiGraph[str],
    papers: Iterable[str],
    counts: Mapping[str, int],
    *,
    seed: int = 0,
    max_regions: int = MAX_REGIONS,
) -> list[Region]:
    """The regions among `papers` (keys of paper nodes of `graph`), largest first.

    Every concept the papers mention in `graph` counts, drawn or not: the rare ones are the
    best evidence of a community. `counts` are papers per concept (for rarity and names).
    """
    import igraph

    keys = sorted(papers)
    if len(keys) < MIN_REGION:
        return []
    number = {key: i for i, key in enumerate(keys)}
    adjacency = dict(graph.adjacency())  # plain dicts: graph.adj[key] wraps each look-up in a view
    members: dict[str, list[int]] = defaultdict(list)  # concept -> papers (numbers) mentioning it
    for key in keys:
        for target, kind in adjacency[key].items():
            if kind.get("kind") == "mentions":
                members[target].append(number[key])
    hub = max(HUB_FLOOR, HUB_SHARE * len(keys))
    weights: dict[tuple[int, int], float] = {}
    get = weights.get
    for concept, numbers in members.items():
        if 2 <= len(numbers) <= hub:
            weight = 1.0 / math.log(1.0 + counts.get(concept, len(numbers)))
            for pair in combinations(numbers, 2):  # the hot loop: millions of pairs on big graphs
                weights[pair] = get(pair, 0.0) + weight
    if not weights:
        return []
    pairs = sorted(weights)
    ig = igraph.Graph(n=len(keys), edges=pairs)
    igraph.set_random_number_generator(random.Random(seed))
    try:
        parts = _leiden(ig, [weights[p] for p in pairs])
    finally:
        igraph.set_random_number_generator(random)
    groups = [sorted(keys[i] for i in part) for part in parts if len(part) >= MIN_REGION]
    groups.sort(key=lambda group: (-len(group), group[0]))
    total = max(len(keys), 1)
    regions = []
    for index, group in enumerate(groups[:max_regions]):
        inside: Counter[str] = Counter()
        for key in group:
            inside.update(t for t, d in adjacency[key].items() if d.get("kind") == "mentions")
        # Specific to the region: frequent in it, rare outside (count × idf); at least 2 papers.
        scored = sorted(
            ((n * math.log(total / max(counts.get(c, n), 1) + 1.0), c) for c, n in inside.items() if n >= min(2, len(group))),
            key=lambda item: (-item[0], item[1]),
        )
        top = tuple(concept for _, concept in scored[:NAME_CONCEPTS])
        name = " · ".join(str(graph.nodes[c].get("label") or c) for c in top) or f"Region {index + 1}"
        regions.append(Region(index, name, PALETTE[index % len(PALETTE)], top, tuple(group)))
    return regions


def layout(graph: nx.DiGraph[str], *, regions: Iterable[Region] = (), seed: int = 0) -> dict[str, tuple[float, float]]:
    """Node positions in vis-network pixels: igraph Fruchterman–Reingold (grid variant on
    large graphs), deterministic for a given graph and seed.

    Each region gets a virtual centre node that its papers are tied to (and its concepts,
    when most of their papers are in it), and the regions start apart: so each community
    settles as one patch, with the concepts they share in between.
    """
    import igraph

    keys = sorted(graph)
    if not keys:
        return {}
    index = {key: i for i, key in enumerate(keys)}
    n = len(keys)
    edges = sorted({tuple(sorted((index[u], index[v]))) for u, v in graph.edges() if u != v})
    region_of: dict[int, int] = {}
    regions = [region for region in regions if any(key in index for key in region.papers)]
    for r, region in enumerate(regions):
        for key in region.papers:
            if key in index:
                region_of[index[key]] = r
    # A concept joins the region holding most of its (drawn) papers, if that is a majority.
    concept_region: dict[int, int] = {}
    if regions:
        for key in keys:
            if graph.nodes[key].get("kind") != "concept":
                continue
            votes = Counter(region_of.get(index[p]) for p in graph.predecessors(key) if graph.nodes[p].get("kind") == "paper")
            if votes:
                (best, hits), total = votes.most_common(1)[0], sum(votes.values())
                if best is not None and hits * 2 > total:
                    concept_region[index[key]] = best
    # Fruchterman–Reingold has no gravity: isolated papers and small components drift far out
    # and shrink the rest to a dot. A virtual centre node (n), weakly tied to every node,
    # keeps them near; region centres (n + 1 + r) pull their members together.
    centre = n
    ties = [(i, centre) for i in range(n)]
    pulls = [(i, n + 1 + r) for i, r in sorted({**concept_region, **region_of}.items())]
    anchors = [(n + 1 + r, centre) for r in range(len(regions))]
    ig = igraph.Graph(n=n + 1 + len(regions), edges=edges + ties + pulls + anchors)
    home = {**concept_region, **region_of}
    weights = [1.0 if home.get(a, -1) == home.get(b, -2) or not regions else ACROSS for a,
        b in edges] + [GRAVITY] * n + [REGION_PULL if i in region_of else 1.0 for i, _ in pulls] + [GRAVITY] * len(anchors)
    # Deterministic start: region centres on a wide spiral (largest first), every node on a
    # small spiral around its region's centre (or the middle), and a private RNG.
    spread = math.sqrt(n) * 0.6
    hubs = [_spiral(r + 1, spread) for r in range(len(regions))]
    start = []
    for i in range(n):
        home_region = region_of.get(i, concept_region.get(i))
        x, y = _spiral(i, 1.0)
        ox, oy = hubs[home_region] if home_region is not None else (0.0, 0.0)
        start.append([ox + x * 0.3, oy + y * 0.3])
    start += [[0.0, 0.0]] + [list(hub) for hub in hubs]
    igraph.set_random_number_generator(random.Random(seed))
    try:
        coords = ig.layout_fruchterman_reingold(seed=start, weights=weights, niter=500, grid="auto")
    finally:
        igraph.set_random_number_generator(random)
    points = _tighten([tuple(p) for p in list(coords)[:n]], home, graph, keys, index)
    # Scale so that linked nodes sit ~150 px apart, and so that each node has on average a
    # 70 px square to itself (dense star-like clusters would otherwise overlap).
    lengths = sorted(math.dist(points[a], points[b]) for a, b in edges) or [1.0]
    median = lengths[len(lengths) // 2] or 1.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    spacing = math.sqrt(max((max(xs) - min(xs)) * (max(ys) - min(ys)), 1e-9) / len(points))
    scale = max(150.0 / median, 70.0 / spacing)
    return {key: (round(points[i][0] * scale, 1), round(points[i][1] * scale, 1)) for key, i in index.items()}


def focus_layout(graph: nx.DiGraph[str], centre: str, rings: Sequence[Sequence[str]]) -> dict[str, tuple[float, float]]:
    """Positions for a focus page: the paper in the middle, each round of related papers on a
    wider circle (in rank order, the second round beside the papers that found them), each
    concept at the centre of its papers, the paper's own concepts on a small circle round it."""
    positions: dict[str, tuple[float, float]] = {centre: (0.0, 0.0)}
    angle: dict[str, float] = {centre: 0.0}
    for level, ring in enumerate(rings):
        radius = FOCUS_RING * (level + 1)
        papers = [key for key in ring if key in graph]
        for i, key in enumerate(papers):
            theta = -math.pi / 2 + 2 * math.pi * i / max(len(papers), 1)
            if level:  # near the paper of the previous ring it is most related to
                parents = [p for p in positions if p != centre and _linked(graph, p, key)]
                if parents:
                    base = sum(angle[p] for p in parents[:1])
                    theta = base + (i % 5 - 2) * 0.12
            angle[key] = theta
            positions[key] = (round(radius * math.cos(theta), 1), round(radius * math.sin(theta), 1))
    own = [key for key in sorted(graph) if key not in positions and graph.nodes[key].get("kind") == "concept"]
    lonely = []
    for key in own:
        near = [positions[p] for p in graph.predecessors(key) if p in positions and p != centre]
        if near:
            x = sum(p[0] for p in near) / len(near) * 0.8
            y = sum(p[1] for p in near) / len(near) * 0.8
            positions[key] = (x, y)
        else:
            lonely.append(key)
    for i, key in enumerate(lonely):  # concepts of the paper alone: a small circle round it
        theta = 2 * math.pi * (i + 0.5) / len(lonely)
        positions[key] = (round(FOCUS_RING * 0.45 * math.cos(theta), 1), round(FOCUS_RING * 0.45 * math.sin(theta), 1))
    # Concepts that landed on the same spot (shared by the same papers) are fanned out.
    seen: Counter[tuple[int, int]] = Counter()
    for key in own:
        x, y = positions[key]
        spot = (round(x / 40), round(y / 40))
        k = seen[spot]
        seen[spot] += 1
        dx, dy = _spiral(k, 45.0) if k else (0.0, 0.0)
        positions[key] = (round(x + dx, 1), round(y + dy, 1))
    for key in graph:  # anything else (a broader concept of none of these papers)
        positions.setdefault(key, _spiral(len(positions), 60.0))
    return positions


def _linked(graph: nx.DiGraph[str], a: str, b: str) -> bool:
    """Whether two papers share a concept drawn on the page."""
    return bool(set(graph.successors(a)) & set(graph.successors(b)))


def _tighten(points: list[tuple[float, float]], home: dict[int, int], graph: nx.DiGraph[str], keys: list[str], index: dict[str, int]) -> list[tuple[float, float]]:
    """Re-place the regions round a ring, each drawn tighter round its centre, and put what
    belongs to no region at the mean of its neighbours' new places.

    Fruchterman–Reingold already groups each region but packs their centres together (and
    often in a long strip); on a ring, in the angular order the layout found (so that
    neighbouring regions stay neighbours), each gets its own patch and the concepts several
    regions share settle in the middle.
    """
    members: dict[int, list[int]] = defaultdict(list)
    for i, r in home.items():
        members[r].append(i)
    if len(members) < 2:
        return points
    centres = {r: (sum(points[i][0] for i in group) / len(group), sum(points[i][1] for i in group) / len(group)) for r, group in members.items()}
    gx = sum(x for x, _ in centres.values()) / len(centres)
    gy = sum(y for _, y in centres.values()) / len(centres)
    # A region's radius once shrunk: its members' 90th-percentile distance from its centre.
    radius = {}
    for r, group in members.items():
        distances = sorted(math.dist(points[i], centres[r]) for i in group)
        radius[r] = max(distances[int(0.9 * (len(distances) - 1))] * SHRINK, 1e-6)
    order = sorted(members, key=lambda r: (math.atan2(centres[r][1] - gy, centres[r][0] - gx), r))
    # Long enough for every region side by side, and no smaller than the layout had them
    # (nodes of no region stay where the layout put them, further out).
    spread = sum(math.dist(centres[r], (gx, gy)) for r in order) / len(order)
    ring = max(sum(2 * radius[r] * RING_GAP for r in order) / (2 * math.pi), 1.5 * max(radius.values()), spread * SPREAD)
    places, turned = {}, 0.0
    total = sum(radius.values())
    for r in order:
        share = radius[r] / total * math.pi  # half of this region's arc
        theta = turned + share
        turned += 2 * share
        places[r] = (gx + ring * math.cos(theta), gy + ring * math.sin(theta))
    moved = list(points)
    for i, r in home.items():
        (cx, cy), (px, py) = centres[r], places[r]
        moved[i] = (px + (points[i][0] - cx) * SHRINK, py + (points[i][1] - cy) * SHRINK)
    # Concepts of no region: among their papers; then papers of no region: among their concepts.
    rest = [i for i in range(len(keys)) if i not in home]
    for kind, neighbours in (("concept", graph.predecessors), ("paper", graph.successors)):
        for n, i in enumerate(j for j in rest if graph.nodes[keys[j]].get("kind") == kind):
            near = [index[other] for other in neighbours(keys[i]) if index[other] in home or kind == "paper"]
            if near:
                jx, jy = _spiral(n % 7, radius[order[0]] * 0.05)  # do not stack exactly
                moved[i] = (sum(moved[j][0] for j in near) / len(near) + jx, sum(moved[j][1] for j in near) / len(near) + jy)
            else:
                moved[i] = (gx + (points[i][0] - gx) * SPREAD, gy + (points[i][1] - gy) * SPREAD)
    return moved


def _spiral(i: int, radius: float) -> tuple[float, float]:
    """The i-th point of a sunflower spiral: evenly spread, no randomness."""
    return (radius * math.sqrt(i + 1) * math.cos(i * 2.39996), radius * math.sqrt(i + 1) * math.sin(i * 2.39996))


def _leiden(ig: Any, weights: list[float]) -> Any:
    """Leiden communities by modularity, one iteration at a time from the last partition, until an
    iteration changes nothing (as igraph's n_iterations=-1) or LEIDEN_MAX_ITERATIONS have run."""
    membership: list[int] | None = None
    for _ in range(LEIDEN_MAX_ITERATIONS):
        parts = ig.community_leiden(objective_function="modularity", weights=weights, n_iterations=1, initial_membership=membership)
        if parts.membership == membership:
            break
        membership = parts.membership
    return parts
