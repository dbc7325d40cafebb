"""kg html in a real browser: Debian's headless Chromium driven by Playwright, network off.

Skipped when chromium or Playwright is missing; CI (`.ci/run`) installs both.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from kg.html import write_html

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
playwright_api = pytest.importorskip("playwright.sync_api")
if CHROMIUM is None:
    pytest.skip("chromium is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def browser() -> Iterator:
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        )
        yield browser
        browser.close()


class Page:
    """An opened kg page plus everything it logged or tried to fetch."""

    def __init__(self, browser, path: Path) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        self.blocked: list[str] = []
        self.requests: list[str] = []
        self.errors: list[str] = []
        # The network is off: anything that is not the file itself is refused (and recorded).
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("console", lambda message: message.type in ("error", "warning") and self.errors.append(f"{message.type}: {message.text}"))
        self.page.on("pageerror", lambda error: self.errors.append(f"pageerror: {error}"))
        self.page.on("dialog", lambda dialog: (self.errors.append(f"dialog: {dialog.message}"), dialog.dismiss()))
        self.page.goto(path.as_uri())
        self.page.wait_for_function("window.kgReady === true", timeout=30_000)

    def _route(self, route) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def js(self, expression: str, arg=None):
        return self.page.evaluate(expression, arg)

    def drawn_nodes(self) -> list[str]:
        """Ids of the nodes vis-network currently draws (hidden ones excluded)."""
        return sorted(self.js("kgNetwork.body.nodeIndices"))

    def node_point(self, node_id: str) -> tuple[float, float]:
        """Page coordinates of a node's centre."""
        x, y = self.js(
            """id => { const p = kgNetwork.canvasToDOM(kgNetwork.getPositions([id])[id]);
                       const r = document.getElementById('kg-network').getBoundingClientRect();
                       return [p.x + r.left, p.y + r.top]; }""",
            node_id,
        )
        return x, y

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def open_page(browser, make_graph, tmp_path: Path) -> Iterator:
    pages: list[Page] = []

    def opener(graph=None, **options) -> Page:
        path = tmp_path / f"graph{len(pages)}.html"
        write_html(make_graph() if graph is None else graph, path, **options)
        page = Page(browser, path)
        pages.append(page)
        return page

    yield opener
    for page in pages:
        assert page.errors == [], "console errors"
        assert page.blocked == [], "tried to fetch"
        assert all(url.startswith("file://") for url in page.requests)
        assert page.js("window.__pwned") is None, "corpus text executed"
        page.close()


@pytest.fixture(scope="module")
def all_nodes(make_graph) -> list[str]:
    return sorted(make_graph())


def test_page_draws_every_node_offline(open_page, all_nodes) -> None:
    page = open_page()
    assert page.drawn_nodes() == all_nodes
    assert page.js("kgNetwork.body.data.edges.length") == 12
    # Something is actually painted on the canvas (not a blank page).
    painted = page.js(
        """() => { const c = document.querySelector('#kg-network canvas');
                   const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                   let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; }"""
    )
    assert painted > 1000
    # Each edge is drawn as its kind says (kg.html.page.EDGE_KINDS, read from the page data).
    edges = page.js("kgEdges.get().map(e => [e.from, e.to, e.kind, e.width || null, e.dashes || null])")
    assert ["concept:method/message-passing", "concept:method/gnn", "broader", None, True] in edges
    assert ["paper:p1", "concept:method/gnn", "proposed", 2, None] in edges
    assert ["paper:p1", "concept:task/molecule", "used", None, None] in edges
    assert page.js("document.getElementById('kg-stats').textContent") == "3 papers · 8 concepts shown"
    assert page.js("[...document.querySelectorAll('.kg-toggle span:not(.kg-count)')].map(s => s.textContent)") == [
        "Paper", "Method", "Dataset", "Task", "Metric", "Hardware", "Term",
    ]


def test_every_legend_entry_draws_its_icon(open_page) -> None:
    """The legend's Term icon was blank: graph.js had no drawing for the "star" shape."""
    from kg.html.page import GROUPS

    page = open_page()
    icons = page.js(
        """() => [...document.querySelectorAll('.kg-toggle')].map(label => {
               const svg = label.querySelector('svg.kg-shape');
               const box = svg.getBBox();
               return [label.dataset.type, svg.childElementCount, box.width * box.height]; })"""
    )
    assert [name for name, _, _ in icons] == list(GROUPS)
    assert all(children == 1 and area > 50 for _, children, area in icons), icons  # a shape of real size in each


def test_search_finds_and_focuses_a_node(open_page) -> None:
    page = open_page()
    page.page.fill("#kg-search", "MOLECULAR property")
    results = page.js("[...document.querySelectorAll('#kg-results li')].map(li => li.textContent)")
    assert results == ["molecular property predictionTask", "Graph Neural Networks for Molecular Property Prediction at ScalePaper"]
    page.page.press("#kg-search", "Enter")
    assert page.js("kgNetwork.getSelectedNodes()") == ["concept:task/molecule"]
    page.page.wait_for_timeout(600)  # the focus animation
    # The node and its neighbourhood (paper p1) are in view, in the part the panel leaves free.
    box = page.js("(() => { const r = document.getElementById('kg-network').getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })()")
    panel_left = page.js("document.getElementById('kg-panel').getBoundingClientRect().left")
    assert box[2] <= panel_left
    for node_id in ("concept:task/molecule", "paper:p1"):
        x, y = page.node_point(node_id)
        assert box[0] < x < box[2] and box[1] < y < box[3], node_id
    assert page.js("kgNetwork.getScale()") <= 1
    assert page.js("document.getElementById('kg-panel').hidden") is False
    assert page.js("document.querySelector('#kg-panel h2').textContent") == "molecular property prediction"
    # Alternative labels are searched too.
    assert page.js("kgFind('rag')") == ["concept:method/rag"]


def test_type_toggles_and_threshold_hide_nodes(open_page, all_nodes) -> None:
    page = open_page()
    page.page.uncheck('.kg-toggle input[value="METHOD"]')
    methods = {"concept:method/gnn", "concept:method/message-passing", "concept:method/rag", "concept:method/evil"}
    assert page.drawn_nodes() == sorted(set(all_nodes) - methods)
    page.page.uncheck('.kg-toggle input[value="paper"]')
    assert page.drawn_nodes() == ["concept:dataset/imagenet", "concept:hardware/gpu", "concept:metric/bleu", "concept:task/molecule"]
    page.page.check('.kg-toggle input[value="METHOD"]')
    page.page.check('.kg-toggle input[value="paper"]')
    assert page.drawn_nodes() == all_nodes
    # Threshold: concepts in fewer than 2 papers disappear.
    page.js("() => { const s = document.getElementById('kg-threshold'); s.value = '2'; s.dispatchEvent(new Event('input')); }")
    assert page.drawn_nodes() == ["concept:dataset/imagenet", "concept:method/gnn", "paper:p1", "paper:p2", "paper:p3"]
    assert page.js("document.getElementById('kg-threshold-value').textContent") == "2"


def test_click_highlights_neighbourhood_and_shows_details(open_page) -> None:
    page = open_page()
    page.page.mouse.click(*page.node_point("paper:p1"))
    assert page.js("kgNetwork.getSelectedNodes()") == ["paper:p1"]
    # Lit: p1, its concepts and its related papers (p2, p3 share GNN with it); the rest dimmed.
    faded = page.js("kgNodes.get().filter(n => n.color && n.color.background === '#e5e7eb').map(n => n.id).sort()")
    assert faded == ["concept:dataset/imagenet", "concept:method/evil", "concept:method/rag", "concept:metric/bleu"]
    panel = page.js("[...document.getElementById('kg-panel-body').children].map(e => e.textContent)")
    assert panel == [
        "Paper", "Graph Neural Networks for Molecular Property Prediction at Scale", "ICML · 2025", "Ada Lovelace, Alan Turing",
        "Region: graph neural network · ImageNet",
        "We propose GNN-X for molecules on GPUs.", "Open paper ↗",
        "Related papers",
        "Retrieval-Augmented Generation with Long Contextsshares graph neural network"
        "<img src=x onerror=\"window.__pwned='title'\">Evil papershares graph neural network",
        "Methods", "★ graph neural networkmessage passing", "Tasks", "molecular property prediction", "Hardware", "GPU",
    ]
    # The lit nodes are drawn last (over the dimmed ones).
    order = page.js("kgNetwork.body.nodeIndices")
    assert set(order[-7:]) == {"paper:p1", "paper:p2", "paper:p3", "concept:method/gnn", "concept:method/message-passing",
                               "concept:task/molecule", "concept:hardware/gpu"}
    assert page.js("document.querySelector('#kg-panel a').href") == "https://example.org/p1"
    # Selecting another node moves the highlight.
    page.page.mouse.click(*page.node_point("paper:p2"))
    faded = page.js("kgNodes.get().filter(n => n.color && n.color.background === '#e5e7eb').map(n => n.id).sort()")
    assert faded == ["concept:hardware/gpu", "concept:method/evil", "concept:method/message-passing", "concept:task/molecule"]
    # Clicking empty space clears it.
    empty = (300, 760)
    on_canvas = "p => { const r = document.getElementById('kg-network').getBoundingClientRect(); return kgNetwork.getNodeAt({x: p[0] - r.left, y: p[1] - r.top}); }"
    assert page.js(on_canvas, list(empty)) is None
    page.page.mouse.click(*empty)
    assert page.js("document.getElementById('kg-panel').hidden") is True
    assert page.js("kgNodes.get().filter(n => n.color && n.color.background === '#e5e7eb').length") == 0


def test_corpus_payloads_never_execute(open_page) -> None:
    page = open_page()
    # Hover (tooltip) and click (side panel) the paper and the concept that carry payloads.
    for node_id in ("paper:p3", "concept:method/evil", "paper:p2"):
        x, y = page.node_point(node_id)
        page.page.mouse.move(x, y)
        page.page.wait_for_selector("#kg-tooltip:not([hidden])")
        page.page.mouse.click(x, y)
        assert page.js("kgNetwork.getSelectedNodes()") == [node_id]
        assert page.js("window.__pwned") is None
    # Search for it and open it from the results too.
    page.page.fill("#kg-search", "evil")
    page.page.press("#kg-search", "Enter")
    page.page.wait_for_timeout(300)
    assert page.js("document.querySelector('#kg-panel h2').textContent") == "<img src=x onerror=\"window.__pwned='title'\">Evil paper"
    abstract = page.js("document.querySelector('#kg-panel .kg-abstract').textContent")
    assert "<script>window.__pwned = 'script'</script>" in abstract
    # The payloads are text: no element was made from them, and no javascript: link exists.
    assert page.js("document.querySelectorAll('img, iframe, svg script, #kg-panel script, #kg-tooltip *:not(div):not(strong):not(b)').length") == 0
    assert page.js("[...document.querySelectorAll('a')].map(a => a.href)") == ["https://ok.example/p3"]
    # The venue filter lists the HTML-ish venue as text, not as markup.
    assert "<i>Venue</i> (1)" in page.js("[...document.querySelectorAll('#kg-venue option')].map(o => o.textContent)")
    assert page.js("document.querySelectorAll('i, [onmouseover]').length") == 0
    page.page.mouse.click(*page.node_point("paper:p2"))  # javascript: URL: no link at all
    assert page.js("document.querySelectorAll('#kg-panel a').length") == 0
    page.page.wait_for_timeout(200)
    assert page.js("window.__pwned") is None


def test_seeds_page_from_kg_build(browser, seeds_out: Path, seeds_graph) -> None:
    """The page `kg build seeds/` writes draws every node and its search focuses a paper."""
    graph = seeds_graph
    page = Page(browser, seeds_out / "graph.html")
    try:
        # Every node but the terms, whose toggle starts off.
        assert page.drawn_nodes() == sorted(k for k, d in graph.nodes(data=True) if d.get("type") != "TERM")
        key, data = next((k, d) for k, d in sorted(graph.nodes(data=True)) if d["kind"] == "paper")
        page.page.fill("#kg-search", data["title"][:30].upper())
        page.page.press("#kg-search", "Enter")
        assert page.js("kgNetwork.getSelectedNodes()") == [key]
        assert page.js("document.querySelector('#kg-panel h2').textContent") == data["title"]
        assert page.errors == [] and page.blocked == []
    finally:
        page.close()


# What vis-network draws of each drawn node whose centre is on the canvas, read after a fresh frame:
# [id, group, width on screen (px), size (vis-network's, in layout units)].
MARKERS = """() => new Promise(resolve => { kgNetwork.once('afterDrawing', () => {
    const canvas = document.querySelector('#kg-network canvas'), scale = kgNetwork.getScale();
    resolve(kgNetwork.body.nodeIndices.map(id => kgNetwork.body.nodes[id]).filter(node => {
        const p = kgNetwork.canvasToDOM({x: node.x, y: node.y});
        return p.x >= 0 && p.y >= 0 && p.x < canvas.clientWidth && p.y < canvas.clientHeight;
    }).map(node => [node.id, node.options.group, node.shape.width * scale, node.options.size]));
}); kgNetwork.redraw(); })"""

# Canvas pixels of each of these colours ("#rrggbb"): concept types' fills (regions and papers use others).
PIXELS_OF = """colours => { const canvas = document.querySelector('#kg-network canvas');
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    const rgb = colours.map(c => [1, 3, 5].map(i => parseInt(c.slice(i, i + 2), 16)));
    const counts = colours.map(() => 0);
    for (let i = 0; i < data.length; i += 4)
        rgb.forEach((c, k) => { if (Math.abs(data[i] - c[0]) + Math.abs(data[i + 1] - c[1]) + Math.abs(data[i + 2] - c[2]) < 12) counts[k]++; });
    return counts; }"""

MIN_MARKER_WIDTH = 6  # px on screen: a shape the eye can tell from the legend's others


def test_seeds_page_draws_every_node_marker_at_a_legible_size(browser, seeds_out: Path) -> None:
    """The seeds page opens zoomed out far enough that markers in layout units came to 1–5 px
    across, and under their white border (a fixed width on screen) they showed not at all."""
    from kg.html.page import GROUPS

    page = Page(browser, seeds_out / "graph.html")
    try:
        drawn = page.drawn_nodes()
        layout_size = {node["id"]: node["size"] for node in page.js("JSON.parse(document.getElementById('kg-nodes').textContent)")}
        for zoom in (1, 1 / 4):  # the default view, and zoomed out further
            page.js("z => kgNetwork.moveTo({scale: kgNetwork.getScale() * z})", zoom)
            markers = page.js(MARKERS)
            assert sorted(m[0] for m in markers) == drawn, zoom  # all of them in view
            small = [(key, round(width, 2)) for key, _, width, _ in markers if width < MIN_MARKER_WIDTH - 1e-9]  # (floating point: size / scale × scale)
            assert small == [], (zoom, page.js("kgNetwork.getScale()"), small[:5])
            if zoom == 1:
                # The markers are painted: every type drawn shows its own colour on the canvas.
                fills = {group: GROUPS[group]["color"] for _, group, _, _ in markers if group != "paper"}
                assert len(fills) >= 4
                pixels = dict(zip(fills, page.js(PIXELS_OF, list(fills.values())), strict=True))
                # at least one marker's worth: a marker at the floor paints about 7 pixels (a type with one
                # concept, partly under a label, showed 9)
                assert all(count >= 5 for count in pixels.values()), pixels
        # Zoomed in, a marker is its layout size (the floor only ever raises a size).
        paper = next(key for key in drawn if key.startswith("paper:"))
        page.js("id => kgNetwork.moveTo({position: kgNetwork.getPositions([id])[id], scale: 2})", paper)
        markers = page.js(MARKERS)
        assert markers and all(size == layout_size[key] for key, _, _, size in markers)
        assert page.errors == [] and page.blocked == []
    finally:
        page.close()


# ---- regions, labels, panel, filters, focus (issue 15) ----


def overlapping(boxes: list[dict]) -> list[tuple[str, str]]:
    return [
        (a["id"], b["id"])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]
    ]


def test_regions_legend_names_and_colours_the_communities(open_page, two_fields) -> None:
    page = open_page(graph=two_fields())
    assert page.js("document.getElementById('kg-regions').hidden") is False
    legend = page.js("[...document.querySelectorAll('#kg-region-list li')].map(li => li.textContent)")
    assert sorted(legend) == ["ImageNet · convolutional network · segmentation6", "graph neural network · message passing · link prediction6"]
    # Papers are filled with their region's colour, the legend's swatch colour.
    swatches = page.js("[...document.querySelectorAll('#kg-region-list .kg-swatch')].map(s => getComputedStyle(s).backgroundColor)")
    assert len(set(swatches)) == 2
    fills = page.js("[...new Set(kgNodes.get({filter: n => n.group === 'paper'}).map(n => n.color.background))]")
    assert len(fills) == 2
    # Clicking a region lights its papers (and the concepts naming it) and dims the rest.
    page.page.click("#kg-region-list li:first-child button")
    faded = page.js("kgNodes.get().filter(n => n.color && n.color.background === '#e5e7eb').map(n => n.id)")
    assert sum(1 for key in faded if key.startswith("paper:")) == 6


def test_labels_fit_without_overlapping_and_follow_the_zoom(browser, seeds_out: Path, seeds_graph) -> None:
    graph = seeds_graph
    page = Page(browser, seeds_out / "graph.html")
    try:
        drawn = len(page.drawn_nodes())
        labels = page.js("kgLabels()")
        # Overview: fewer labels than nodes, none overlapping, all inside the canvas.
        assert 5 < len(labels) < drawn / 10
        assert overlapping(labels) == []
        width, height = page.js("[document.querySelector('#kg-network canvas').clientWidth, document.querySelector('#kg-network canvas').clientHeight]")
        assert all(0 <= b["x"] and b["x"] + b["w"] <= width and 0 <= b["y"] and b["y"] + b["h"] <= height for b in labels)
        # Zoomed out the most shared concepts win: the top concept is labelled; no paper is.
        counts = {key: sum(1 for p in graph.predecessors(key) if graph.nodes[p]["kind"] == "paper")
                  for key, d in graph.nodes(data=True) if d["kind"] == "concept" and d["type"] != "TERM"}  # fmt: skip
        top = max(sorted(counts), key=lambda key: counts[key])
        ids = [b["id"] for b in labels]
        assert page.js("kgNetwork.getScale()") < 0.35
        # Region names come first, then the most shared concept; a budget keeps it sparse.
        regions = [key for key in ids if key.startswith("region:")]
        assert len(regions) >= 2 and ids[: len(regions)] == regions
        # the most shared concept's name is on the overview: its own label, or the region it names first
        region_names = [b["text"] for b in labels if b["id"].startswith("region:")]
        assert top in ids or any(name.startswith(graph.nodes[top]["label"]) for name in region_names)
        assert len(labels) <= round(width * height / 22000)
        # Zoomed in on a paper: paper titles join, still without overlap.
        paper = next(k for k, d in sorted(graph.nodes(data=True)) if d["kind"] == "paper")
        page.js("id => kgNetwork.moveTo({position: kgNetwork.getPositions([id])[id], scale: 1.5})", paper)
        page.page.wait_for_timeout(100)
        labels = page.js("kgLabels()")
        assert any(b["id"].startswith("paper:") for b in labels)
        assert overlapping(labels) == []
        # A selection labels only its lit neighbourhood, the selected node first.
        page.js("id => kgFocus(id)", paper)
        page.page.wait_for_timeout(600)
        labels = page.js("kgLabels()")
        lit = {paper} | set(graph.successors(paper)) | set(graph.predecessors(paper))
        lit |= {f"paper:{r.id}" for r in __import__("kg").related(graph, paper.removeprefix("paper:"), top=8)}
        assert labels[0]["id"] == paper
        assert {b["id"] for b in labels} <= lit
        assert overlapping(labels) == []
        assert page.errors == [] and page.blocked == []
    finally:
        page.close()


def test_panel_lists_related_papers_marks_proposed_and_links_hidden_concepts(open_page) -> None:
    page = open_page(min_papers=2)  # draws only GNN and ImageNet of the concepts
    page.js("kgFocus('paper:p2')")
    related = page.js("[...document.querySelectorAll('#kg-panel .kg-related > li')].map(li => li.textContent)")
    assert related == [
        "<img src=x onerror=\"window.__pwned='title'\">Evil papershares ImageNetgraph neural network",
        "Graph Neural Networks for Molecular Property Prediction at Scaleshares graph neural network",
    ]
    # Proposed concepts are marked, drawn or not; RAG and BLEU are not drawn but listed.
    proposed = page.js("[...document.querySelectorAll('#kg-panel .kg-chip.kg-proposed')].map(c => c.textContent)")
    assert proposed == ["★ retrieval-augmented generation"]
    offstage = page.js("[...document.querySelectorAll('#kg-panel .kg-chips .kg-chip.kg-offstage')].map(c => c.textContent)")
    assert offstage == ["★ retrieval-augmented generation", "BLEU"]
    # Clicking a concept the page does not draw opens its panel: its papers, and a note.
    page.page.click("#kg-panel .kg-chip.kg-proposed")
    assert page.js("document.querySelector('#kg-panel h2').textContent") == "retrieval-augmented generation"
    body = page.js("document.getElementById('kg-panel-body').textContent")
    assert "Not drawn on this page" in body and "Retrieval-Augmented Generation with Long Contexts" in body
    # Its paper's chip leads back to the paper; a related paper's chip to that paper.
    page.page.click("#kg-panel .kg-list .kg-chip")
    assert page.js("kgNetwork.getSelectedNodes()") == ["paper:p2"]
    page.page.click("#kg-panel .kg-related > li:first-child > .kg-chip")
    assert page.js("kgNetwork.getSelectedNodes()") == ["paper:p3"]
    # A concept's panel lists its broader concept, even one the page does not draw.
    page.page.click("#kg-panel .kg-why .kg-chip >> text=graph neural network")
    body = page.js("document.getElementById('kg-panel-body').textContent")
    assert page.js("document.querySelector('#kg-panel h2').textContent") == "graph neural network"
    assert "Narrower" in body and "message passing" in body and "Papers (3)" in body


def test_concept_hidden_by_the_slider_is_shown_when_clicked(open_page) -> None:
    page = open_page()
    page.js("() => { const s = document.getElementById('kg-threshold'); s.value = '2'; s.dispatchEvent(new Event('input')); }")
    assert "concept:task/molecule" not in page.drawn_nodes()
    page.js("kgFocus('paper:p1')")
    page.page.click("#kg-panel .kg-chip >> text=molecular property prediction")
    assert "concept:task/molecule" in page.drawn_nodes()
    assert page.js("kgNetwork.getSelectedNodes()") == ["concept:task/molecule"]
    assert page.js("document.getElementById('kg-threshold-value').textContent") == "1"


def test_year_and_venue_filters_change_what_is_shown(open_page, two_fields) -> None:
    page = open_page(graph=two_fields())  # papers i = 0…5 of each field: year 2018 + i, ICML when i is odd
    stats = "document.getElementById('kg-stats').textContent"
    assert page.js(stats) == "12 papers · 7 concepts shown"
    assert page.js("[document.getElementById('kg-year-from').value, document.getElementById('kg-year-to').value]") == ["2018", "2023"]
    page.page.fill("#kg-year-from", "2020")
    assert page.js(stats) == "8 papers · 7 concepts shown"
    assert "paper:g1" not in page.drawn_nodes() and "paper:g3" in page.drawn_nodes()
    venues = page.js("[...document.querySelectorAll('#kg-venue option')].map(o => o.textContent)")
    assert venues == ["All venues", "ICML (6)", "NeurIPS (6)"]
    page.page.select_option("#kg-venue", "ICML")
    assert page.js(stats) == "4 papers · 7 concepts shown"  # 2021 and 2023 of each field
    assert sorted(k for k in page.drawn_nodes() if k.startswith("paper:")) == ["paper:g4", "paper:g6", "paper:v4", "paper:v6"]
    # The counts in the legend follow.
    assert page.js("document.querySelector('.kg-toggle[data-type=paper] .kg-count').textContent") == "4 / 12"
    assert sorted(page.js("[...document.querySelectorAll('#kg-region-list .kg-count')].map(c => c.textContent)")) == ["2 / 6", "2 / 6"]
    page.page.fill("#kg-year-to", "2020")  # nothing left: concepts go too
    assert page.js(stats) == "0 papers · 0 concepts shown"
    page.page.select_option("#kg-venue", "")
    page.page.fill("#kg-year-from", "2018")
    page.page.fill("#kg-year-to", "2023")
    assert page.js(stats) == "12 papers · 7 concepts shown"


def test_focus_page_opens_on_the_paper_with_its_related_papers(open_page) -> None:
    page = open_page(focus="p2", depth=1)
    assert page.drawn_nodes() == ["concept:dataset/imagenet", "concept:method/gnn", "concept:method/rag", "concept:metric/bleu",
                                  "paper:p1", "paper:p2", "paper:p3"]  # fmt: skip
    assert page.js("kgNetwork.getSelectedNodes()") == ["paper:p2"]
    assert page.js("document.querySelector('#kg-panel h2').textContent") == "Retrieval-Augmented Generation with Long Contexts"
    page.page.wait_for_timeout(100)
    labels = page.js("kgLabels()")
    assert labels[0]["id"] == "paper:p2"  # the focus paper's label first
    assert {"paper:p1", "paper:p3"} <= {b["id"] for b in labels}  # small enough for every paper's title
    assert overlapping(labels) == []
    # Nothing is dimmed, and the whole page is in view, beside the controls and the panel.
    assert page.js("kgNodes.get().filter(n => n.color && n.color.background === '#e5e7eb').length") == 0
    right = page.js("document.getElementById('kg-panel').getBoundingClientRect().left")
    left = page.js("document.getElementById('kg-controls').getBoundingClientRect().right")
    for node_id in page.drawn_nodes():
        x, y = page.node_point(node_id)
        assert left < x < right, node_id


def test_a_related_paper_that_rests_on_the_abstracts_alone_says_so(open_page, make_graph) -> None:
    """With embeddings, a related paper may share no concept: the panel says why it is there in
    words, not with an empty "shares"."""
    import numpy as np

    from kg.related_work.embed import Embeddings
    from kg.related_work.index import RelatedIndex

    graph = make_graph()
    graph.add_node("paper:p4", **{**graph.nodes["paper:p1"], "id": "p4", "title": "A paper on its own"})
    graph.add_node("concept:task/alone", kind="concept", id="task/alone", label="a task of its own", type="TASK")
    graph.add_edge("paper:p4", "concept:task/alone", kind="mentions", role="used", mentions=1)
    ids = RelatedIndex.from_graph(graph).paper_ids
    vectors = np.eye(len(ids), 8, dtype=np.float32)
    vectors[ids.index("p4")] = vectors[ids.index("p2")] + 0.01  # p4's abstract reads like p2's
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    page = open_page(graph, embeddings=Embeddings(tuple(ids), vectors))
    page.js("kgFocus('paper:p2')")
    related = page.js("[...document.querySelectorAll('#kg-panel .kg-related > li')].map(li => li.textContent)")
    assert related[0] == "A paper on its ownsimilar abstract, no word in common"
    assert all("shares " in text for text in related[1:]) and len(related) == 3


def with_results(graph, evil_abstract: str):
    """make_graph() with result claims: three on ImageNet in BLEU (one in the paper whose text
    carries payloads, its sentence holding one more), a gain, and one scored below the threshold."""
    from kg.graph import paper_key

    def claim(text: str, value: str, score: float, **fields) -> dict:
        start = text.index(value)
        sent_start = text.rfind(". ", 0, start) + 2 if ". " in text[:start] else 0
        sent_end = text.find(". ", start + len(value)) + 1 or len(text)
        base = {"start": start, "end": start + len(value), "value": value, "number": float(value), "unit": None, "kind": "absolute",
                "metric": "BLEU", "metric_concept": "metric/bleu", "dataset": "ImageNet", "dataset_concept": "dataset/imagenet",
                "task": None, "task_concept": None, "method": "(proposed)", "method_concept": None, "proposed": True,
                "baseline": None, "baseline_concept": None, "score": score, "sent_start": sent_start, "sent_end": sent_end}  # fmt: skip
        return {**base, **fields}

    texts = {
        "p1": "We propose GNN-X for molecules on GPUs. GNN-X reaches 28.0 BLEU on ImageNet.",
        "p2": "RAG evaluated on ImageNet with BLEU. RAG reaches 31.5 BLEU on ImageNet, 2.1 points over GNN. A draft got 12.5 BLEU.",
        "p3": evil_abstract + " It reaches 99.9 BLEU on ImageNet <img src=x onerror=\"window.__pwned='claim'\">.",
    }
    results = {
        "p1": [claim(texts["p1"], "28.0", 0.9, method="graph neural network", method_concept="method/gnn")],
        "p2": [claim(texts["p2"], "31.5", 0.8, method="retrieval-augmented generation", method_concept="method/rag"),
               claim(texts["p2"], "2.1", 0.7, unit="points", kind="improvement", baseline="GNN", baseline_concept="method/gnn"),
               claim(texts["p2"], "12.5", 0.1)],
        "p3": [claim(texts["p3"], "99.9", 0.75, method="<b>evil</b>")],
    }  # fmt: skip
    for pid, text in texts.items():
        graph.nodes[paper_key(pid)]["abstract"] = text
        graph.nodes[paper_key(pid)]["results"] = results[pid]
    return graph


def test_leaderboards_and_claims_in_the_panel(open_page, make_graph, evil_abstract) -> None:
    from kg.results import MIN_RESULT_SCORE

    assert 0.1 < MIN_RESULT_SCORE <= 0.7  # the test's claims: 0.1 below it, the others above
    page = open_page(with_results(make_graph(), evil_abstract))
    # A dataset's panel: its leaderboard per metric, best first, each row's sentence with the value marked.
    page.js("kgFocus('concept:dataset/imagenet')")
    boards = page.js("[...document.querySelectorAll('#kg-panel .kg-board')].map(b => [b.querySelector('h4').textContent, b.querySelector('.kg-meta').textContent])")
    assert boards == [["BLEU", "higher is better"]]
    rows = page.js("[...document.querySelectorAll('#kg-panel .kg-board-row')].map(r => [r.querySelector('.kg-board-value').textContent, "
                   "r.querySelector('.kg-board-method').textContent, r.querySelector('mark').textContent, r.querySelector('.kg-sentence').textContent])")
    assert [row[:3] for row in rows] == [
        ["99.9", "<b>evil</b>", "99.9"], ["31.5", "retrieval-augmented generation", "31.5"], ["28.0", "graph neural network", "28.0"],
    ]  # the gain (2.1 points) is not ranked, the claim scored 0.1 is left out
    assert rows[1][3] == "RAG reaches 31.5 BLEU on ImageNet, 2.1 points over GNN."
    assert "<img src=x onerror=\"window.__pwned='claim'\">" in rows[0][3]  # shown as text
    # A row's paper chip opens the paper: its claims, every one, the value marked, the low one dimmed.
    page.page.click("#kg-panel .kg-board-row:nth-child(2) .kg-chip")
    assert page.js("kgNetwork.getSelectedNodes()") == ["paper:p2"]
    claims = page.js("[...document.querySelectorAll('#kg-panel .kg-claim')].map(c => [c.querySelector('.kg-claim-what').textContent, "
                     "c.querySelector('mark').textContent, c.classList.contains('kg-low')])")
    assert claims == [["31.5 BLEU on ImageNet", "31.5", False], ["2.1 points gain BLEU on ImageNet", "2.1", False], ["12.5 BLEU on ImageNet", "12.5", True]]
    assert page.js("document.querySelector('#kg-panel h3 + .kg-claims') !== null")
    # A metric's panel: its leaderboard per dataset.
    page.js("kgFocus('concept:metric/bleu')")
    assert page.js("[...document.querySelectorAll('#kg-panel .kg-board h4')].map(h => h.textContent)") == ["on ImageNet"]
    assert page.js("document.querySelectorAll('#kg-panel .kg-board-row').length") == 3
    # Nothing from the claims ran or became an element.
    page.js("kgFocus('paper:p3')")
    assert page.js("document.querySelectorAll('#kg-panel .kg-claim mark').length") == 1
    assert page.js("document.querySelectorAll('img, #kg-panel b, #kg-panel script').length") == 0
    assert page.js("window.__pwned") is None
