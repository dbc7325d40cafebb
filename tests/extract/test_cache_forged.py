"""Cached rows are checked against the paper they claim to describe (issue 23): a well-shaped
row with its checksum recomputed is recomputed when it does not fit its abstract, and no
cached value can crash a build or put a concept into the graph."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kg.extract.runner as runner
from kg.builder import build
from kg.extract.cache import CACHE_FILE, fits_text
from kg.graph import load
from kg.ingest import read_corpus
from kg.ingest.titles import read_title
from kg.model import MENTION_SOURCES
from kg.related_work import embed
from kg.text.vocab import load_vocabulary

TEXT = "We train BERT on SQuAD. It works."
MENTION = {
    "start": 9, "end": 13, "text": "BERT", "label": "METHOD", "key": "bert", "vocab": None, "role": "used", "source": "vocab",
    "score": 0.9, "sent_start": 0, "sent_end": 23, "confidence": 1.0, "where": "abstract",
    "model_confidence": None,
}


def fits(mention: dict, definitions: list | None = None) -> bool:
    return fits_text({"mentions": [mention], "definitions": definitions or [], "claims": []}, TEXT, sources=MENTION_SOURCES, vocabulary=load_vocabulary())


@pytest.mark.parametrize(("change", "ok"), [
    ({}, True),
    ({"vocab": "method/bert"}, True),
    ({"start": 40, "end": 44}, False),  # outside the abstract
    ({"text": "GPT-4"}, False),  # not the slice it claims
    ({"vocab": "method/forged"}, False),  # no such curated concept
    ({"vocab": ""}, False),
    ({"source": "oracle"}, False),
    ({"score": 1e9}, False),
    ({"score": -0.5}, False),
    ({"confidence": 0.2}, True),
    ({"confidence": 1.5}, False),  # a forged vote weight
    ({"confidence": -1.0}, False),
    ({"sent_start": 10}, False),  # the sentence does not hold the mention
    ({"sent_end": 99}, False),
    ({"key": ""}, False),
    ({"key": "zzevilkey concept"}, False),  # a forged key merged 16 unrelated mentions
    ({"vocab": "dataset/squad"}, False),  # a real concept of another type (made altLabels of ImageNet)
    ({"model_confidence": 0.75}, True),
    ({"model_confidence": 1.5}, False),
    ({"model_confidence": -0.1}, False),
])
def test_a_mention_must_fit_its_abstract(change: dict, ok: bool) -> None:
    assert fits({**MENTION, **change}) is ok


def test_definitions_must_come_from_the_text() -> None:
    assert fits(MENTION, [{"short": "BERT", "long": "train", "label": "METHOD"}])
    assert fits({**MENTION, "key": "train"}, [{"short": "BERT", "long": "trains", "label": "METHOD"}])  # an acronym's key is its long form's
    assert not fits(MENTION, [{"short": "", "long": "x", "label": "METHOD"}])
    assert not fits(MENTION, [{"short": "B", "long": "x" * 100, "label": "METHOD"}])
    assert not fits(MENTION, [{"short": "BERT", "long": "Zzevil Long Form", "label": "METHOD"}])  # in no word of the abstract
    assert not fits(MENTION, [{"short": "GPT", "long": "train", "label": "METHOD"}])


def test_a_span_given_twice_is_forged() -> None:
    """One mention duplicated 5,000 times gave `mentions 5007, weight 3787.6`."""
    value = {"mentions": [MENTION, MENTION], "definitions": [], "claims": []}
    assert not fits_text(value, TEXT, sources=MENTION_SOURCES, vocabulary=load_vocabulary())


@pytest.fixture(scope="module")
def seed_papers(seeds):
    return read_corpus([str(seeds)]).papers[:6]


@pytest.fixture(scope="module")
def fresh(seed_papers):
    extractions, _ = runner.run_extraction(seed_papers, cache_dir=None)
    return extractions


def _forge(cache_file, mutate) -> dict[str, dict]:
    """Apply `mutate(payload dict, rng)` to every row, with the checksum recomputed; returns
    the forged values by key (rows `mutate` left alone are not in it)."""
    rng = random.Random(7)
    changed = {}
    with sqlite3.connect(cache_file) as db:
        for key, payload in db.execute("SELECT key, payload FROM extraction").fetchall():
            value = json.loads(payload)
            if mutate(value, rng):
                forged = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
                db.execute("UPDATE extraction SET checksum = ?, payload = ? WHERE key = ?", (hashlib.sha256(forged.encode()).hexdigest(), forged, key))
                changed[key] = value
    db.close()
    return changed


FIELDS = {
    "start": st.integers(-5, 5000), "end": st.integers(-5, 5000), "text": st.text(max_size=12),
    "vocab": st.one_of(st.none(), st.text(max_size=20), st.sampled_from(["method/", "dataset/imagenet", "x/y/z", "method/bert"])),
    "source": st.sampled_from([*MENTION_SOURCES, "oracle", ""]), "score": st.floats(-1e9, 1e9, allow_nan=False),
    "confidence": st.floats(-1e9, 1e9, allow_nan=False),
    "sent_start": st.integers(-5, 5000), "sent_end": st.integers(-5, 5000), "key": st.text(max_size=12),
    "label": st.sampled_from(["METHOD", "DATASET", "TASK"]), "role": st.sampled_from(["used", "proposed"]),
    "model_confidence": st.one_of(st.none(), st.floats(-1e9, 1e9, allow_nan=False)),
}


@pytest.fixture(scope="module")
def filled_cache(seed_papers, fresh, tmp_path_factory):
    """A cache folder holding the six papers' rows (their extraction: `fresh`): each example forges a copy of it."""
    folder = tmp_path_factory.mktemp("filled")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "extract_papers", lambda papers, **options: list(fresh))
        runner.run_extraction(seed_papers, cache_dir=folder)
    return folder


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.sampled_from(sorted(FIELDS)), st.data()), min_size=1, max_size=3))
def test_forged_rows_never_crash_and_never_change_the_result(seed_papers, fresh, filled_cache, tmp_path_factory, edits) -> None:
    """The forged-cache fuzzer: random well-shaped edits to one mention of every cached row,
    checksums recomputed. Exactly the rows that do not fit their paper are refused and
    recomputed (their paper's extraction is the fresh one); the rest are used, and resolving
    the corpus over them never fails."""
    from kg.concepts.find import resolve_corpus
    from kg.extract.cache import content_key, valid_extraction
    from kg.extract.pipeline import pipeline_version
    from kg.text.vocab import load_vocabulary

    folder = Path(shutil.copytree(filled_cache, tmp_path_factory.mktemp("forged") / "cache"))
    values = [(name, data.draw(FIELDS[name])) for name, data in edits]

    def mutate(value: dict, rng: random.Random) -> bool:
        if not value["mentions"]:
            return False
        mention = value["mentions"][rng.randrange(len(value["mentions"]))]
        before = dict(mention)
        for name, new in values:
            mention[name] = new
        return mention != before

    forged = _forge(folder / CACHE_FILE, mutate)
    known = {paper.id: extraction for paper, extraction in zip(seed_papers, fresh, strict=True)}
    asked: list[str] = []

    def extract_again(papers, **options):  # spaCy's extraction of these papers, known from `fresh`
        asked.extend(paper.id for paper in papers)
        return [known[paper.id] for paper in papers]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "extract_papers", extract_again)
        extractions, stats = runner.run_extraction(seed_papers, cache_dir=folder)
    vocabulary = load_vocabulary()
    version = pipeline_version()
    refused = []
    for paper, extraction, original in zip(seed_papers, extractions, fresh, strict=True):
        value = forged.get(content_key(paper.abstract, version))
        if value is None:
            assert extraction == original
        elif not (valid_extraction(value) and fits_text(value, paper.abstract, sources=MENTION_SOURCES, vocabulary=vocabulary)):
            refused.append(paper.id)
            assert extraction == original
        else:
            assert extraction != original  # used as forged: harmless by construction
    assert stats.corrupt == len(refused) and asked == refused  # exactly the refused rows computed again
    resolve_corpus(seed_papers, extractions)  # never raises on what the cache let through


def test_a_forged_vocab_id_or_outside_mention_is_recomputed_in_a_build(seeds, tmp_path, capsys, private_cache) -> None:
    """A forged `vocab` crashed every build with an IndexError; a forged mention outside the
    abstract put a concept into the graph, the Turtle and the page."""
    from kg.cli import main

    out = tmp_path / "out"
    corpus = read_corpus([str(seeds)])
    papers = corpus.papers[:6]
    source = tmp_path / "six.jsonl"
    source.write_text("".join(json.dumps({"id": p.id, "title": p.title, "abstract": p.abstract}) + "\n" for p in papers), encoding="utf-8")
    build([str(source)], out)
    clean = {n: d.get("label") for n, d in load(out).nodes(data=True)}

    def mutate(value: dict, rng: random.Random) -> bool:
        value["mentions"].append({**MENTION, "start": 10**6, "end": 10**6 + 8, "text": "Forgedum", "key": "forgedum"})
        if value["mentions"]:
            value["mentions"][0]["vocab"] = "method/"
        return True

    # One row per text: each abstract, and each title the file gives (kg's derived ones, now given) that is read.
    rows = len(papers) + sum(read_title(paper) is not None for paper in read_corpus([str(source)]).papers)
    assert len(_forge(private_cache / CACHE_FILE, mutate)) == rows == 8
    assert main(["build", str(source), "-o", str(out)]) in (None, 0)
    err = capsys.readouterr().out
    assert "8  cache rows were damaged or did not fit their paper: computed again" in err
    rebuilt = {n: d.get("label") for n, d in load(out).nodes(data=True)}
    assert rebuilt == clean and "Forgedum" not in (out / "graph.ttl").read_text(encoding="utf-8")


def test_embedding_rows_must_be_finite_unit_vectors(tmp_path) -> None:
    """Forged rows of 3e38 floats printed `similarity 228483372426096432492808180462098841600.000`."""
    from kg.model import Paper

    papers = [Paper(id=f"p{i}", title=f"T{i}", abstract=f"Abstract {i}.") for i in range(3)]
    rng = np.random.default_rng(0)

    def encode(texts: list[str]) -> np.ndarray:
        vectors = rng.normal(size=(len(texts), embed.DIMENSIONS)).astype("<f4")
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    first = embed.embed_papers(papers, cache_dir=tmp_path, encode=encode)
    assert first.encoded == 3
    import base64

    forged = {
        "huge": np.full(embed.DIMENSIONS, 3e38, dtype="<f4"),
        "short": np.ones(embed.DIMENSIONS // 2, dtype="<f4"),
        "not unit": np.ones(embed.DIMENSIONS, dtype="<f4"),
    }
    with sqlite3.connect(tmp_path / embed.CACHE_FILE) as db:
        keys = [row[0] for row in db.execute("SELECT key FROM extraction ORDER BY key")]
        for key, vector in zip(keys, forged.values(), strict=True):
            payload = json.dumps(base64.b64encode(vector.tobytes()).decode("ascii"), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            db.execute("UPDATE extraction SET checksum = ?, payload = ? WHERE key = ?", (hashlib.sha256(payload.encode()).hexdigest(), payload, key))
    db.close()
    again = embed.embed_papers(papers, cache_dir=tmp_path, encode=encode)
    assert (again.encoded, again.recomputed) == (3, 3)
    assert embed.unit_rows(again.vectors)
    embed.save(again, tmp_path)
    assert embed.load(tmp_path, again.ids) is not None
    matrix = np.load(tmp_path / embed.EMBED_FILE)
    matrix[1] = 3e38
    np.save(tmp_path / embed.EMBED_FILE, matrix)
    assert embed.load(tmp_path, again.ids) is None  # a forged embeddings.npy is not used
