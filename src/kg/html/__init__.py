"""The interactive HTML view of the graph: one self-contained page that works offline.

* `kg.html.select`: what to draw (types, papers-per-concept threshold, size cap, focus mode);
* `kg.html.regions`: communities of papers, their names, and the layout that keeps them together;
* `kg.html.page`: the page data, the template and the file.
"""

from kg.html.page import (
    GROUPS,
    HTML_FILE,
    HtmlSummary,
    render_html,
    safe_url,
    script_json,
    short_title,
    vis_options,
    write_html,
)
from kg.html.regions import Region, find_regions, layout
from kg.html.select import AUTO_MAX_NODES, Selection, concept_paper_counts, find_paper, select_subgraph

__all__ = [
    "AUTO_MAX_NODES",
    "GROUPS",
    "HTML_FILE",
    "HtmlSummary",
    "Region",
    "Selection",
    "concept_paper_counts",
    "find_paper",
    "find_regions",
    "layout",
    "render_html",
    "safe_url",
    "script_json",
    "select_subgraph",
    "short_title",
    "vis_options",
    "write_html",
]
