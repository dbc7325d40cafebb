"""What the page draws: type filter, papers-per-concept threshold, size cap, focus mode."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx

from kg.graph import paper_key
from kg.model import ENTITY_TYPES, parse_types
from kg.related_work.lookup import PaperLookup

# Above this many drawn nodes an automatic `min_papers` is raised until the page fits:
# vis-network draws ~5,000 nodes with physics off in a few seconds on a laptop-class CPU.
AUTO_MAX_NODES = 5000

# Focus mode: related papers per round (the focus paper's own, then each of theirs), and
# how many of the concepts a related pair shares are drawn (the strongest reasons).
FOCUS_RELATED = (8, 3)  # the first as many as a paper's panel lists
FOCUS_REASONS = 4


def concept_paper_counts(graph: nx.DiGraph[str]) -> dict[str, int]:
    """For each concept node, how many papers mention it (one pass over the edges)."""
    counts = {key: 0 for key, data in graph.nodes(data=True) if data.get("kind") == "concept"}
    # Over the adjacency dicts (plain dicts on a graph), not graph.edges(): the view's
    # per-edge overhead was most of the time on large graphs.
    for _, targets in graph.adjacency():
        for target, data in targets.items():
            if target in counts and data.get("kind") == "mentions":
                counts[target] += 1
    return counts


def find_paper(graph: nx.DiGraph[str], query: str) -> str:
    """The node key of the paper named by id, title or title fragment, found as `kg related` finds it."""
    lookup = PaperLookup.from_graph(graph)
    return paper_key(lookup.paper_ids[lookup.find(query)])


@dataclass(frozen=True)
class Selection:
    """What `select_subgraph` chose to draw."""

    graph: nx.DiGraph[str]
    min_papers: int  # the papers-per-concept threshold applied
    papers_available: int  # papers that passed the filters, before the automatic size cap
    focus: str | None = None  # the focus paper's key, in focus mode
    rings: tuple[tuple[str, ...], ...] = ()  # focus mode: the related papers found in each round


def select_subgraph(
    graph: nx.DiGraph[str],
    *,
    focus: str | None = None,
    depth: int = 1,
    types: Iterable[str] | None = None,
    min_papers: int | None = None,
    max_nodes: int = AUTO_MAX_NODES,
    counts: dict[str, int] | None = None,
) -> Selection:
    """The part of the graph to draw.

    `types` keeps only those concept types (papers are always kept); `min_papers` drops
    concepts mentioned by fewer papers. With `min_papers=None` the size is chosen
    automatically to stay near `max_nodes` nodes: the threshold is raised from 1 until the
    concepts fit beside the papers, and when the papers alone are too many, only those most
    linked to the remaining concepts are kept. `counts` (papers per concept, see
    `concept_paper_counts`) saves recounting.

    `focus` (a paper id, title or title fragment) draws one paper and `depth` rounds of its
    related papers (as `kg related` ranks them): depth 0 is the paper and its concepts, 1
    adds its 8 most related papers with the concepts each shares with it (the 4 strongest),
    2 adds the 3 most related to each of those, and so on.
    """
    counts = counts if counts is not None else concept_paper_counts(graph)
    wanted: set[str] = set(parse_types(types)) if types is not None else set(ENTITY_TYPES)
    keep = [key for key, data in graph.nodes(data=True) if data.get("kind") == "paper" or data.get("type") in wanted]
    view: nx.DiGraph[str] = graph.subgraph(keep)
    centre: str | None = None
    rings: tuple[tuple[str, ...], ...] = ()
    if focus is not None:
        if depth < 0:
            raise ValueError(f"depth must be 0 or more, not {depth}")
        centre = find_paper(graph, focus)
        chosen, rings = _focus_nodes(graph, centre, depth, wanted)
        view = view.subgraph(chosen)
    members = list(view)  # once: iterating a subgraph view filters every node again
    papers = sorted(key for key in members if key not in counts)
    auto = min_papers is None
    if min_papers is None:
        min_papers = _auto_min_papers(members, counts, max_nodes)
    elif min_papers < 1:
        raise ValueError(f"min_papers must be 1 or more, not {min_papers}")
    # At 1 everything stays, including broader concepts that no paper mentions directly.
    concepts = {key for key in members if key in counts and (min_papers == 1 or counts[key] >= min_papers)}
    drawn = papers
    if auto and len(papers) + len(concepts) > max_nodes:
        drawn = _best_linked(graph, papers, concepts, room=max(max_nodes - len(concepts), 0))
    drawn_graph = graph.subgraph([*drawn, *concepts]).copy()
    # Semantic neighbours (kg build --embed) are not drawn: ten lines a paper would bury the
    # concept links; the panel lists related papers instead.
    drawn_graph.remove_edges_from([(u, v) for u, v, data in drawn_graph.edges(data=True) if data.get("kind") == "similar"])
    return Selection(drawn_graph, min_papers, len(papers), centre, rings)


def _focus_nodes(graph: nx.DiGraph[str], centre: str, depth: int, wanted: set[str]) -> tuple[set[str], tuple[tuple[str, ...], ...]]:
    """The focus paper, its concepts, and `depth` rounds of related papers with the concepts
    that tie each to the paper it was found from; with the papers each round found, in rank order."""
    from kg.related_work.rank import graph_embeddings, index_of, rank  # the ranking `kg related` uses

    index = index_of(graph)
    vectors = graph_embeddings(graph, index)
    number = {paper_key(pid): n for n, pid in enumerate(index.paper_ids)}
    keep = {centre}
    keep.update(t for t in graph.successors(centre) if graph.nodes[t].get("type") in wanted)
    frontier, rings = [centre], []
    for level in range(depth):
        top = FOCUS_RELATED[min(level, len(FOCUS_RELATED) - 1)]
        found = []
        for key in frontier:
            for result in rank(index, number[key], top=top, types=wanted, embeddings=vectors):
                other = paper_key(result.id)
                keep.update(f"concept:{reason.concept}" for reason in result.reasons[:FOCUS_REASONS])
                if other not in keep:
                    keep.add(other)
                    found.append(other)
        frontier = found
        rings.append(tuple(found))
        if not found:  # nothing new: more rounds would find nothing either (--depth 10**9 looped on)
            break
    return {key for key in keep if key in graph}, tuple(rings)


def _auto_min_papers(nodes: list[str], counts: dict[str, int], max_nodes: int) -> int:
    """1 if everything fits in `max_nodes`; else the smallest threshold that leaves the
    concepts the room the papers leave, or a fifth of the budget if the papers take it all
    (keeping at least the most shared concepts)."""
    papers = sum(1 for key in nodes if key not in counts)
    shared = sorted((counts[key] for key in nodes if key in counts), reverse=True)
    if papers + len(shared) <= max_nodes:
        return 1
    room = max(max_nodes - papers, max_nodes // 5)
    if room >= len(shared):
        return 2
    return max(2, min(shared[room] + 1, shared[0]))


def _best_linked(graph: nx.DiGraph[str], papers: list[str], concepts: set[str], *, room: int) -> list[str]:
    """The `room` papers with the most links to `concepts` (ties: by key)."""
    links = {key: sum(1 for target in graph.successors(key) if target in concepts) for key in papers}
    return sorted(sorted(papers, key=lambda key: (-links[key], key))[:room])
