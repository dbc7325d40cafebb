"""Size, time-to-interactive and screenshots of the `kg html` page for ~3,000 corpus papers (goal: ≤ 3 s).

Takes a built graph (default: the shared 30k-paper graph from `bash bench/make_30k.sh`),
keeps a seeded random sample of its papers with every concept they mention, writes the page with
`kg.html.write_html` (default options, as `kg build` does) and opens it from file:// in headless
Chromium with the network blocked. Time to interactive = navigation start → the later of
`window.kgReadyAt` (the page's first `afterDrawing` once its script has run: positions are
precomputed and physics is off, so the page is drawn, labels included) and the end of
DOMContentLoaded; it answers input from then on. Then times a
few interactions and the page's own label placement per frame, and with `--shots DIR` saves
screenshots: the overview, a zoom onto the largest region, a paper selected (panel open),
and a year filter applied.

    .venv/bin/python bench/html_page.py --graph /work/bench-data/graph-30k --papers 3000 --shots /tmp/shots
    .venv/bin/python bench/html_page.py --graph out/ --shots /tmp/shots    # a whole built graph (the seeds)
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
from kg.html import concept_paper_counts, find_regions, layout, select_subgraph, write_html

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
    parser.add_argument("--shots", default=None, help="save screenshots (PNG) into this folder")
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

    counts = concept_paper_counts(graph)
    view = select_subgraph(graph, min_papers=args.min_papers, counts=counts).graph
    t0 = time.perf_counter()
    regions = find_regions(graph, [k for k, d in view.nodes(data=True) if d.get("kind") == "paper"], counts)
    regions_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    layout(view, regions=regions)
    layout_s = time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graph.html"
        t0 = time.perf_counter()
        summary = write_html(graph, path, min_papers=args.min_papers)
        write_s = time.perf_counter() - t0
        print(f"page        {summary.bytes / 1e6:.2f} MB; drew {summary.papers:,} of {summary.papers_available:,} papers, {summary.concepts:,} concepts "
              f"(threshold: in ≥ {summary.min_papers} papers; {len(concept_paper_counts(graph)):,} concepts in the sample), "
              f"{summary.edges:,} edges")
        print(f"python      write_html {write_s:.2f} s (of which regions {regions_s:.2f} s, igraph layout {layout_s:.2f} s); "
              f"{len(regions)} regions: {', '.join(f'{len(r.papers)} {r.name}' for r in regions[:3])}, …")
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
                # Ready = drawn (labels included) and the document's scripts done, whichever is later.
                ready.append(page.evaluate("Math.max(window.kgReadyAt, performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd)") / 1000)
                drawn = page.evaluate("kgNetwork.body.nodeIndices.length")
                if blocked or errors:
                    sys.exit(f"page fetched {blocked} or logged errors {errors}")
                context.close()
            print(f"browser     time to interactive (navigation start → drawn and scripts done): median {statistics.median(ready):.2f} s "
                  f"[{', '.join(f'{s:.2f}' for s in ready)}]; wall from goto {statistics.median(walls):.2f} s; {drawn:,} nodes drawn")

            context, page, _, errors = open_page(browser, path)
            page.goto(path.as_uri())
            page.wait_for_function("window.kgReady === true", timeout=120_000)
            hub = page.evaluate("kgNodes.get().filter(n => n.group !== 'paper').sort((a, b) => b.size - a.size)[0].id")
            paper = page.evaluate("kgNodes.get({filter: n => n.group === 'paper'})[0].id")
            redraw = after_next_draw(page, "")
            labels = page.evaluate("[window.kgLabelMs, kgLabels().length]")
            if args.shots:
                shots = Path(args.shots)
                shots.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(shots / "overview.png"))
                # The largest region (clicked in the legend), then zoomed in around its centre, undimmed.
                if page.evaluate("document.querySelectorAll('#kg-region-list li').length"):
                    page.click("#kg-region-list li:first-child button")
                    page.wait_for_timeout(600)
                    page.screenshot(path=str(shots / "region.png"))
                page.evaluate("() => { const c = kgNetwork.getViewPosition(); kgNetwork.moveTo({position: c, scale: Math.max(kgNetwork.getScale() * 2, 0.5)}); }")
                page.evaluate("document.getElementById('kg-panel-close').click()")  # clears the region highlight
                page.mouse.move(5, 5)
                page.wait_for_timeout(300)
                zoomed = page.evaluate("[window.kgLabelMs, kgLabels().length]")
                page.screenshot(path=str(shots / "region-zoom.png"))
                page.evaluate("document.getElementById('kg-panel-close').click()")
            search = page.evaluate("q => { const t = performance.now(); kgFind(q); return performance.now() - t; }", "learn")
            focus = after_next_draw(page, f"kgFocus({hub!r})")
            select = after_next_draw(page, f"kgFocus({paper!r})")
            if args.shots:
                page.wait_for_timeout(600)
                page.screenshot(path=str(shots / "paper-selected.png"))
            toggle = after_next_draw(page, "document.querySelector('.kg-toggle input[value=METHOD]').click()")
            threshold = after_next_draw(page, "const s = document.getElementById('kg-threshold'); s.value = String(Number(s.min) + 2); s.dispatchEvent(new Event('input'))")
            years = after_next_draw(page, "document.getElementById('kg-panel-close').click(); const f = document.getElementById('kg-year-from');"
                                          " f.value = String(Number(f.max) - 2); f.dispatchEvent(new Event('input'))")
            shown = page.evaluate("document.getElementById('kg-stats').textContent")
            if args.shots:
                page.evaluate("kgNetwork.fit()")
                page.wait_for_timeout(300)
                page.screenshot(path=str(shots / "years-filtered.png"))
            print(f"interaction redraw {redraw:.0f} ms (labels {labels[0]:.1f} ms, {labels[1]} placed); search 'learn' {search:.0f} ms; "
                  f"select+highlight hub {focus:.0f} ms; select paper {select:.0f} ms; hide methods {toggle:.0f} ms; "
                  f"threshold +2 {threshold:.0f} ms; last 3 years {years:.0f} ms ({shown})")
            if args.shots:
                print(f"screenshots {args.shots}/overview.png, region.png, region-zoom.png (labels {zoomed[0]:.1f} ms, {zoomed[1]} placed), "
                      f"paper-selected.png, years-filtered.png")
            if errors:
                sys.exit(f"console errors: {errors}")
            context.close()
            browser.close()


if __name__ == "__main__":
    main()
