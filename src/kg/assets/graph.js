// kg graph page: regions, labels that fit, filters (type, threshold, year, venue), search,
// neighbourhood highlight, tooltips, details panel with related papers.
// Every piece of corpus text reaches the DOM through textContent only (never innerHTML),
// and links are made only for http(s) URLs.
(function () {
  "use strict";

  function readJSON(id) {
    return JSON.parse(document.getElementById(id).textContent);
  }

  var options = readJSON("kg-options");
  var GROUPS = readJSON("kg-groups");
  var DATA = readJSON("kg-data");
  // Edges arrive as [from, to, kind] numbers: places in the node list, and a place in
  // DATA.edge_kinds ([name, vis-network options that draw it], from kg.html.page.EDGE_KINDS).
  var EDGE_KINDS = DATA.edge_kinds;
  var nodeList = readJSON("kg-nodes");
  var edgeList = readJSON("kg-edges").map(function (row) {
    var kind = EDGE_KINDS[row[2]];
    return Object.assign({ from: nodeList[row[0]].id, to: nodeList[row[1]].id, kind: kind[0] }, kind[1]);
  });
  var TYPE_ORDER = Object.keys(GROUPS);
  var FADED = { background: "#e5e7eb", border: "#e5e7eb" };
  var REGIONS = DATA.regions;

  // Everything the data refers to by number: drawn nodes 0…N-1, then extras (not drawn),
  // which arrive as rows: ["paper", title, venue, year] or [type, label, papers, …alt labels].
  var refs = nodeList.concat(DATA.extra.map(function (row, i) {
    var id = "extra:" + (nodeList.length + i);
    if (row[0] === "paper") return { id: id, group: "paper", label: row[1], kg: { title: row[1], venue: row[2], year: row[3] } };
    return { id: id, group: row[0], label: row[1], kg: { papers: row[2], alt_labels: row.slice(3) } };
  }));
  var byId = new Map();
  var neighbours = new Map();
  refs.forEach(function (node, i) {
    node.ref = i;
    node.drawn = i < nodeList.length;
    byId.set(node.id, node);
    neighbours.set(node.id, []);
  });
  nodeList.forEach(function (node) {
    node.search = [node.label, node.kg.title || "", (node.kg.alt_labels || []).join(" ")].join(" ").toLowerCase();
  });
  function link(from, to, kind) {
    neighbours.get(from).push({ id: to, kind: kind, out: true });
    neighbours.get(to).push({ id: from, kind: kind, out: false });
  }
  edgeList.forEach(function (edge) {
    link(edge.from, edge.to, edge.kind);
  });
  // Links that are not drawn: broader/narrower beyond the drawn edges, concepts of a paper
  // that the page does not draw. Marked `hidden` so highlight and counts ignore them.
  DATA.hierarchy.forEach(function (pair) {
    link(refs[pair[0]].id, refs[pair[1]].id, "broader");
    neighbours.get(refs[pair[0]].id).slice(-1)[0].hidden = true;
    neighbours.get(refs[pair[1]].id).slice(-1)[0].hidden = true;
  });
  nodeList.forEach(function (node) {
    if (node.group !== "paper") return;
    var proposed = new Set(node.kg.more_proposed);
    node.kg.more.forEach(function (ref) {
      link(node.id, refs[ref].id, proposed.has(ref) ? "proposed" : "used");
      neighbours.get(node.id).slice(-1)[0].hidden = true;
      neighbours.get(refs[ref].id).slice(-1)[0].hidden = true;
    });
  });
  function drawnNeighbours(id) {
    return neighbours.get(id).filter(function (link) { return !link.hidden; });
  }

  function colorOf(node) {
    var style = options.groups[node.group] ? options.groups[node.group].color : undefined;
    if (node.group !== "paper" || !style) return style;
    // A paper: its group's borders, filled with its region's colour.
    var fill = node.kg.region >= 0 ? REGIONS[node.kg.region].color : DATA.other_color;
    return { background: fill, border: style.border, highlight: { background: fill, border: style.highlight.border }, hover: { background: fill, border: style.hover.border } };
  }

  // vis-network draws shapes only: labels are drawn by this script (see "labels" below).
  // Types whose toggle starts off (terms) start hidden: updating them after the network
  // exists would cost a synchronous redraw before the page is ready.
  var startsOff = new Set();
  document.querySelectorAll(".kg-toggle input").forEach(function (box) { if (!box.checked) startsOff.add(box.value); });
  var hiddenState = new Map();
  var nodes = new vis.DataSet(nodeList.map(function (node) {
    var copy = { id: node.id, group: node.group, size: node.size, x: node.x, y: node.y, hidden: startsOff.has(node.group) };
    hiddenState.set(node.id, copy.hidden);
    if (node.group === "paper") copy.color = colorOf(node);
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

  // A paper's concepts, drawn or not, by type: [{node, proposed}], proposed first, then by papers.
  function conceptsByType(id) {
    var grouped = {};
    neighbours.get(id).forEach(function (link) {
      var other = byId.get(link.id);
      if (other.group === "paper" || !link.out) return;
      (grouped[other.group] = grouped[other.group] || []).push({ node: other, proposed: link.kind === "proposed" });
    });
    Object.keys(grouped).forEach(function (group) {
      grouped[group].sort(function (a, b) {
        return (b.proposed - a.proposed) || (b.node.kg.papers || 0) - (a.node.kg.papers || 0) || a.node.label.localeCompare(b.node.label);
      });
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
    hexagon: function () { return svgEl("polygon", { points: "10,1.5 17.4,5.75 17.4,14.25 10,18.5 2.6,14.25 2.6,5.75" }); },
    star: function () { return svgEl("polygon", { points: "10,1.5 12.1,7.1 18,7.2 13.3,10.8 15,16.5 10,13.1 5,16.5 6.7,10.8 2,7.2 7.9,7.1" }); }
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

  // ---- filtering: type toggles, papers-per-concept threshold, years, venue ----
  var hiddenTypes = new Set();
  document.querySelectorAll(".kg-toggle input").forEach(function (box) {
    if (!box.checked) hiddenTypes.add(box.value); // types off by default (terms)
  });
  var threshold = document.getElementById("kg-threshold");
  var thresholdValue = document.getElementById("kg-threshold-value");
  var minPapers = Number(threshold.value);
  var maxPapers = minPapers;
  var paperNodes = nodeList.filter(function (node) { return node.group === "paper"; });
  nodeList.forEach(function (node) {
    if (node.group !== "paper") maxPapers = Math.max(maxPapers, node.kg.papers);
  });
  threshold.max = String(maxPapers);
  threshold.disabled = maxPapers === minPapers;

  // Years and venues come from the papers: the controls show only when there is a choice.
  var yearFrom = document.getElementById("kg-year-from");
  var yearTo = document.getElementById("kg-year-to");
  var venueSelect = document.getElementById("kg-venue");
  var years = paperNodes.map(function (node) { return node.kg.year; }).filter(function (year) { return typeof year === "number"; });
  var minYear = years.length ? Math.min.apply(null, years) : null;
  var maxYear = years.length ? Math.max.apply(null, years) : null;
  [yearFrom, yearTo].forEach(function (box) {
    box.min = String(minYear);
    box.max = String(maxYear);
  });
  yearFrom.value = String(minYear);
  yearTo.value = String(maxYear);
  document.getElementById("kg-years-box").hidden = minYear === maxYear;
  var venueCounts = new Map();
  paperNodes.forEach(function (node) {
    if (node.kg.venue) venueCounts.set(node.kg.venue, (venueCounts.get(node.kg.venue) || 0) + 1);
  });
  Array.from(venueCounts.keys()).sort(function (a, b) { return venueCounts.get(b) - venueCounts.get(a) || a.localeCompare(b); })
    .forEach(function (venue) {
      var option = el("option", null, venue + " (" + venueCounts.get(venue) + ")");
      option.value = venue;
      venueSelect.appendChild(option);
    });
  document.getElementById("kg-venue-box").hidden = venueCounts.size < 2;
  var yearRange = [minYear, maxYear];
  var venue = "";

  function paperPasses(node) {
    if (venue && node.kg.venue !== venue) return false;
    if (yearRange[0] === minYear && yearRange[1] === maxYear) return true;
    return typeof node.kg.year === "number" && node.kg.year >= yearRange[0] && node.kg.year <= yearRange[1];
  }

  function conceptPasses(node) {
    // At 1 every concept shows, even broader ones that no paper mentions directly.
    return !hiddenTypes.has(node.group) && !(minPapers > 1 && node.kg.papers < minPapers);
  }

  function applyFilters() {
    var metaFilter = venue !== "" || yearRange[0] !== minYear || yearRange[1] !== maxYear;
    var passing = new Set();
    paperNodes.forEach(function (node) { if (paperPasses(node)) passing.add(node.id); });
    var updates = [];
    var shown = {};
    var regionShown = REGIONS.map(function () { return 0; });
    nodeList.forEach(function (node) {
      var hidden;
      if (node.group === "paper") hidden = hiddenTypes.has("paper") || !passing.has(node.id);
      else {
        hidden = !conceptPasses(node);
        // Under a year or venue filter a concept shows only beside a paper that passes it.
        if (!hidden && metaFilter) {
          var papers = drawnNeighbours(node.id).filter(function (link) { return byId.get(link.id).group === "paper"; });
          hidden = papers.length > 0 && !papers.some(function (link) { return passing.has(link.id); });
        }
      }
      if (!hidden) {
        shown[node.group] = (shown[node.group] || 0) + 1;
        if (node.group === "paper" && node.kg.region >= 0) regionShown[node.kg.region] += 1;
      }
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
    document.querySelectorAll("#kg-region-list .kg-count").forEach(function (count, i) {
      count.textContent = String(regionShown[i]) + (regionShown[i] !== REGIONS[i].size ? " / " + REGIONS[i].size : "");
    });
    document.getElementById("kg-stats").textContent =
      papers.toLocaleString("en") + " papers · " + concepts.toLocaleString("en") + " concepts shown";
    if (selected !== null && hiddenState.get(selected)) clearSelection();
    regionCentres = null;
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
  function readYears() {
    var from = Number(yearFrom.value), to = Number(yearTo.value);
    if (!yearFrom.value || isNaN(from)) from = minYear;
    if (!yearTo.value || isNaN(to)) to = maxYear;
    yearRange = [Math.max(minYear, Math.min(from, to)), Math.min(maxYear, Math.max(from, to))];
    applyFilters();
  }
  yearFrom.addEventListener("input", readYears);
  yearTo.addEventListener("input", readYears);
  venueSelect.addEventListener("change", function () {
    venue = venueSelect.value;
    applyFilters();
  });

  // ---- regions legend ----
  var regionList = document.getElementById("kg-region-list");
  REGIONS.forEach(function (region, i) {
    var item = el("li", "kg-region");
    var button = el("button", "kg-region-button");
    button.type = "button";
    var swatch = el("span", "kg-swatch");
    swatch.style.background = region.color;
    button.appendChild(swatch);
    button.appendChild(el("span", "kg-region-name", region.name));
    button.appendChild(el("span", "kg-count"));
    button.addEventListener("click", function () { showRegion(i); });
    item.appendChild(button);
    regionList.appendChild(item);
  });
  document.getElementById("kg-regions").hidden = REGIONS.length === 0;

  function showRegion(i) {
    clearSelection();
    var members = paperNodes.filter(function (node) { return node.kg.region === i && !hiddenState.get(node.id); });
    var next = new Set(members.map(function (node) { return node.id; }));
    REGIONS[i].concepts.forEach(function (ref) { next.add(refs[ref].id); });
    setLit(next);
    if (members.length) fitBeside(members.map(function (node) { return node.id; }), 1, true);
  }
  window.kgShowRegion = showRegion;

  // ---- neighbourhood highlight ----
  var selected = null;
  var lit = null;  // ids highlighted (null: nothing dimmed)

  // Dim every node outside `next` (null: dim nothing), updating only nodes that change.
  function setLit(next) {
    var before = lit;
    lit = next;
    var updates = [];
    nodeList.forEach(function (node) {
      var was = before === null || before.has(node.id);
      var now = next === null || next.has(node.id);
      if (was !== now) updates.push({ id: node.id, color: now ? colorOf(node) : FADED });
    });
    if (updates.length) nodes.update(updates);
    litOrder = null;
    network.redraw();
  }

  function highlight(id) {
    var next = new Set([id]);
    drawnNeighbours(id).forEach(function (link) { next.add(link.id); });
    var node = byId.get(id);
    if (node.group === "paper") node.kg.related.forEach(function (entry) { if (entry[0] < nodeList.length) next.add(refs[entry[0]].id); });
    setLit(next);
  }

  // The lit nodes are drawn over the dimmed ones: vis-network draws in the order of
  // body.nodeIndices (a new array whenever visibility changes), so lit ids go last.
  var litOrder = null;
  network.on("beforeDrawing", function () {
    var indices = network.body.nodeIndices;
    if (lit === null || litOrder === indices) return;
    var back = [], front = [];
    indices.forEach(function (id) { (lit.has(id) ? front : back).push(id); });
    network.body.nodeIndices = litOrder = back.concat(front);
  });

  // ---- node markers: a floor on their size on screen ----
  // Sizes are in layout units: zoomed out to the overview, markers would shrink below a
  // pixel (and vanish under their border, which vis-network keeps a fixed width on screen).
  // Like the labels, each keeps a size on screen: at least DATA.min_marker.px in radius for
  // the smallest size, more for bigger ones (with the square root of the size, so they stay
  // ranked). It is set on vis-network's own node bodies before each frame, so that drawing,
  // hover and clicks all use the size seen (a DataSet update per zoom step would cost a
  // second redraw and an options pass per node).
  nodeList.forEach(function (node) {
    node.floor = DATA.min_marker.px * Math.sqrt(node.size / DATA.min_marker.size);
  });
  function screenRadius(node, scale) {
    return Math.max(node.size * scale, node.floor);
  }
  network.on("beforeDrawing", function () {
    var scale = network.getScale();
    network.body.nodeIndices.forEach(function (id) {
      var body = network.body.nodes[id], size = screenRadius(byId.get(id), scale) / scale;
      if (body.options.size !== size) {  // also when vis-network has reset it (an update)
        body.options.size = size;
        body.needsRefresh();
      }
    });
  });

  // ---- labels: as many as fit, most important first, never overlapping ----
  // Drawn on the canvas after vis-network, in screen pixels, placed greedily in priority
  // order against a grid of the boxes already placed. Zoomed out, region names and the
  // most shared concepts win; zoomed in, paper titles join. With a selection only the lit
  // neighbourhood is labelled, the selected node first.
  var FONT = options.nodes.font.face;  // the node font of kg.html.page.vis_options
  var CELL = 64;
  var MAX_TRIES = 6000;  // candidates looked at per frame (bounds the cost on big pages)
  var widths = new Map();
  var lastLabels = [];
  var regionCentres = null;

  // Importance: a concept's papers; a paper's drawn links (1 + degree).
  nodeList.forEach(function (node) {
    node.weight = node.group === "paper" ? 1 + drawnNeighbours(node.id).length : node.kg.papers;
  });
  function byWeight(a, b) { return b.weight - a.weight || (a.id < b.id ? -1 : 1); }
  var conceptOrder = nodeList.filter(function (node) { return node.group !== "paper"; }).sort(byWeight);
  var paperOrder = paperNodes.slice().sort(byWeight);

  function labelText(node) {  // papers' labels are already short titles (≤ 40 characters)
    return node.label.length > 42 ? node.label.slice(0, 41) + "…" : node.label;
  }

  function fontFor(node, strong) {
    if (node.group === "paper") return (strong ? "600 13px " : "12px ") + FONT;
    return (strong ? "700 " : "600 ") + Math.round(12 + Math.min(4, Math.log2(node.kg.papers + 1) / 2)) + "px " + FONT;
  }

  function measure(ctx, text, font) {
    var key = font + "\u0000" + text;
    var width = widths.get(key);
    if (width === undefined) {
      ctx.font = font;
      width = ctx.measureText(text).width;
      widths.set(key, width);
    }
    return width;
  }

  function computeRegionCentres() {
    var sums = REGIONS.map(function () { return [0, 0, 0]; });
    paperNodes.forEach(function (node) {
      if (node.kg.region < 0 || hiddenState.get(node.id)) return;
      var body = network.body.nodes[node.id];
      var sum = sums[node.kg.region];
      sum[0] += body.x; sum[1] += body.y; sum[2] += 1;
    });
    return sums.map(function (sum) { return sum[2] ? [sum[0] / sum[2], sum[1] / sum[2]] : null; });
  }

  function drawLabels(ctx) {
    var view = network.body.view, scale = view.scale, tx = view.translation.x, ty = view.translation.y;
    var canvas = network.canvas.frame.canvas;
    var width = canvas.clientWidth, height = canvas.clientHeight;
    var grid = new Map();
    var placed = [];
    var ratio = network.canvas.pixelRatio || 1;
    ctx.save();
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    ctx.lineJoin = "round";

    function fits(box) {
      for (var cx = Math.floor(box[0] / CELL); cx <= Math.floor((box[0] + box[2]) / CELL); cx++) {
        for (var cy = Math.floor(box[1] / CELL); cy <= Math.floor((box[1] + box[3]) / CELL); cy++) {
          var cell = grid.get(cx * 100003 + cy);
          if (!cell) continue;
          for (var i = 0; i < cell.length; i++) {
            var other = cell[i];
            if (box[0] < other[0] + other[2] && other[0] < box[0] + box[2] && box[1] < other[1] + other[3] && other[1] < box[1] + box[3]) return false;
          }
        }
      }
      return true;
    }
    function occupy(box) {
      for (var cx = Math.floor(box[0] / CELL); cx <= Math.floor((box[0] + box[2]) / CELL); cx++) {
        for (var cy = Math.floor(box[1] / CELL); cy <= Math.floor((box[1] + box[3]) / CELL); cy++) {
          var key = cx * 100003 + cy;
          (grid.get(key) || grid.set(key, []).get(key)).push(box);
        }
      }
    }
    // Place a label centred at (x, y) (its top), or failing that at the other spots offered
    // ([x, y] pairs: above the node, beside it); false when none is free.
    function place(id, text, font, size, x, y, color, halo, haloWidth, others) {
      var w = measure(ctx, text, font) + 6, h = size + 6;
      var spots = [[x, y]].concat(others || []);
      for (var s = 0; s < spots.length; s++) {
        var box = [spots[s][0] - w / 2, spots[s][1] - 2, w, h];
        if (box[0] < 0 || box[1] < 0 || box[0] + w > width || box[1] + h > height || !fits(box)) continue;
        occupy(box);
        ctx.font = font;
        ctx.lineWidth = haloWidth || 4;
        ctx.strokeStyle = halo;
        ctx.strokeText(text, spots[s][0], spots[s][1]);
        ctx.fillStyle = color;
        ctx.fillText(text, spots[s][0], spots[s][1]);
        placed.push({ id: id, text: text, x: box[0], y: box[1], w: w, h: h });
        return true;
      }
      return false;
    }
    // The floating controls cover the top left of the canvas: no label goes under them.
    var controls = document.getElementById("kg-controls").getBoundingClientRect();
    var frame = canvas.getBoundingClientRect();
    occupy([controls.left - frame.left, controls.top - frame.top, controls.width, controls.height]);

    function tryNode(node, strong) {
      if (hiddenState.get(node.id)) return false;
      var body = network.body.nodes[node.id];
      var x = body.x * scale + tx, y = body.y * scale + ty;
      if (x < -200 || y < -50 || x > width + 200 || y > height + 50) return false;
      var font = fontFor(node, strong), size = parseInt(font.match(/(\d+)px/)[1], 10), r = screenRadius(node, scale);
      var text = labelText(node), half = measure(ctx, text, font) / 2 + 3;
      return place(node.id, text, font, size, x, y + r + 3, strong ? "#111827" : "#1f2937", "rgba(255,255,255,0.92)", 4,
        [[x, y - r - size - 5], [x + r + half + 4, y - size / 2], [x - r - half - 4, y - size / 2]]);
    }

    if (lit !== null) {
      // A ring round each lit node, so that the neighbourhood stands out even zoomed far out.
      ctx.lineWidth = 2;
      lit.forEach(function (id) {
        var node = byId.get(id);
        if (!node || !node.drawn || hiddenState.get(id)) return;
        var body = network.body.nodes[id];
        var x = body.x * scale + tx, y = body.y * scale + ty;
        if (x < -20 || y < -20 || x > width + 20 || y > height + 20) return;
        var fill = colorOf(node);
        ctx.strokeStyle = id === selected ? "#111827" : (fill && fill.background) || "#374151";
        ctx.beginPath();
        ctx.arc(x, y, screenRadius(node, scale) + 3, 0, 2 * Math.PI);
        ctx.stroke();
      });
      if (selected !== null) tryNode(byId.get(selected), true);
      var tries = 0;
      for (var a = 0, b = 0; (a < conceptOrder.length || b < paperOrder.length) && tries < MAX_TRIES;) {
        var pick = b >= paperOrder.length || (a < conceptOrder.length && conceptOrder[a].weight >= paperOrder[b].weight * 3) ? conceptOrder[a++] : paperOrder[b++];
        if (lit.has(pick.id) && pick.id !== selected) { tryNode(pick, false); tries++; }
      }
    } else {
      if (selected !== null) tryNode(byId.get(selected), true);
      // Region names over the overview, at the centre of their papers.
      if (scale < 0.5 && REGIONS.length && !DATA.focus) {  // (a focus page is laid out in rings, not regions)
        regionCentres = regionCentres || computeRegionCentres();
        REGIONS.forEach(function (region, i) {
          var centre = regionCentres[i];
          if (!centre) return;
          var name = region.name.length > 48 ? region.name.slice(0, 47) + "…" : region.name;
          var font = "700 15px " + FONT, x = centre[0] * scale + tx, y = centre[1] * scale + ty - 8, half = measure(ctx, name, font) / 2;
          // Else shifted sideways (off the controls, say) or up or down.
          place("region:" + i, name, font, 15, x, y, "#0f172a", region.color, 7,
            [[x + half, y], [x - half, y], [x, y - 24], [x, y + 24], [x + half, y + 24], [x - half, y - 24]]);
        });
      }
      // Papers join the concepts as the view zooms in: their weight grows with the scale.
      // Zoomed far out they still fill the room the concepts leave, up to a label budget
      // that keeps the overview readable (about one label per 150 × 150 px).
      var paperWeight = Math.max(scale * scale * 6, 0.2);
      var budget = Math.round(width * height / 22000);
      // Zoomed out, a concept of a single paper is noise beside the regions: it waits.
      var minWeight = scale < 0.35 ? 2 : 1;
      var count = 0;
      for (var i = 0, j = 0; (i < conceptOrder.length || (paperWeight > 0 && j < paperOrder.length)) && count < MAX_TRIES; count++) {
        var takePaper = paperWeight > 0 && j < paperOrder.length && (i >= conceptOrder.length || paperOrder[j].weight * paperWeight > conceptOrder[i].weight);
        var next = takePaper ? paperOrder[j++] : conceptOrder[i++];
        if (next.id !== selected && (takePaper || next.weight >= minWeight) && tryNode(next, false) && placed.length >= budget) break;
      }
    }
    ctx.restore();
    lastLabels = placed;
  }
  network.on("afterDrawing", function (ctx) {
    var started = performance.now();
    drawLabels(ctx);
    window.kgLabelMs = performance.now() - started;  // for bench/html_page.py
  });
  // Registered after the labels: ready means drawn, labels included.
  network.on("afterDrawing", function ready() {
    if (!scriptDone) return;  // a frame drawn while this script still runs is not "ready"
    network.off("afterDrawing", ready);
    window.kgReadyAt = performance.now();
    window.kgReady = true;
    document.body.setAttribute("data-ready", "true");
    if (DATA.focus) {
      // Focus mode (kg html --focus): open on the paper, its panel shown, the whole small
      // page in view and nothing dimmed, so every related paper keeps its label.
      selected = DATA.focus;
      network.selectNodes([DATA.focus]);
      showDetails(DATA.focus);
      fitBeside(nodeList.map(function (node) { return node.id; }), 1, false);
    }
  });
  // For tests and benchmarks: the labels of the last frame, as boxes in canvas-element pixels.
  window.kgLabels = function () { return lastLabels.slice(); };

  // ---- details panel ----
  var panel = document.getElementById("kg-panel");
  var panelBody = document.getElementById("kg-panel-body");

  function chip(node, text, proposed) {
    var button = el("button", "kg-chip" + (proposed ? " kg-proposed" : "") + (node.drawn ? "" : " kg-offstage"));
    button.type = "button";
    if (proposed) button.appendChild(el("span", "kg-star", "★ "));
    button.appendChild(document.createTextNode(text || node.label));
    if (proposed) button.title = "proposed by this paper";
    else if (!node.drawn) button.title = "not drawn on this page (filtered out when it was written)";
    button.addEventListener("click", function () { focusNode(node.id); });
    return button;
  }

  // ---- result claims: a paper's claims, a dataset's or metric's leaderboard ----
  var UNITS = { "%": "%", "points": " points", "dB": " dB", "x": "×" };
  var WAYS = { higher: "higher is better", lower: "lower is better" };

  function valueText(value, unit) {
    return value + (unit && UNITS[unit] ? UNITS[unit] : "");
  }

  // The sentence with its value in a <mark> (three text nodes: nothing is parsed as HTML).
  function markedSentence(sentence, start, end) {
    var quote = el("p", "kg-sentence");
    quote.appendChild(document.createTextNode(sentence.slice(0, start)));
    quote.appendChild(el("mark", null, sentence.slice(start, end)));
    quote.appendChild(document.createTextNode(sentence.slice(end)));
    return quote;
  }

  function appendClaims(claims) {
    if (!claims || !claims.length) return;
    panelBody.appendChild(el("h3", null, "Results stated (" + claims.length + ")"));
    var list = panelBody.appendChild(el("ul", "kg-list kg-claims"));
    claims.forEach(function (claim) {
      // claim: [value, unit, kind, metric, dataset, method, proposed, score, sentence, value start, value end, baseline]
      var low = claim[7] < DATA.min_result_score;
      var item = list.appendChild(el("li", "kg-claim" + (low ? " kg-low" : "")));
      var what = [valueText(claim[0], claim[1]) + (claim[2] === "improvement" ? " gain" : ""), claim[3] || "(no metric named)"];
      if (claim[4]) what.push("on " + claim[4]);
      item.appendChild(el("div", "kg-claim-what", what.join(" ")));
      item.appendChild(el("div", "kg-meta", (claim[6] ? claim[5] : claim[5] + " (baseline)") + (claim[11] ? " over " + claim[11] : "") +
        " · score " + claim[7].toFixed(2) +
        (low ? " · below the leaderboards' threshold " + DATA.min_result_score : "")));
      item.appendChild(markedSentence(claim[8], claim[9], claim[10]));
    });
  }

  function appendLeaderboard(tables, group) {
    if (!tables || !tables.length) return;
    panelBody.appendChild(el("h3", null, "Leaderboard" + (tables.length > 1 ? "s" : "")));
    tables.forEach(function (table) {
      // table: [heading (a metric, or a dataset on a metric's panel), direction, rows]
      var box = panelBody.appendChild(el("section", "kg-board"));
      box.appendChild(el("h4", null, (group === "METRIC" ? "on " : "") + table[0]));
      box.appendChild(el("p", "kg-meta", table[1] ? WAYS[table[1]] : "direction unknown: sorted high to low"));
      var list = box.appendChild(el("ol", "kg-list kg-board-rows"));
      table[2].forEach(function (row) {
        // row: [paper, value, unit, method, proposed, year, score, sentence, value start, value end]
        var paper = refs[row[0]];
        var item = list.appendChild(el("li", "kg-board-row"));
        var line = item.appendChild(el("div", "kg-board-line"));
        line.appendChild(el("span", "kg-board-value", valueText(row[1], row[2])));
        line.appendChild(el("span", "kg-board-method", row[4] ? row[3] : row[3] + " (baseline)"));
        if (row[5]) line.appendChild(el("span", "kg-meta", String(row[5])));
        item.appendChild(chip(paper, paper.kg.title));
        item.appendChild(markedSentence(row[7], row[8], row[9]));
      });
    });
  }

  function appendChips(title, list) {
    if (!list.length) return;
    panelBody.appendChild(el("h3", null, title));
    var chips = panelBody.appendChild(el("div", "kg-chips"));
    list.forEach(function (item) { chips.appendChild(item.node ? chip(item.node, null, item.proposed) : chip(item)); });
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
      if (!node.drawn) {
        panelBody.appendChild(el("p", "kg-note", "Not drawn on this page: rebuild it with kg html --focus to see it."));
        panel.hidden = false;
        setPanelRoom(true);
        return;
      }
      if (info.authors.length) panelBody.appendChild(el("p", "kg-meta", authorLine(info, info.authors.length)));  // all the page carries (MAX_AUTHORS)
      if (info.region >= 0) {
        var regionLine = panelBody.appendChild(el("p", "kg-meta kg-region-line"));
        var swatch = regionLine.appendChild(el("span", "kg-swatch"));
        swatch.style.background = REGIONS[info.region].color;
        regionLine.appendChild(document.createTextNode("Region: " + REGIONS[info.region].name));
      }
      if (info.abstract) panelBody.appendChild(el("p", "kg-abstract", info.abstract));
      appendClaims(info.claims);
      var href = safeHref(info.url);
      if (href) {
        var anchor = el("a", null, "Open paper ↗");
        anchor.href = href;
        anchor.target = "_blank";
        anchor.rel = "noopener noreferrer";
        panelBody.appendChild(el("p")).appendChild(anchor);
      }
      if (info.related.length) {
        panelBody.appendChild(el("h3", null, "Related papers"));
        var related = panelBody.appendChild(el("ol", "kg-list kg-related"));
        info.related.forEach(function (entry) {
          var other = refs[entry[0]];
          var item = related.appendChild(el("li"));
          item.appendChild(chip(other, other.kg.title));
          var why = item.appendChild(el("div", "kg-why"));
          // entry: [paper, score, [shared concepts, specific first], cosine of the abstracts or null,
          //         [shared words and phrases], whether the similarity explains it (kg related's rule)]
          if (entry[2].length) {
            why.appendChild(el("span", "kg-meta", "shares "));
            entry[2].forEach(function (ref) { why.appendChild(chip(refs[ref])); });
          }
          var words = (entry[4] || []).map(function (word) { return "“" + word + "”"; }).join(", ");
          var bySimilarity = entry[5] === true;
          var line = bySimilarity ? "similar abstract" + (words ? ": " + words : ", no word in common")
            : (words ? "shared words: " + words : (entry[2].length ? "" : "no concept or word shared"));
          if (line) why.appendChild(el("div", "kg-meta", line));
        });
      }
      var grouped = conceptsByType(id);
      TYPE_ORDER.forEach(function (group) {
        if (grouped[group]) appendChips(GROUPS[group].plural, grouped[group]);
      });
    } else {
      panelBody.appendChild(el("h2", null, node.label));
      panelBody.appendChild(el("p", "kg-meta", info.papers + (info.papers === 1 ? " paper" : " papers")));
      if (info.alt_labels.length) panelBody.appendChild(el("p", "kg-meta", "Also: " + info.alt_labels.join(", ")));
      if (!node.drawn) panelBody.appendChild(el("p", "kg-note", "Not drawn on this page (below its papers-per-concept threshold or type filter when written)."));
      appendLeaderboard(info.leaderboard, node.group);
      var broader = [], narrower = [], papers = [];
      neighbours.get(id).forEach(function (link) {
        var other = byId.get(link.id);
        if (link.kind === "broader") (link.out ? broader : narrower).push(other);
        else if (other.group === "paper") papers.push(other);
      });
      appendChips("Broader", broader);
      appendChips("Narrower", narrower);
      if (papers.length) {
        papers.sort(function (a, b) { return (b.kg.year || 0) - (a.kg.year || 0) || a.kg.title.localeCompare(b.kg.title); });
        panelBody.appendChild(el("h3", null, "Papers (" + papers.length + (papers.length < info.papers ? " on this page, of " + info.papers : "") + ")"));
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
    setLit(null);
    panel.hidden = true;
    setPanelRoom(false);
    network.unselectAll();
  }

  // Make a node visible (re-enable its type, lower the threshold, widen years and venue),
  // select it and centre on it; a node the page does not draw just opens its panel.
  function focusNode(id, animate) {
    var node = byId.get(id);
    if (!node) return;
    if (!node.drawn) {
      showDetails(id);
      return;
    }
    if (hiddenTypes.has(node.group)) {
      hiddenTypes.delete(node.group);
      document.querySelector('.kg-toggle input[value="' + node.group + '"]').checked = true;
    }
    if (node.group !== "paper" && minPapers > 1 && node.kg.papers < minPapers) {
      minPapers = Math.max(Number(threshold.min), node.kg.papers);
      threshold.value = String(minPapers);
      thresholdValue.textContent = String(minPapers);
    }
    if (node.group === "paper" && !paperPasses(node)) {
      venue = "";
      venueSelect.value = "";
      yearRange = [minYear, maxYear];
      yearFrom.value = String(minYear);
      yearTo.value = String(maxYear);
    }
    applyFilters();
    if (hiddenState.get(id)) {  // a concept hidden by a year or venue filter: panel only
      showDetails(id);
      return;
    }
    network.selectNodes([id]);
    select(id);
    // Show the node with its neighbourhood (and a paper's related papers), zooming in no
    // further than 1:1.
    var around = [id].concat(drawnNeighbours(id).map(function (link) { return link.id; }));
    if (node.group === "paper") node.kg.related.forEach(function (entry) { if (entry[0] < nodeList.length) around.push(refs[entry[0]].id); });
    around = around.filter(function (other) { return !hiddenState.get(other); });
    fitBeside(around, 1, animate !== false);
  }
  window.kgFocus = focusNode;

  // Like network.fit, but into the part of the canvas the floating controls leave free
  // (fit() would centre nodes under them), zooming in no further than `maxScale`.
  function fitBeside(ids, maxScale, animate) {
    var points = network.getPositions(ids);
    var xs = [], ys = [];
    ids.forEach(function (id) {
      var r = byId.get(id).size;  // in layout units (the floor on screen would vary with the zoom)
      xs.push(points[id].x - r, points[id].x + r);
      ys.push(points[id].y - r, points[id].y + r);
    });
    var canvas = network.canvas.frame.canvas;
    var controls = document.getElementById("kg-controls").getBoundingClientRect();
    var left = Math.min(controls.right - canvas.getBoundingClientRect().left + 12, canvas.clientWidth / 2);
    var room = { w: Math.max(canvas.clientWidth - left - 40, 100), h: Math.max(canvas.clientHeight - 60, 100) };
    var w = Math.max.apply(null, xs) - Math.min.apply(null, xs), h = Math.max.apply(null, ys) - Math.min.apply(null, ys);
    var scale = Math.min(maxScale, room.w / Math.max(w, 1), room.h / Math.max(h, 1));
    // Labels hang below and beside nodes: leave them a little room.
    scale *= 0.85;
    var centre = { x: (Math.max.apply(null, xs) + Math.min.apply(null, xs)) / 2, y: (Math.max.apply(null, ys) + Math.min.apply(null, ys)) / 2 };
    network.moveTo({ position: centre, scale: scale, offset: { x: left / 2, y: 0 }, animation: animate ? { duration: 350, easingFunction: "easeInOutQuad" } : false });
  }

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
        var names = grouped[group].slice(0, 6).map(function (c) { return (c.proposed ? "★ " : "") + c.node.label; });
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
  var scriptDone = true;
})();
