"""Size and time-to-interactive of the `kg html` page for ~3,000 corpus papers (goal: ≤ 5 s).

Takes a built graph (default: the shared 30k-paper graph from `bash /work/bench-data/make-30k.sh`),
keeps a seeded random sample of its papers with every concept they mention, writes the page with
`kg.html.write_html` (default options, as `kg build` does) and opens it from file:// in headless
Chromium with the network blocked. Time to interactive = navigation start → `window.kgReady`
(set by the page on vis-network's first `afterDrawing`, with positions precomputed and physics
off, so the page is drawn and answers input from then on). Then times a few interactions.

    .venv/bin/python bench/html_page.py --graph /work/bench-data/graph-30k --papers 3000
    .venv/bin/python bench/html_page.py --graph out/                       # a whole built graph
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import networkx as nx

from kg.graph import load
from kg.html import concept_paper_counts, layout, select_subgraph, write_html

BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def sample(graph: nx.DiGraph, papers: int, seed: int) -> nx.DiGraph:
    """`papers` random papers, the concepts they mention and those concepts' broader ones."""
    keys = sorted(key for key, data in graph.nodes(data=True) if data.get("kind") == "paper")
    if papers >= len(keys):
        return graph
    chosen = set(random.Random(seed).sample(keys, papers))
    keep = set(chosen)
    for key in chosen:
        keep.update(graph.successors(key))
    frontier = [key for key in keep if key not in chosen]
    while frontier:  # broader concepts, transitively
        frontier = [b for key in frontier for b in graph.successors(key) if b not in keep]
        keep.update(frontier)
    return graph.subgraph(keep).copy()


def open_page(browser, path: Path) -> tuple[object, object, list[str], list[str]]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    blocked: list[str] = []
    errors: list[str] = []

    def route(request_route) -> None:
        if request_route.request.url.startswith("file://"):
            request_route.continue_()
        else:
            blocked.append(request_route.request.url)
            request_route.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    return context, page, blocked, errors


def after_next_draw(page, action: str) -> float:
    """Milliseconds from running the statement `action` in the page to the end of the next redraw.
    (Spliced into the evaluated source: the page's CSP forbids eval/new Function.)"""
    return page.evaluate(
        "new Promise(resolve => { const start = performance.now();"
        " kgNetwork.once('afterDrawing', () => resolve(performance.now() - start));"
        f" {action}; kgNetwork.redraw(); }})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", default="/work/bench-data/graph-30k", help="folder with graph.json")
    parser.add_argument("--papers", type=int, default=3000, help="papers to sample (default 3000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=3, help="page loads to time")
    parser.add_argument("--keep", default=None, help="also copy the page here")
    parser.add_argument("--min-papers", type=int, default=None, help="as kg html --min-papers (default: automatic)")
    args = parser.parse_args()

    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("chromium is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    started = time.perf_counter()
    full = load(args.graph)
    graph = sample(full, args.papers, args.seed)
    loaded = time.perf_counter() - started
    papers = sum(1 for _, d in graph.nodes(data=True) if d.get("kind") == "paper")
    print(f"graph       {args.graph}: {papers:,} papers sampled of {sum(1 for _, d in full.nodes(data=True) if d.get('kind') == 'paper'):,} "
          f"(seed {args.seed}); {graph.number_of_nodes():,} nodes, {graph.number_of_edges():,} edges  [load+sample {loaded:.1f} s]")

    view = select_subgraph(graph, min_papers=args.min_papers).graph
    t0 = time.perf_counter()
    layout(view)
    layout_s = time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graph.html"
        t0 = time.perf_counter()
        summary = write_html(graph, path, min_papers=args.min_papers)
        write_s = time.perf_counter() - t0
        print(f"page        {summary.bytes / 1e6:.2f} MB; drew {summary.papers:,} of {summary.papers_available:,} papers, {summary.concepts:,} concepts "
              f"(threshold: in ≥ {summary.min_papers} papers; {len(concept_paper_counts(graph)):,} concepts in the sample), "
              f"{summary.edges:,} edges")
        print(f"python      write_html {write_s:.2f} s (of which igraph layout {layout_s:.2f} s)")
        if args.keep:
            shutil.copyfile(path, args.keep)

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
            walls, ready = [], []
            for _ in range(args.runs):
                context, page, blocked, errors = open_page(browser, path)
                t0 = time.perf_counter()
                page.goto(path.as_uri())
                page.wait_for_function("window.kgReady === true", timeout=120_000, polling=20)
                walls.append(time.perf_counter() - t0)
                ready.append(page.evaluate("window.kgReadyAt") / 1000)
                drawn = page.evaluate("kgNetwork.body.nodeIndices.length")
                if blocked or errors:
                    sys.exit(f"page fetched {blocked} or logged errors {errors}")
                context.close()
            print(f"browser     time to interactive (navigation start → kgReady): median {statistics.median(ready):.2f} s "
                  f"[{', '.join(f'{s:.2f}' for s in ready)}]; wall from goto {statistics.median(walls):.2f} s; {drawn:,} nodes drawn")

            context, page, _, errors = open_page(browser, path)
            page.goto(path.as_uri())
            page.wait_for_function("window.kgReady === true", timeout=120_000)
            hub = page.evaluate("kgNodes.get().filter(n => n.group !== 'paper').sort((a, b) => b.size - a.size)[0].id")
            paper = page.evaluate("kgNodes.get({filter: n => n.group === 'paper'})[0].id")
            redraw = after_next_draw(page, "")
            search = page.evaluate("q => { const t = performance.now(); kgFind(q); return performance.now() - t; }", "learn")
            focus = after_next_draw(page, f"kgFocus({hub!r})")
            select = after_next_draw(page, f"kgFocus({paper!r})")
            toggle = after_next_draw(page, "document.querySelector('.kg-toggle input[value=METHOD]').click()")
            threshold = after_next_draw(page, "const s = document.getElementById('kg-threshold'); s.value = String(Number(s.min) + 2); s.dispatchEvent(new Event('input'))")
            print(f"interaction redraw {redraw:.0f} ms; search 'learn' {search:.0f} ms; select+highlight hub {focus:.0f} ms; "
                  f"select paper {select:.0f} ms; hide methods {toggle:.0f} ms; threshold +2 {threshold:.0f} ms")
            if errors:
                sys.exit(f"console errors: {errors}")
            context.close()
            browser.close()


if __name__ == "__main__":
    main()
