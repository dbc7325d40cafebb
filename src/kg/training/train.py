"""Training kg's entity recognizer (`kg train`): gold JSONL → spaCy NER → a model folder.

Gold files are `kg eval`'s JSON Lines (``{"id", "text", "entities": [{"start", "end",
"label"}]}``). Labels map to kg types (Method, Task, Metric, Material→DATASET,
OtherScientificTerm→TERM; kg's own type names are accepted too); others (Generic) are
dropped. The recognizer is a spaCy ``tok2vec`` + ``ner`` pipeline on spaCy's plain English
tokenizer, trained from ``kg/assets/recognizer.cfg`` with a fixed seed, so the same data and
options give the same weights.

* **Overlaps**: NER needs flat spans; of overlapping gold spans the longest is kept (ties: the
  earlier, then the label name), so a nested span never suppresses its container.
* **Pre-tokenised text** (SciERC joins tokens by single spaces: "( CNNs )") is also added
  as a detokenised copy ("(CNNs)"), so the model sees ordinary prose too.
* **Dev**: early stopping and model selection use the ``--dev`` files, plus any
  ``--hold-out FILE=PCT`` share of a gold file (chosen by a hash of each document's id);
  without either, 20 % of every gold file is held out. Dev documents never train.

The folder written is a spaCy pipeline (``spacy.load`` reads it) with ``model-card.md`` and
kg's training record in ``meta.json`` (``kg_training``: data, seed, steps, dev scores).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from kg import __version__ as kg_version
from kg.errors import GoldFormatError, InputNotFound, OutputError
from kg.ingest.sources import display_name
from kg.training.evaluate import REPORTED_TYPES, GoldDoc, load_gold, score
from kg.util.atomic import check_output_dir, output_errors
from kg.util.places import output_folder, refuse_cache_as_output

if TYPE_CHECKING:
    from spacy.language import Language

CONFIG = "recognizer.cfg"  # in kg/assets/
CARD_FILE = "model-card.md"
DEFAULT_HOLD_OUT = 20  # percent of every gold file held out when no dev data is given
SPLIT_SALT = "kg-ner-v1:"
LABELS = ("METHOD", "TASK", "METRIC", "DATASET", "HARDWARE", "TERM")
# Trained weights are kept; the rest of spaCy's output (model-last, corpora) is not.
_NO_SPACE_BEFORE = {",", ".", ")", ";", ":", "?", "!", "]", "'s", "n't", "%"}
_NO_SPACE_AFTER = {"(", "["}
_ALNUM = re.compile(r"[A-Za-z0-9]")

TrainProgress = Callable[[int, int, float | None], None]  # (step, max steps, dev F-score or None)


@dataclass(frozen=True)
class TrainingData:
    train: tuple[GoldDoc, ...]
    dev: tuple[GoldDoc, ...]
    sources: tuple[dict[str, Any], ...] = ()  # per file: path, sha256, documents, held out


@dataclass(frozen=True)
class TrainResult:
    model_dir: str
    steps: int
    seconds: float
    size_bytes: int
    dev_scores: dict[str, Any] = field(default_factory=dict)


def held_out(doc_id: str, percent: int) -> bool:
    """Whether a document goes to dev: a stable hash of its id, so the split never changes."""
    return int(hashlib.sha1(f"{SPLIT_SALT}{doc_id}".encode()).hexdigest()[:8], 16) % 100 < percent


def _sha256(path: str | os.PathLike[str]) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def gather(gold: Sequence[str], *, dev: Sequence[str] = (), hold_out: dict[str, int] | None = None) -> TrainingData:
    """Train and dev documents from gold files; `hold_out` maps a gold file to the percent of
    its documents that go to dev instead. Errors name file:line (as `kg eval`)."""
    hold_out = dict(hold_out or {})
    unknown = set(hold_out) - set(gold)
    if unknown:
        raise InputNotFound("held-out share given for a file that is not a gold input", path=sorted(unknown)[0])
    if not dev and not hold_out:
        hold_out = {path: DEFAULT_HOLD_OUT for path in gold}
    train: list[GoldDoc] = []
    dev_docs: list[GoldDoc] = []
    sources = []
    for path in gold:
        docs = load_gold(path)
        percent = hold_out.get(path, 0)
        kept = [d for d in docs if not held_out(d.id, percent)] if percent else docs
        train.extend(kept)
        dev_docs.extend(d for d in docs if percent and held_out(d.id, percent))
        sources.append({"path": os.path.basename(path), "sha256": _sha256(path), "documents": len(docs), "held_out": len(docs) - len(kept), "role": "train"})
    for path in dev:
        docs = load_gold(path)
        dev_docs.extend(docs)
        sources.append({"path": os.path.basename(path), "sha256": _sha256(path), "documents": len(docs), "held_out": 0, "role": "dev"})
    if not train:
        raise GoldFormatError("no training documents", path=display_name(str(gold[0])) if gold else "", line=None)
    if not dev_docs:
        raise GoldFormatError("no dev documents: none given and none held out", path=display_name(str(gold[0])), line=None)
    return TrainingData(tuple(train), tuple(dev_docs), tuple(sources))


def flat_spans(spans: Iterable[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Non-overlapping spans: the longest of each overlap wins (then the earlier, then the label)."""
    kept: list[tuple[int, int, str]] = []
    for span in sorted(set(spans), key=lambda s: (-(s[1] - s[0]), s[0], s[2])):
        if all(span[1] <= k[0] or k[1] <= span[0] for k in kept):
            kept.append(span)
    return sorted(kept)


def pretokenised(text: str) -> bool:
    """SciERC-style text: punctuation set off by spaces ("( CNNs )", "al. ,")."""
    return text.count(" , ") + text.count(" . ") + text.count(" ( ") >= 2


def detokenise(doc: GoldDoc) -> GoldDoc:
    """The same document as ordinary prose ("( CNNs )" → "(CNNs)", "a - b" → "a-b"), offsets remapped."""
    tokens = doc.text.split(" ")
    old_starts, position = [], 0
    for token in tokens:
        old_starts.append(position)
        position += len(token) + 1
    pieces, new_starts, length = [], [], 0
    for i, token in enumerate(tokens):
        space = i > 0
        if i > 0:
            previous = tokens[i - 1]
            if token in _NO_SPACE_BEFORE or previous in _NO_SPACE_AFTER:
                space = False
            if token == "-" and i + 1 < len(tokens) and _ALNUM.search(previous[-1:]) and _ALNUM.search(tokens[i + 1][:1]):
                space = False
            if previous == "-" and i >= 2 and _ALNUM.search(tokens[i - 2][-1:]) and _ALNUM.search(token[:1]):
                space = False
        if space:
            pieces.append(" ")
            length += 1
        new_starts.append(length)
        pieces.append(token)
        length += len(token)

    def moved(offset: int, is_end: bool) -> int:
        at = offset - 1 if is_end else offset
        lo, hi = 0, len(old_starts) - 1
        while lo < hi:  # the token holding character `at`
            mid = (lo + hi + 1) // 2
            if old_starts[mid] <= at:
                lo = mid
            else:
                hi = mid - 1
        within = min(at - old_starts[lo], max(len(tokens[lo]) - 1, 0))
        return new_starts[lo] + within + (1 if is_end else 0)

    spans = frozenset((moved(s, False), moved(e, True), label) for s, e, label in doc.spans)
    return GoldDoc(f"{doc.id}#detok", "".join(pieces), spans)


def to_docbin(docs: Iterable[GoldDoc], nlp: Any) -> tuple[Any, Counter[str]]:
    """A spaCy DocBin of `docs` (entities as flat spans); counts of what alignment dropped."""
    from spacy.tokens import DocBin

    stats: Counter[str] = Counter()
    binary = DocBin(store_user_data=False)
    for gold in docs:
        doc = nlp.make_doc(gold.text)
        entities = []
        flat = flat_spans(s for s in gold.spans if s[2] in LABELS)
        stats["overlapping"] += len({s for s in gold.spans if s[2] in LABELS}) - len(flat)
        for start, end, label in flat:
            span = doc.char_span(start, end, label=label, alignment_mode="contract")
            if span is None or not len(span):
                stats["unaligned"] += 1
                continue
            entities.append(span)
        doc.ents = entities
        stats["spans"] += len(entities)
        binary.add(doc)
    return binary, stats


def config_text() -> str:
    return (resources.files("kg") / "assets" / CONFIG).read_text(encoding="utf-8")


def train(
    data: TrainingData,
    output: str | os.PathLike[str],
    *,
    max_steps: int | None = None,
    seed: int = 0,
    progress: TrainProgress | None = None,
) -> TrainResult:
    """Train the recognizer on `data` and write it to `output`: a new or empty folder, or a model
    kg train wrote, whose model files are replaced only when training ends (`check_output`)."""
    import time

    import spacy
    from spacy.training.initialize import init_nlp
    from spacy.training.loop import train as train_loop
    from spacy.util import load_config_from_str

    started = time.perf_counter()
    _register_logger()
    _PROGRESS["step"] = 0
    check_output(output)
    target = Path(os.path.abspath(output))  # ``-o .``: made beside the folder, by its name
    blank = spacy.blank("en")
    with output_errors(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        workspace = tempfile.TemporaryDirectory(prefix=".kg-train-", dir=target.parent)
    with workspace as work:
        work_dir = Path(work)
        train_docs = list(data.train) + [detokenise(d) for d in data.train if pretokenised(d.text)]
        for name, docs in (("train", train_docs), ("dev", data.dev)):
            binary, _ = to_docbin(docs, blank)
            with output_errors(target):
                binary.to_disk(work_dir / f"{name}.spacy")
        overrides: dict[str, Any] = {
            "paths.train": str(work_dir / "train.spacy"),
            "paths.dev": str(work_dir / "dev.spacy"),
            "system.seed": seed,
        }
        if max_steps is not None:
            overrides["training.max_steps"] = max_steps
        config = load_config_from_str(config_text(), overrides=overrides, interpolate=False)
        config["training"]["logger"] = {"@loggers": "kg.progress.v1"}
        _PROGRESS["callback"] = progress
        _PROGRESS["max_steps"] = int(config["training"]["max_steps"])
        nlp = init_nlp(config, use_gpu=-1)
        with output_errors(target):
            (work_dir / "runs").mkdir()
        with open(os.devnull, "w") as quiet:
            train_loop(nlp, work_dir / "runs", use_gpu=-1, stdout=quiet, stderr=quiet)
        best = work_dir / "runs" / "model-best"
        steps = _PROGRESS.get("step", 0)
        model = spacy.load(best)
        dev_report = score(data.dev, [predict(model, d.text) for d in data.dev], gold_file="dev")
        scores = dev_report.to_dict()
        _forget_paths(best / "config.cfg")
        meta_path = best / "meta.json"
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        meta["name"] = "kg_recognizer"
        meta["version"] = kg_version
        meta["kg_training"] = {
            "sources": list(data.sources),
            "train_documents": len(data.train),
            "detokenised_copies": len(train_docs) - len(data.train),
            "dev_documents": len(data.dev),
            "seed": seed,
            "max_steps": _PROGRESS["max_steps"],
            "steps": steps,
            "dev": {"strict": scores["strict"], "partial": scores["partial"]},
        }
        with output_errors(target):
            meta_path.write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
            (best / CARD_FILE).write_text(model_card(meta), encoding="utf-8")
            staged = target.parent / f".{target.name}.new-{os.getpid()}"
            shutil.rmtree(staged, ignore_errors=True)
            shutil.copytree(best, staged)
    put_in_place(staged, target)
    size = sum(f.stat().st_size for f in target.rglob("*") if f.is_file())
    return TrainResult(str(Path(output)), steps, round(time.perf_counter() - started, 1), size, {"strict": scores["strict"], "partial": scores["partial"]})


def check_output(output: str | os.PathLike[str]) -> None:
    """Raise an `OutputError` (`OutputPermissionDenied` for lack of permission) if `output` cannot
    become the model folder: a file, under a file, in a folder that cannot be written; a folder
    of kg's own (a build's output folder, its builds or store, a cache folder); a folder that
    holds anything and is no model kg train wrote (`replaceable`): its files would be lost.
    Creates nothing, so `kg train` runs it before reading any gold file."""
    from kg.extract.cache_location import resolve_cache_dir

    target = Path(output)
    with output_errors(target):
        if target.exists() and not target.is_dir():
            raise OutputError(f"{target}: exists and is not a folder")
        check_output_dir(target)
        location = resolve_cache_dir()
        assert location is not None  # asked without no_cache
        refuse_cache_as_output(target, location.path, location.why, instead=_ELSEWHERE)
        if target.is_dir():
            if output_folder(target):
                raise OutputError(f"cannot write {target}: it is the output folder of a kg build; {_ELSEWHERE}")
            if not replaceable(target):
                raise OutputError(f"cannot write {target}: it holds files and is no model kg train wrote (no meta.json of one), so they would be lost; {_ELSEWHERE}")
            check_output_dir(Path(os.path.abspath(target)).parent)  # the new model is made beside it


_ELSEWHERE = "name a new or empty folder, or a model folder kg train wrote"
# What a model folder holds besides one folder per pipeline component (spaCy's to_disk, then kg's card).
# A transformer's folder: its int8 model and tokenizer (kg.training.transformer), the card and meta.json.
_MODEL_FILES = frozenset({"config.cfg", "meta.json", "tokenizer", "vocab", CARD_FILE, "model-int8.onnx", "tokenizer.json"})


def _kg_meta(folder: Path) -> dict[str, Any] | None:
    """The meta.json of a model kg train wrote in `folder` (with its ``kg_training`` record); None if there is none."""
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) and isinstance(meta.get("kg_training"), dict) else None


def replaceable(folder: str | os.PathLike[str]) -> bool:
    """Whether `kg train -o folder` may replace what `folder` holds: nothing, or a model kg train wrote."""
    path = Path(folder)
    return not any(path.iterdir()) or _kg_meta(path) is not None


def _model_entries(folder: Path) -> set[str]:
    """The entries of the model in `folder` that kg train wrote (not files put beside them)."""
    meta = _kg_meta(folder) or {}
    components = [name for key in ("pipeline", "components") for name in meta.get(key, ()) if isinstance(name, str)]
    return {name for name in (*_MODEL_FILES, *components) if (folder / name).exists() or (folder / name).is_symlink()}


def put_in_place(staged: Path, target: Path) -> None:
    """Make the model in `staged` the folder `target`: renamed there when there is none; else
    (an empty folder, or a model kg train wrote: checked again now) the old model's entries are
    moved out, the new ones in, and the old ones removed. Entries kg did not write stay, and the
    folder stays the same folder (``-o .`` keeps the folder kg runs in)."""
    with output_errors(target):
        if not target.exists():
            staged.rename(target)
            return
        if not target.is_dir() or not replaceable(target):
            raise OutputError(f"cannot write {target}: it no longer holds a model kg train wrote; the new model is in {staged}")
        old = target.parent / f".{target.name}.old-{os.getpid()}"
        shutil.rmtree(old, ignore_errors=True)
        old.mkdir()
        for name in _model_entries(target):
            (target / name).rename(old / name)
        for entry in sorted(staged.iterdir()):
            entry.rename(target / entry.name)
        staged.rmdir()
        shutil.rmtree(old, ignore_errors=True)


def _forget_paths(config_file: Path) -> None:
    """The saved config names no local path (the training files lived in a temporary folder)."""
    from spacy.util import load_config

    config = load_config(config_file, interpolate=False)
    for name in ("train", "dev"):
        config["paths"][name] = None
    config.to_disk(config_file)


def predict(model: Any, text: str) -> set[tuple[int, int, str]]:
    """The recognizer's spans on one text (for scoring)."""
    return {(e.start_char, e.end_char, e.label_) for e in model(text).ents}


def model_card(meta: dict[str, Any]) -> str:
    """A short model card: what the model is, what it was trained on, how well it does on dev."""
    training = meta.get("kg_training", {})
    lines = [
        f"# {meta.get('name', 'kg_recognizer')} {meta.get('version', '')}".rstrip(),
        "",
        "An entity recognizer for kg (spaCy tok2vec + NER, CPU), trained with kg.training (the train command).",
        f"Labels: {', '.join(meta.get('labels', {}).get('ner', LABELS))}. spaCy {meta.get('spacy_version', '')}.",
        "",
        "## Training data",
        "",
        "| file | role | documents | held out to dev | sha256 |",
        "|---|---|---|---|---|",
    ]
    for source in training.get("sources", []):
        lines.append(f"| {source['path']} | {source['role']} | {source['documents']} | {source['held_out']} | {source['sha256'][:12]} |")
    lines += [
        "",
        f"{training.get('train_documents', 0)} training documents (+{training.get('detokenised_copies', 0)} detokenised copies of "
        f"pre-tokenised ones), {training.get('dev_documents', 0)} dev documents; seed {training.get('seed')}, "
        f"{training.get('steps')} steps (at most {training.get('max_steps')}).",
        "",
        "## Scores on the dev documents (the recognizer alone)",
        "",
        "| type | strict P | R | F1 | partial P | R | F1 |",
        "|---|---|---|---|---|---|---|",
    ]
    dev = training.get("dev", {})
    for label in (*REPORTED_TYPES, "micro"):
        strict, partial = dev.get("strict", {}).get(label), dev.get("partial", {}).get(label)
        if strict and partial:
            lines.append(
                f"| {label} | {strict['precision']:.3f} | {strict['recall']:.3f} | {strict['f1']:.3f} | "
                f"{partial['precision']:.3f} | {partial['recall']:.3f} | {partial['f1']:.3f} |"
            )
    lines += ["", "micro: over METHOD, TASK, METRIC and DATASET (TERM is reported apart).", ""]
    return "\n".join(lines)


# -- spaCy training logger: reports steps to kg's progress callback instead of printing --------

_PROGRESS: dict[str, Any] = {}


def _register_logger() -> None:
    from spacy.util import registry

    if "kg.progress.v1" in registry.loggers.get_all():
        return

    @registry.loggers("kg.progress.v1")  # type: ignore[untyped-decorator]  # catalogue registries are not typed
    def progress_logger() -> Callable[..., tuple[Callable[[dict[str, Any] | None], None], Callable[[], None]]]:
        """spaCy's logger protocol: a set-up function returning (log a step, finish)."""

        def setup(nlp: Language, stdout: IO[str] | None = None, stderr: IO[str] | None = None) -> tuple[Callable[[dict[str, Any] | None], None], Callable[[], None]]:
            def log_step(info: dict[str, Any] | None) -> None:
                # Called after every step: with the scores on evaluation steps, else with None.
                _PROGRESS["step"] = min(_PROGRESS.get("step", 0) + 1, _PROGRESS.get("max_steps") or 1 << 30)
                callback = _PROGRESS.get("callback")
                if callback is not None:
                    callback(_PROGRESS["step"], _PROGRESS.get("max_steps", 0), info.get("score") if info else None)

            return log_step, lambda: None

        return setup
