"""Fixtures shared by the test modules (no test module imports another; tests/test_layout.py checks).

Autouse: ``private_cache`` — KG_CACHE_DIR (and XDG_CACHE_HOME) point at a fresh folder for
every test, set in ``os.environ`` so subprocesses inherit it: no test reads or writes the real
user cache, and no test sees another's cache entries (a session-wide folder is set first, for
the session fixtures).

Session-scoped, built once:

* ``project_root``, ``seeds`` — the repository and its sample abstracts;
* ``shared(relative)`` — a path under ``../shared/`` (corpus, eval), or the test is skipped;
* ``seeds_build`` / ``seeds_out`` — `kg build seeds/` run once: the folder is **read-only**
  (its files are fingerprinted and checked unchanged when the session ends); a test that
  writes there (a SPARQL store cache, a page) works on ``copy_seeds_out(dest)`` instead;
* ``seeds_graph`` — ``kg.load(seeds_out)``, also checked unchanged at the end;
* ``sample_graph()`` — a hand-made graph for RDF/SPARQL/export/serve: 3 papers, 7 concepts of
  every type, a proposed concept, a broader link, awkward ids and titles; a fresh copy per call
  (``sample_dir``: it saved in tmp_path, for `--graph DIR`);
* ``sparql_backends`` — both SPARQL backends over one ``sample_graph()``; ``plain_rows(result)``
  turns a result's rows into plain strings;
* ``make_graph()`` — a hand-made graph for the HTML page: 3 papers, 8 concepts, one paper and
  one concept carrying XSS payloads (``evil_abstract``); a fresh copy per call;
* ``nlp`` — kg's cached spaCy pipeline;
* ``torch_stand_ins`` — a subprocess environment in which importing torch (or sentence-transformers) shows;
* ``shacl_shapes``, ``ontology`` — schemas/shapes.ttl and schemas/kg.ttl parsed with rdflib.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

# Untrusted corpus text: every way we know to make a page run code.
EVIL_ABSTRACT = (
    "We </script><script>window.__pwned = 'script'</script> study "
    "<img src=x onerror=\"window.__pwned = 'img'\"> and "
    "<a href=\"javascript:window.__pwned = 'link'\">links</a> \u2028 <!-- <svg onload=window.__pwned=1>"
)


# ---- the opt-in legs -------------------------------------------------------------------------


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A torch test asked for (``pytest -m torch``) fails, not skips, where torch is missing."""
    if item.get_closest_marker("torch") is not None:
        from importlib.util import find_spec

        from kg.related_work import embed
        from kg.training.transformer import TRAIN_MODULES

        if not embed.available("torch") or not all(find_spec(module) for module in TRAIN_MODULES):
            pytest.fail(
                "the torch tests need the embed-torch and train extras: pip install -e '.[test,embed-torch,train]' "
                "(where pip would pick a CUDA build of torch, install a CPU build of torch first)",
                pytrace=False,
            )


# ---- the repository and ../shared ----------------------------------------------------------


@pytest.fixture(scope="session")
def project_root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def seeds() -> Path:
    """seeds/: the 38 ICML 2025 sample abstracts."""
    folder = ROOT / "seeds"
    if not folder.is_dir():
        pytest.skip("seeds/ not present")
    return folder


@pytest.fixture(scope="session")
def shared() -> Callable[[str], Path]:
    """`shared("eval/scierc_dev.jsonl")`: that path under ../shared/, or skip the test when it is absent."""

    def locate(relative: str) -> Path:
        path = SHARED / relative
        if not path.exists():
            pytest.skip(f"../shared/{relative} is not here")
        return path

    return locate


# ---- the cache: never the user's ------------------------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def session_cache(tmp_path_factory) -> Iterator[Path]:
    """The cache of the session fixtures (seeds_build …), set before any of them runs."""
    with pytest.MonkeyPatch.context() as patch:
        folder = tmp_path_factory.mktemp("session-cache")
        patch.setenv("KG_CACHE_DIR", str(folder / "kg"))
        patch.setenv("XDG_CACHE_HOME", str(folder / "xdg"))
        yield folder / "kg"


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch) -> Path:
    """This test's own cache folder (KG_CACHE_DIR); XDG_CACHE_HOME beside it, so the default
    location, were KG_CACHE_DIR unset, is not the user's either."""
    folder = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("KG_CACHE_DIR", str(folder / "kg"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder / "xdg"))
    return folder / "kg"


@pytest.fixture
def torch_stand_ins(tmp_path_factory) -> dict[str, str]:
    """An environment for a subprocess with empty stand-ins for torch, sentence_transformers and
    transformers first on its path: importing one shows in sys.modules (and fails on use),
    whether or not the real packages are installed."""
    folder = tmp_path_factory.mktemp("stand-ins")
    for module in ("torch", "sentence_transformers", "transformers"):
        (folder / module).mkdir()
        (folder / module / "__init__.py").write_text("", encoding="utf-8")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH")) if p)}


# ---- `kg build seeds/`, once ---------------------------------------------------------------


@dataclass(frozen=True)
class SeedsBuild:
    out: Path
    summary: object  # kg.build.BuildSummary


def fingerprint(folder: Path) -> dict[str, str]:
    """Relative path → SHA-256 of every file under `folder` (folders count as their contents)."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="session")
def seeds_build(seeds: Path, tmp_path_factory) -> Iterator[SeedsBuild]:
    """`kg build seeds/ -o OUT` (library call, default options: the session's KG_CACHE_DIR), once per session."""
    from kg.builder import build

    out = tmp_path_factory.mktemp("seeds-out")
    summary = build([str(seeds)], out)
    before = fingerprint(out)
    yield SeedsBuild(out, summary)
    after = fingerprint(out)
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    if changed:
        pytest.fail(f"a test wrote into the shared seeds output (use copy_seeds_out): {changed}")


@pytest.fixture(scope="session")
def seeds_out(seeds_build: SeedsBuild) -> Path:
    """The folder `kg build seeds/` wrote. Read-only: copy it (copy_seeds_out) before writing."""
    return seeds_build.out


@pytest.fixture(scope="session")
def copy_seeds_out(seeds_out: Path) -> Callable[[Path], Path]:
    """`copy_seeds_out(dest)`: a private copy of the seeds output at dest/out, free to modify."""

    def copy(dest: Path) -> Path:
        return Path(shutil.copytree(seeds_out, dest / "out"))

    return copy


@pytest.fixture(scope="session")
def seeds_graph(seeds_out: Path):
    """kg.load(seeds_out), shared: do not modify it (checked at the end of the session)."""
    from kg.graph import load

    def state(graph) -> tuple:
        return graph.graph, dict(graph.nodes(data=True)), {(u, v): d for u, v, d in graph.edges(data=True)}

    graph = load(seeds_out)
    yield graph
    if state(graph) != state(load(seeds_out)):
        pytest.fail("a test modified the shared seeds graph (load your own copy to change it)")


# ---- hand-made graphs ----------------------------------------------------------------------


def _rdf_sample_graph():
    from kg.graph import build_graph
    from kg.model import Concept, Mention, Paper, PaperEntities, Result

    def mention(start: int, end: int, text: str, label: str, concept: str, role: str = "used", score: float = 0.9) -> Mention:
        return Mention(start=start, end=end, text=text, label=label, concept=concept, role=role, source="vocab", score=score, sent_start=0, sent_end=end)

    a1 = "We propose HippoRAG for question answering on MuSiQue, trained on A100 GPUs."
    a2 = "We evaluate BERT and HippoRAG on MuSiQue and report F1 of 61.2, 3.5 points over BERT."
    a3 = "Transformers for question answering."
    papers = [
        Paper(id="p1", title="HippoRAG: memory", abstract=a1, authors=("Ada Lovelace", "Alan Turing"), year=2024, venue="NeurIPS", url="https://example.org/p1", doi="10.1/abc"),
        Paper(id="p2", title='A study of <b>BERT</b> & "friends"', abstract=a2, authors=("Alan Turing",), year=2025, venue="ICML", keywords=("nlp",)),
        Paper(id="p3/x y", title="Transformers", abstract=a3, title_derived=True),
    ]
    concepts = [
        Concept(id="method/hipporag", type="METHOD", pref_label="HippoRAG", broader=("method/rag",)),
        Concept(id="method/rag", type="METHOD", pref_label="retrieval-augmented generation", alt_labels=("RAG",)),
        Concept(id="method/bert", type="METHOD", pref_label="BERT", alt_labels=("Bidirectional Encoder Representations from Transformers",)),
        Concept(id="dataset/musique", type="DATASET", pref_label="MuSiQue"),
        Concept(id="task/qa", type="TASK", pref_label="question answering"),
        Concept(id="metric/f1", type="METRIC", pref_label="F1"),
        Concept(id="hardware/a100", type="HARDWARE", pref_label="A100"),
    ]
    entities = [
        PaperEntities("p1", (
            mention(11, 19, "HippoRAG", "METHOD", "method/hipporag", "proposed"),
            mention(24, 42, "question answering", "TASK", "task/qa"),
            mention(46, 53, "MuSiQue", "DATASET", "dataset/musique"),
            mention(66, 70, "A100", "HARDWARE", "hardware/a100", score=0.8),
        )),
        PaperEntities("p2", (
            mention(12, 16, "BERT", "METHOD", "method/bert"),
            mention(21, 29, "HippoRAG", "METHOD", "method/hipporag", score=0.7),
            mention(33, 40, "MuSiQue", "DATASET", "dataset/musique"),
            mention(52, 54, "F1", "METRIC", "metric/f1"),
        )),
        PaperEntities("p3/x y", (mention(17, 35, "question answering", "TASK", "task/qa"),)),
    ]
    # p2's two claims: 61.2 F1 on MuSiQue (linked to concepts) and a gain over BERT (words only, a low score)
    claim = dict(sent_start=0, sent_end=len(a2), task=None, task_concept=None)
    results = [(
        Result(paper_id="p2", start=58, end=62, value="61.2", number=61.2, unit=None, kind="absolute", metric="F1", metric_concept="metric/f1",
               dataset="MuSiQue", dataset_concept="dataset/musique", method="HippoRAG", method_concept="method/hipporag", proposed=True,
               baseline=None, baseline_concept=None, score=0.8, **claim),
        Result(paper_id="p2", start=64, end=67, value="3.5", number=3.5, unit="points", kind="improvement", metric=None, metric_concept=None,
               dataset=None, dataset_concept=None, method="(proposed)", method_concept=None, proposed=True, baseline="BERT",
               baseline_concept="method/bert", score=0.3, **claim),
    )]  # fmt: skip
    return build_graph(papers, entities, concepts, meta={"pipeline": {"name": "kg-extract", "version": "1.0"}}, results=results)


def _html_sample_graph():
    from kg.graph import build_graph
    from kg.model import Concept, Mention, Paper, PaperEntities

    def mention(concept: str, label: str, role: str = "used") -> Mention:
        return Mention(0, 1, "x", label, concept, role, "vocab", 0.9, 0, 1)  # type: ignore[arg-type]

    papers = [
        Paper("p1", "Graph Neural Networks for Molecular Property Prediction at Scale", "We propose GNN-X for molecules on GPUs.",
              authors=("Ada Lovelace", "Alan Turing"), year=2025, venue="ICML", url="https://example.org/p1"),
        Paper("p2", "Retrieval-Augmented Generation with Long Contexts", "RAG evaluated on ImageNet with BLEU.",
              authors=("Grace Hopper",), year=2024, venue="NeurIPS", url="javascript:window.__pwned='url'"),
        Paper("p3", "<img src=x onerror=\"window.__pwned='title'\">Evil paper", EVIL_ABSTRACT,
              authors=("Mallory <b onmouseover=window.__pwned=1>",), year=2023, venue="<i>Venue</i>", url="https://ok.example/p3"),
    ]
    concepts = [
        Concept("method/gnn", "METHOD", "graph neural network", ("GNN",)),
        Concept("method/message-passing", "METHOD", "message passing", broader=("method/gnn",)),
        Concept("method/rag", "METHOD", "retrieval-augmented generation", ("RAG",)),
        Concept("method/evil", "METHOD", "<script>window.__pwned='label'</script>"),
        Concept("dataset/imagenet", "DATASET", "ImageNet"),
        Concept("metric/bleu", "METRIC", "BLEU"),
        Concept("task/molecule", "TASK", "molecular property prediction"),
        Concept("hardware/gpu", "HARDWARE", "GPU"),
    ]
    entities = [
        PaperEntities("p1", (mention("method/gnn", "METHOD", "proposed"), mention("method/message-passing", "METHOD"),
                             mention("task/molecule", "TASK"), mention("hardware/gpu", "HARDWARE"))),
        PaperEntities("p2", (mention("method/rag", "METHOD", "proposed"), mention("dataset/imagenet", "DATASET"),
                             mention("metric/bleu", "METRIC"), mention("method/gnn", "METHOD"))),
        PaperEntities("p3", (mention("method/evil", "METHOD"), mention("dataset/imagenet", "DATASET"), mention("method/gnn", "METHOD"))),
    ]
    return build_graph(papers, entities, concepts)


@pytest.fixture(scope="session")
def sparql_backends(sample_graph) -> dict:
    """Both SPARQL backends over one ``sample_graph()``: {"rdflib": …, "oxigraph": …}."""
    from kg.sparql import engine as sparql

    graph = sample_graph()
    return {name: sparql.open_backend(graph, backend=name) for name in ("rdflib", "oxigraph")}


@pytest.fixture(scope="session")
def plain_rows() -> Callable:
    """`plain_rows(result)`: a SPARQL result's rows as tuples of lexical values (None if unbound)."""

    def plain(result) -> list[tuple[str | None, ...]]:
        return [tuple(None if term is None else term.value for term in row) for row in result.rows]

    return plain


@pytest.fixture(scope="session")
def sample_graph() -> Callable:
    """`sample_graph()`: a new copy of the hand-made RDF/SPARQL graph (10 nodes, 10 edges, 322 triples; p2 states two results)."""
    return _rdf_sample_graph


@pytest.fixture
def sample_dir(sample_graph, tmp_path: Path) -> Path:
    """tmp_path holding sample_graph() saved as graph.json (what `--graph DIR` reads)."""
    from kg.graph import save

    save(sample_graph(), tmp_path)
    return tmp_path


def _two_fields_graph():
    """12 papers in two fields (graphs: g1–g6, vision: v1–v6), each paper mentioning two of
    its field's three concepts, and all of them one hub concept ("deep learning")."""
    from kg.graph import build_graph
    from kg.model import Concept, Mention, Paper, PaperEntities

    def mention(concept: str) -> Mention:
        return Mention(0, 1, "x", "METHOD", concept, "used", "vocab", 0.9, 0, 1)  # type: ignore[arg-type]

    fields = {"g": ["method/gnn", "method/message-passing", "task/link-prediction"],
              "v": ["method/cnn", "dataset/imagenet", "task/segmentation"]}  # fmt: skip
    papers, entities = [], []
    for field, concepts in fields.items():
        for i in range(6):
            key = f"{field}{i + 1}"
            papers.append(Paper(key, f"Paper {key}", "An abstract.", year=2018 + i, venue="ICML" if i % 2 else "NeurIPS"))
            mine = [concepts[i % 3], concepts[(i + 1) % 3], "method/deep-learning"]
            entities.append(PaperEntities(key, tuple(mention(c) for c in mine)))
    labels = {"method/gnn": "graph neural network", "method/message-passing": "message passing", "task/link-prediction": "link prediction",
              "method/cnn": "convolutional network", "dataset/imagenet": "ImageNet", "task/segmentation": "segmentation",
              "method/deep-learning": "deep learning"}  # fmt: skip
    types = {"method": "METHOD", "dataset": "DATASET", "task": "TASK"}
    concepts = [Concept(cid, types[cid.split("/")[0]], label) for cid, label in labels.items()]  # type: ignore[arg-type]
    return build_graph(papers, entities, concepts)


@pytest.fixture(scope="session")
def two_fields() -> Callable:
    """`two_fields()`: a new copy of a 12-paper graph in two fields (graphs g1–g6, vision v1–v6;
    years 2018 + i, ICML when i is odd) sharing one hub concept: regions, layout, filters."""
    return _two_fields_graph


@pytest.fixture(scope="session")
def make_graph() -> Callable:
    """`make_graph()`: a new copy of the hand-made HTML graph (3 papers, 8 concepts of all five types)."""
    return _html_sample_graph


@pytest.fixture(scope="session")
def evil_abstract() -> str:
    """The abstract of make_graph()'s paper p3: script, img onerror, javascript: link, U+2028, svg onload."""
    return EVIL_ABSTRACT


# ---- spaCy and the schemas -----------------------------------------------------------------


@pytest.fixture(scope="session")
def nlp():
    from kg.extract.pipeline import load_pipeline

    return load_pipeline()


def _schema_graph(name: str):
    import rdflib

    return rdflib.Graph().parse(data=(files("kg.schemas") / name).read_text(encoding="utf-8"), format="turtle")


@pytest.fixture(scope="session")
def shacl_shapes():
    """schemas/shapes.ttl (SHACL) as an rdflib Graph; do not modify."""
    return _schema_graph("shapes.ttl")


@pytest.fixture(scope="session")
def ontology():
    """schemas/kg.ttl (the kg ontology) as an rdflib Graph; do not modify."""
    return _schema_graph("kg.ttl")


# ---- a small real disk ------------------------------------------------------------------------


def _can_mount() -> bool:
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    probe = Path("/tmp/kg-mount-probe")
    probe.mkdir(exist_ok=True)
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(probe)], capture_output=True).returncode == 0
    if ok:
        subprocess.run(["umount", str(probe)], check=False)
    return ok


@pytest.fixture
def tmpfs(tmp_path):
    """`tmpfs(kilobytes)`: a fresh tmpfs of that size, unmounted after the test (skipped where
    this process may not mount one: it needs root)."""
    if not _can_mount():
        pytest.skip("needs root and a mountable tmpfs")
    mounted: list[Path] = []

    def make(kilobytes: int) -> Path:
        point = tmp_path / f"disk{kilobytes}k-{len(mounted)}"
        point.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kilobytes}k", "tmpfs", str(point)], check=True)
        mounted.append(point)
        return point

    yield make
    for point in mounted:
        subprocess.run(["umount", "-l", str(point)], check=False)
