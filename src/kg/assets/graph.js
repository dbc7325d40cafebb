// kg graph page: search, type toggles, threshold, neighbourhood highlight, tooltips, details.
// Every piece of corpus text reaches the DOM through textContent only (never innerHTML),
// and links are made only for http(s) URLs.
(function () {
  "use strict";

  function readJSON(id) {
    return JSON.parse(document.getElementById(id).textContent);
  }

  var nodeList = readJSON("kg-nodes");
  var edgeList = readJSON("kg-edges");
  var options = readJSON("kg-options");
  var GROUPS = readJSON("kg-groups");
  var TYPE_ORDER = Object.keys(GROUPS);
  var FADED = { background: "#e5e7eb", border: "#e5e7eb" };
  var FADED_FONT = { color: "#c0c6cf" };
  var NORMAL_FONT = { color: "#1f2937" };

  var byId = new Map();
  var neighbours = new Map();
  nodeList.forEach(function (node) {
    byId.set(node.id, node);
    neighbours.set(node.id, []);
    node.search = [node.label, node.kg.title || "", (node.kg.alt_labels || []).join(" ")].join(" ").toLowerCase();
  });
  edgeList.forEach(function (edge) {
    if (neighbours.has(edge.from) && neighbours.has(edge.to)) {
      neighbours.get(edge.from).push({ id: edge.to, kind: edge.kind || "used", out: true });
      neighbours.get(edge.to).push({ id: edge.from, kind: edge.kind || "used", out: false });
    }
  });

  var nodes = new vis.DataSet(nodeList.map(function (node) {
    var copy = { id: node.id, group: node.group, label: node.label, size: node.size, x: node.x, y: node.y };
    if (node.font) copy.font = node.font;
    return copy;
  }));
  var edges = new vis.DataSet(edgeList);
  var container = document.getElementById("kg-network");
  var network = new vis.Network(container, { nodes: nodes, edges: edges }, options);

  // Signals for tests and benchmarks: the network object and "drawn and interactive".
  window.kgNetwork = network;
  window.kgNodes = nodes;
  window.kgEdges = edges;
  window.kgReady = false;
  network.once("afterDrawing", function () {
    window.kgReadyAt = performance.now();
    window.kgReady = true;
    document.body.setAttribute("data-ready", "true");
    scaleHubLabels();
  });

  // ---- small DOM helpers (text only) ----
  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function safeHref(url) {
    if (typeof url !== "string") return null;
    try {
      var parsed = new URL(url);
      return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
    } catch (error) {
      return null;
    }
  }

  function typeName(group) {
    return GROUPS[group] ? GROUPS[group].label : group;
  }

  function badge(group) {
    var span = el("span", "kg-badge", typeName(group));
    span.style.background = GROUPS[group] ? GROUPS[group].color : "#6b7280";
    return span;
  }

  function conceptsByType(id) {
    var grouped = {};
    neighbours.get(id).forEach(function (link) {
      var other = byId.get(link.id);
      if (other.group === "paper") return;
      (grouped[other.group] = grouped[other.group] || []).push(other);
    });
    Object.keys(grouped).forEach(function (group) {
      grouped[group].sort(function (a, b) { return (b.kg.papers || 0) - (a.kg.papers || 0) || a.label.localeCompare(b.label); });
    });
    return grouped;
  }

  function paperMeta(info) {
    return [info.venue, info.year].filter(function (part) { return part !== null && part !== undefined && part !== ""; }).join(" · ");
  }

  function authorLine(info, limit) {
    var names = info.authors.slice(0, limit);
    var more = info.authors.length - names.length + (info.more_authors || 0);
    return names.join(", ") + (more > 0 ? " + " + more + " more" : "");
  }

  // ---- legend shapes (SVG built from fixed shape names) ----
  var SVG = "http://www.w3.org/2000/svg";
  var SHAPES = {
    dot: function () { return svgEl("circle", { cx: 10, cy: 10, r: 7 }); },
    diamond: function () { return svgEl("polygon", { points: "10,2 18,10 10,18 2,10" }); },
    square: function () { return svgEl("rect", { x: 3, y: 3, width: 14, height: 14 }); },
    triangle: function () { return svgEl("polygon", { points: "10,2 18,17 2,17" }); },
    triangleDown: function () { return svgEl("polygon", { points: "2,3 18,3 10,18" }); },
    hexagon: function () { return svgEl("polygon", { points: "10,1.5 17.4,5.75 17.4,14.25 10,18.5 2.6,14.25 2.6,5.75" }); }
  };
  function svgEl(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (name) { node.setAttribute(name, attrs[name]); });
    node.setAttribute("fill", "currentColor");
    return node;
  }
  document.querySelectorAll(".kg-shape").forEach(function (svg) {
    var make = SHAPES[svg.getAttribute("data-shape")];
    if (make) svg.appendChild(make());
  });

  // ---- filtering: type toggles and the papers-per-concept threshold ----
  var hiddenTypes = new Set();
  document.querySelectorAll(".kg-toggle input").forEach(function (box) {
    if (!box.checked) hiddenTypes.add(box.value); // types off by default (terms)
  });
  var threshold = document.getElementById("kg-threshold");
  var thresholdValue = document.getElementById("kg-threshold-value");
  var minPapers = Number(threshold.value);
  var maxPapers = minPapers;
  nodeList.forEach(function (node) {
    if (node.group !== "paper") maxPapers = Math.max(maxPapers, node.kg.papers);
  });
  threshold.max = String(maxPapers);
  threshold.disabled = maxPapers === minPapers;

  function isHidden(node) {
    // At 1 every concept shows, even broader ones that no paper mentions directly.
    return hiddenTypes.has(node.group) || (node.group !== "paper" && minPapers > 1 && node.kg.papers < minPapers);
  }

  var hiddenState = new Map();
  function applyFilters() {
    var updates = [];
    var shown = {};
    nodeList.forEach(function (node) {
      var hidden = isHidden(node);
      if (!hidden) shown[node.group] = (shown[node.group] || 0) + 1;
      if ((hiddenState.get(node.id) || false) !== hidden) {
        hiddenState.set(node.id, hidden);
        updates.push({ id: node.id, hidden: hidden });
      }
    });
    if (updates.length) nodes.update(updates);
    var papers = shown.paper || 0;
    var concepts = 0;
    document.querySelectorAll(".kg-toggle").forEach(function (label) {
      var group = label.getAttribute("data-type");
      var total = nodeList.filter(function (node) { return node.group === group; }).length;
      label.querySelector(".kg-count").textContent = String(shown[group] || 0) + (shown[group] !== total ? " / " + total : "");
      label.classList.toggle("kg-empty", total === 0);
      if (group !== "paper") concepts += shown[group] || 0;
    });
    document.getElementById("kg-stats").textContent =
      papers.toLocaleString("en") + " papers · " + concepts.toLocaleString("en") + " concepts shown";
    if (selected !== null && hiddenState.get(selected)) clearSelection();
  }

  document.querySelectorAll(".kg-toggle input").forEach(function (box) {
    box.addEventListener("change", function () {
      if (box.checked) hiddenTypes.delete(box.value); else hiddenTypes.add(box.value);
      applyFilters();
    });
  });
  threshold.addEventListener("input", function () {
    minPapers = Number(threshold.value);
    thresholdValue.textContent = String(minPapers);
    applyFilters();
  });

  // ---- neighbourhood highlight and details panel ----
  var selected = null;
  var lit = null;  // ids highlighted around the selection (null: nothing dimmed)

  function groupColor(node) {
    return options.groups[node.group] ? options.groups[node.group].color : undefined;
  }

  // Dim every node outside `next` (null: dim nothing), updating only nodes that change.
  function setLit(next) {
    var before = lit;
    lit = next;
    var updates = [];
    nodeList.forEach(function (node) {
      var was = before === null || before.has(node.id);
      var now = next === null || next.has(node.id);
      if (was !== now) updates.push({ id: node.id, color: now ? groupColor(node) : FADED, font: fontFor(node) });
    });
    if (updates.length) nodes.update(updates);
  }

  function highlight(id) {
    var next = new Set([id]);
    neighbours.get(id).forEach(function (link) { next.add(link.id); });
    setLit(next);
  }

  function clearHighlight() {
    setLit(null);
  }

  // The most shared concepts keep a readable label at any zoom: their font grows as the view
  // zooms out (vis-network hides labels smaller than drawThreshold on screen).
  var HUB_SCREEN_SIZE = 14;
  var hubs = nodeList.filter(function (node) { return node.group !== "paper" && node.kg.papers > 1; })
    .sort(function (a, b) { return b.kg.papers - a.kg.papers || (a.id < b.id ? -1 : 1); })
    .slice(0, 25);
  var hubSize = new Map();

  function fontFor(node) {
    var size = hubSize.get(node.id) || (node.font && node.font.size);
    return Object.assign(size ? { size: size } : {}, lit === null || lit.has(node.id) ? NORMAL_FONT : FADED_FONT);
  }

  function scaleHubLabels() {
    var scale = network.getScale();
    var updates = [];
    hubs.forEach(function (node) {
      var size = Math.round(Math.max(node.font ? node.font.size : 18, HUB_SCREEN_SIZE / scale));
      if (hubSize.get(node.id) !== size) {
        hubSize.set(node.id, size);
        updates.push({ id: node.id, font: fontFor(node) });
      }
    });
    if (updates.length) nodes.update(updates);
  }
  network.on("zoom", scaleHubLabels);
  network.on("animationFinished", scaleHubLabels);

  var panel = document.getElementById("kg-panel");
  var panelBody = document.getElementById("kg-panel-body");

  function chip(node, text) {
    var button = el("button", "kg-chip", text || node.label);
    button.type = "button";
    button.addEventListener("click", function () { focusNode(node.id); });
    return button;
  }

  function showDetails(id) {
    var node = byId.get(id);
    var info = node.kg;
    panelBody.replaceChildren();
    panelBody.appendChild(badge(node.group));
    if (node.group === "paper") {
      panelBody.appendChild(el("h2", null, info.title));
      var meta = paperMeta(info);
      if (meta) panelBody.appendChild(el("p", "kg-meta", meta));
      if (info.authors.length) panelBody.appendChild(el("p", "kg-meta", authorLine(info, 8)));
      if (info.abstract) panelBody.appendChild(el("p", "kg-abstract", info.abstract));
      var href = safeHref(info.url);
      if (href) {
        var link = el("a", null, "Open paper ↗");
        link.href = href;
        link.target = "_blank";
        link.rel = "noopener noreferrer";
        panelBody.appendChild(el("p")).appendChild(link);
      }
      var grouped = conceptsByType(id);
      TYPE_ORDER.forEach(function (group) {
        if (!grouped[group]) return;
        panelBody.appendChild(el("h3", null, GROUPS[group].plural));
        var chips = panelBody.appendChild(el("div", "kg-chips"));
        grouped[group].forEach(function (concept) { chips.appendChild(chip(concept)); });
      });
    } else {
      panelBody.appendChild(el("h2", null, node.label));
      panelBody.appendChild(el("p", "kg-meta", info.papers + (info.papers === 1 ? " paper" : " papers")));
      if (info.alt_labels.length) panelBody.appendChild(el("p", "kg-meta", "Also: " + info.alt_labels.join(", ")));
      var broader = [], narrower = [], papers = [];
      neighbours.get(id).forEach(function (link) {
        var other = byId.get(link.id);
        if (link.kind === "broader") (link.out ? broader : narrower).push(other);
        else if (other.group === "paper") papers.push(other);
      });
      [["Broader", broader], ["Narrower", narrower]].forEach(function (pair) {
        if (!pair[1].length) return;
        panelBody.appendChild(el("h3", null, pair[0]));
        var chips = panelBody.appendChild(el("div", "kg-chips"));
        pair[1].forEach(function (other) { chips.appendChild(chip(other)); });
      });
      if (papers.length) {
        papers.sort(function (a, b) { return (b.kg.year || 0) - (a.kg.year || 0) || a.kg.title.localeCompare(b.kg.title); });
        panelBody.appendChild(el("h3", null, "Papers (" + papers.length + ")"));
        var list = panelBody.appendChild(el("ul", "kg-list"));
        papers.slice(0, 100).forEach(function (paper) {
          list.appendChild(el("li")).appendChild(chip(paper, paper.kg.title));
        });
        if (papers.length > 100) list.appendChild(el("li", "kg-meta", "… and " + (papers.length - 100) + " more"));
      }
    }
    panel.hidden = false;
    panel.scrollTop = 0;
    setPanelRoom(true);
  }

  // The open panel takes the right of the window: shrink the canvas so fit() centres beside it.
  function setPanelRoom(open) {
    if (document.body.classList.contains("kg-panel-open") === open) return;
    document.body.classList.toggle("kg-panel-open", open);
    network.setSize("100%", "100%");
    network.redraw();
  }

  function select(id) {
    selected = id;
    highlight(id);
    showDetails(id);
  }

  function clearSelection() {
    selected = null;
    clearHighlight();
    panel.hidden = true;
    setPanelRoom(false);
    network.unselectAll();
  }

  // Make a node visible (re-enable its type, lower the threshold), select it and centre on it.
  function focusNode(id) {
    var node = byId.get(id);
    if (!node) return;
    if (hiddenTypes.has(node.group)) {
      hiddenTypes.delete(node.group);
      document.querySelector('.kg-toggle input[value="' + node.group + '"]').checked = true;
    }
    if (node.group !== "paper" && minPapers > 1 && node.kg.papers < minPapers) {
      minPapers = Math.max(Number(threshold.min), node.kg.papers);
      threshold.value = String(minPapers);
      thresholdValue.textContent = String(minPapers);
    }
    applyFilters();
    network.selectNodes([id]);
    select(id);
    // Show the node with its neighbourhood, zooming in no further than 1:1.
    var around = [id].concat(neighbours.get(id).map(function (link) { return link.id; }).filter(function (other) {
      return !hiddenState.get(other);
    }));
    network.fit({ nodes: around, maxZoomLevel: 1, animation: { duration: 350, easingFunction: "easeInOutQuad" } });
  }
  window.kgFocus = focusNode;

  network.on("click", function (params) {
    if (params.nodes.length) select(params.nodes[0]);
    else clearSelection();
  });
  document.getElementById("kg-panel-close").addEventListener("click", clearSelection);

  // ---- tooltips (own element, text only; vis's built-in popup is not used) ----
  var tooltip = document.getElementById("kg-tooltip");
  function fillTooltip(node) {
    var info = node.kg;
    tooltip.replaceChildren();
    if (node.group === "paper") {
      tooltip.appendChild(el("strong", null, info.title));
      var meta = paperMeta(info);
      if (meta) tooltip.appendChild(el("div", "kg-meta", meta));
      if (info.authors.length) tooltip.appendChild(el("div", "kg-meta", authorLine(info, 4)));
      if (info.abstract) tooltip.appendChild(el("div", "kg-abstract", info.abstract.length > 240 ? info.abstract.slice(0, 239) + "…" : info.abstract));
      var grouped = conceptsByType(node.id);
      TYPE_ORDER.forEach(function (group) {
        if (!grouped[group]) return;
        var line = el("div", "kg-line");
        line.appendChild(el("b", null, GROUPS[group].plural + ": "));
        var names = grouped[group].slice(0, 6).map(function (c) { return c.label; });
        line.appendChild(document.createTextNode(names.join(", ") + (grouped[group].length > 6 ? ", …" : "")));
        tooltip.appendChild(line);
      });
    } else {
      tooltip.appendChild(el("strong", null, node.label));
      tooltip.appendChild(el("div", "kg-meta", typeName(node.group) + " · " + info.papers + (info.papers === 1 ? " paper" : " papers")));
      if (info.alt_labels.length) tooltip.appendChild(el("div", "kg-meta", "Also: " + info.alt_labels.join(", ")));
    }
  }
  network.on("hoverNode", function (params) {
    fillTooltip(byId.get(params.node));
    tooltip.hidden = false;
    var box = container.getBoundingClientRect();
    var x = params.pointer.DOM.x + 14, y = params.pointer.DOM.y + 14;
    if (x + tooltip.offsetWidth > box.width) x = Math.max(0, params.pointer.DOM.x - tooltip.offsetWidth - 14);
    if (y + tooltip.offsetHeight > box.height) y = Math.max(0, params.pointer.DOM.y - tooltip.offsetHeight - 14);
    tooltip.style.left = x + "px";
    tooltip.style.top = y + "px";
  });
  network.on("blurNode", function () { tooltip.hidden = true; });
  network.on("dragStart", function () { tooltip.hidden = true; });
  network.on("zoom", function () { tooltip.hidden = true; });

  // ---- search ----
  var search = document.getElementById("kg-search");
  var results = document.getElementById("kg-results");
  var matches = [];
  var active = 0;

  function findNodes(query) {
    var q = query.trim().toLowerCase();
    if (!q) return [];
    var found = [];
    nodeList.forEach(function (node) {
      var label = node.label.toLowerCase();
      var title = (node.kg.title || "").toLowerCase();
      var rank;
      if (label === q || title === q) rank = 0;
      else if (label.indexOf(q) === 0 || title.indexOf(q) === 0) rank = 1;
      else if (label.indexOf(q) >= 0 || title.indexOf(q) >= 0) rank = 2;
      else if (node.search.indexOf(q) >= 0) rank = 3;
      else return;
      found.push({ node: node, rank: rank });
    });
    found.sort(function (a, b) {
      return a.rank - b.rank || (b.node.kg.papers || 0) - (a.node.kg.papers || 0) || a.node.label.localeCompare(b.node.label);
    });
    return found.slice(0, 12).map(function (hit) { return hit.node; });
  }
  window.kgFind = function (query) { return findNodes(query).map(function (node) { return node.id; }); };

  function renderResults() {
    results.replaceChildren();
    matches.forEach(function (node, i) {
      var item = el("li");
      item.setAttribute("role", "option");
      item.setAttribute("aria-selected", i === active ? "true" : "false");
      item.appendChild(el("span", null, node.group === "paper" ? node.kg.title : node.label));
      item.appendChild(el("span", "kg-type", typeName(node.group)));
      item.addEventListener("mousedown", function (event) {
        event.preventDefault();
        choose(node);
      });
      results.appendChild(item);
    });
    if (!matches.length && search.value.trim()) results.appendChild(el("li", "kg-meta", "No match"));
    results.hidden = !search.value.trim();
  }

  function choose(node) {
    results.hidden = true;
    search.blur();
    focusNode(node.id);
  }

  search.addEventListener("input", function () {
    matches = findNodes(search.value);
    active = 0;
    renderResults();
  });
  search.addEventListener("keydown", function (event) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (!matches.length) return;
      active = (active + (event.key === "ArrowDown" ? 1 : matches.length - 1)) % matches.length;
      renderResults();
      event.preventDefault();
    } else if (event.key === "Enter") {
      matches = findNodes(search.value);
      if (matches.length) choose(matches[Math.min(active, matches.length - 1)]);
      event.preventDefault();
    } else if (event.key === "Escape") {
      results.hidden = true;
    }
  });
  search.addEventListener("blur", function () { results.hidden = true; });

  applyFilters();
})();
