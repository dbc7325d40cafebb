"""BIO tags over sub-word tokens: what the transformer recognizer learns and how its output becomes spans.

Shared by training (`kg.training.transformer`, torch) and inference (`kg.extract.components.recognizer`,
ONNX Runtime), so that the spans scored on dev while training are the spans kg extracts. Needs numpy
and a `tokenizers.Tokenizer` (kg's copy of the MiniLM tokenizer), nothing else.

* **Tags**: "O", then "B-T" and "I-T" for each type T, in `LABELS` order (`bio_tags`). Every sub-word
  token overlapping a gold span is tagged: its first token B, the others I (`encode`).
* **Windows**: a text longer than the model's window is read in windows of `window` tokens ([CLS] and
  [SEP] included), consecutive ones sharing `stride` tokens (the Hugging Face tokenizers' sense of
  stride); each token takes its probabilities from the window where it sits farthest from an edge
  (`windows`, `stitch`).
* **Spans** (`decode`): runs of tokens whose most probable tag has one type (a B starts a new run),
  widened to whole words (the tokenizer's pre-tokenised words: "CNN ##s" is one word, "state - of" three)
  and trimmed of edge tokens without a letter or digit. A span's confidence is the mean probability of
  its type (B plus I) over its tokens.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tokenizers import Tokenizer

LABELS = ("METHOD", "TASK", "METRIC", "DATASET", "HARDWARE", "TERM")  # kg's types, in training's order
CLS_ID, SEP_ID = 101, 102  # MiniLM's (BERT's uncased) special tokens
IGNORED = -100  # the tag of [CLS], [SEP] and padding: no loss


@dataclass(frozen=True)
class TokenizedText:
    """A text's sub-word tokens (no special tokens): ids, character offsets, word of each token."""

    ids: np.ndarray  # int64, one per token
    offsets: tuple[tuple[int, int], ...]
    words: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.offsets)


@dataclass(frozen=True)
class TaggedSpan:
    start: int  # character offsets into the text
    end: int
    label: str
    confidence: float  # mean probability of `label` over the span's tokens


def bio_tags(labels: Sequence[str] = LABELS) -> tuple[str, ...]:
    return ("O", *(f"{prefix}-{label}" for label in labels for prefix in ("B", "I")))


def load_tokenizer(path: str | Path) -> Tokenizer:
    """The tokenizer in a tokenizer.json, without the truncation and padding it was saved with
    (MiniLM's cuts at 128 tokens: windows do the cutting here)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def tokenize(tokenizer: Tokenizer, text: str) -> TokenizedText:
    """`text`'s tokens without [CLS]/[SEP] (from a `load_tokenizer` tokenizer: no truncation, no padding)."""
    encoding = tokenizer.encode(text, add_special_tokens=False)
    words = tuple(-1 if w is None else w for w in encoding.word_ids)
    return TokenizedText(np.asarray(encoding.ids, dtype=np.int64), tuple(encoding.offsets), words)


def encode(tokens: TokenizedText, spans: Iterable[tuple[int, int, str]], labels: Sequence[str] = LABELS) -> list[int]:
    """The tag index of every token, for non-overlapping character spans (start, end, label);
    a token already tagged by an earlier span keeps its tag."""
    tags = [0] * len(tokens)
    index = {label: i for i, label in enumerate(labels)}
    for start, end, label in sorted(spans):
        if label not in index:
            continue
        first = True
        for i, (t_start, t_end) in enumerate(tokens.offsets):
            if t_start < end and start < t_end and tags[i] == 0:
                tags[i] = 1 + 2 * index[label] + (0 if first else 1)
                first = False
    return tags


def windows(n_tokens: int, window: int, stride: int) -> list[tuple[int, int]]:
    """Token ranges [start, end) covering `n_tokens` tokens, each at most `window` - 2 long (room for
    [CLS] and [SEP]), consecutive ones sharing `stride` tokens; none for no tokens."""
    inner = window - 2
    if not 0 <= stride < inner:
        raise ValueError(f"stride {stride} must be at least 0 and less than the window's {inner} tokens")
    found: list[tuple[int, int]] = []
    start = 0
    while start < n_tokens:
        end = min(start + inner, n_tokens)
        found.append((start, end))
        if end == n_tokens:
            break
        start = end - stride
    return found


def window_ids(tokens: TokenizedText, span: tuple[int, int]) -> np.ndarray:
    """The model's input ids for one window: [CLS] tokens [SEP]."""
    start, end = span
    return np.concatenate(([CLS_ID], tokens.ids[start:end], [SEP_ID])).astype(np.int64)


def stitch(n_tokens: int, spans: Sequence[tuple[int, int]], probabilities: Sequence[np.ndarray]) -> np.ndarray:
    """One row of tag probabilities per token, from each window's rows (without [CLS]/[SEP]): a token
    takes the window where it has the most context on its nearer side (the earlier on a tie)."""
    if not spans:
        return np.zeros((0, 0), dtype=np.float32)
    out = np.zeros((n_tokens, probabilities[0].shape[-1]), dtype=np.float32)
    best = np.full(n_tokens, -1)
    for (start, end), rows in zip(spans, probabilities, strict=True):
        for i in range(start, end):
            room = min(i - start, end - 1 - i)
            if room > best[i]:
                best[i] = room
                out[i] = rows[i - start]
    return out


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return np.asarray(shifted / shifted.sum(axis=-1, keepdims=True), dtype=np.float32)


def decode(tokens: TokenizedText, probabilities: np.ndarray, text: str, labels: Sequence[str] = LABELS) -> list[TaggedSpan]:
    """Spans from per-token tag probabilities (`stitch`'s rows): runs of one type, widened to whole
    words, trimmed of tokens with no letter or digit at either end; a span that would overlap the one
    before it joins it."""
    if not len(tokens):
        return []
    tags = probabilities.argmax(axis=1)
    runs: list[tuple[int, int, int]] = []  # token start, token end, type index
    for i, tag in enumerate(tags):
        if tag == 0:
            continue
        kind, inside = divmod(int(tag) - 1, 2)
        if inside and runs and runs[-1][1] == i and runs[-1][2] == kind:
            runs[-1] = (runs[-1][0], i + 1, kind)
        else:
            runs.append((i, i + 1, kind))
    words = tokens.words
    merged: list[list[int]] = []
    for start, end, kind in runs:
        while start > 0 and words[start - 1] == words[start] != -1:
            start -= 1
        while end < len(words) and words[end] == words[end - 1] != -1:
            end += 1
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end, kind])
    found = []
    for start, end, kind in merged:
        while start < end and not _has_alnum(text, tokens.offsets[start]):
            start += 1
        while end > start and not _has_alnum(text, tokens.offsets[end - 1]):
            end -= 1
        if start == end:
            continue
        confidence = float(probabilities[start:end, 1 + 2 * kind : 3 + 2 * kind].sum(axis=1).mean())
        found.append(TaggedSpan(tokens.offsets[start][0], tokens.offsets[end - 1][1], labels[kind], round(confidence, 4)))
    return found


def _has_alnum(text: str, offsets: tuple[int, int]) -> bool:
    return any(ch.isalnum() for ch in text[offsets[0] : offsets[1]])


WindowRunner = Callable[[list[np.ndarray]], list[np.ndarray]]  # input ids of windows → tag probabilities of each (rows as ids)


@dataclass(frozen=True)
class Tagged:
    """What the recognizer read in one text: its spans, and every sub-word token's character offsets and
    probability of each type (B plus I), from which `confidence` scores any span."""

    spans: tuple[TaggedSpan, ...]
    offsets: np.ndarray  # (tokens, 2) int: start, end
    types: np.ndarray  # (tokens, labels) float32
    labels: tuple[str, ...]

    def confidence(self, start: int, end: int, label: str) -> float:
        """The mean probability of `label` over the tokens overlapping characters [start, end) (0 if none)."""
        if label not in self.labels or not len(self.offsets):
            return 0.0
        inside = (self.offsets[:, 0] < end) & (start < self.offsets[:, 1])
        return round(float(self.types[inside, self.labels.index(label)].mean()), 4) if inside.any() else 0.0


def tag_texts(texts: Sequence[str], tokenizer: Tokenizer, run: WindowRunner, *, window: int, stride: int, labels: Sequence[str] = LABELS) -> list[Tagged]:
    """What the recognizer reads in each text: every window of every text given to `run` at once (which
    may batch them as it likes), probabilities stitched per text and decoded."""
    tokenized = [tokenize(tokenizer, text) for text in texts]
    spans = [windows(len(tokens), window, stride) for tokens in tokenized]
    inputs = [window_ids(tokens, span) for tokens, text_spans in zip(tokenized, spans, strict=True) for span in text_spans]
    outputs = iter(run(inputs) if inputs else [])
    found = []
    for text, tokens, text_spans in zip(texts, tokenized, spans, strict=True):
        rows = [next(outputs)[1:-1] for _ in text_spans]  # without [CLS] and [SEP]
        probabilities = stitch(len(tokens), text_spans, rows) if text_spans else np.zeros((0, 1 + 2 * len(labels)), dtype=np.float32)
        types = probabilities[:, 1::2] + probabilities[:, 2::2]
        offsets = np.asarray(tokens.offsets, dtype=np.int64).reshape(-1, 2)
        found.append(Tagged(tuple(decode(tokens, probabilities, text, labels)), offsets, types, tuple(labels)))
    return found


class OnnxTagger:
    """A transformer recognizer's model folder (`kg train --arch transformer`) on ONNX Runtime: the int8
    model and its tokenizer, the labels, window and stride from its meta.json.

    One thread (kg runs one extraction process per core) and one window per run: the int8 model
    quantises activations with one scale over its whole input, so in a batch a window's tags would
    depend on the other windows in it, and a paper's mentions on the papers beside it (the extraction
    cache must not depend on that)."""

    def __init__(self, folder: str | Path) -> None:
        import onnxruntime

        folder = Path(folder)
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        self.labels: tuple[str, ...] = tuple(meta["labels"]["ner"])
        self.window, self.stride = int(meta["window"]), int(meta["stride"])
        self.tokenizer = load_tokenizer(folder / meta.get("tokenizer", "tokenizer.json"))
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: no notices on the user's terminal
        self.session = onnxruntime.InferenceSession(str(folder / meta.get("model", "model-int8.onnx")), options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}

    def run(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        out = []
        for ids in inputs:
            row = ids[None, :]
            feed = {"input_ids": row, "attention_mask": np.ones_like(row), "token_type_ids": np.zeros_like(row)}
            logits = self.session.run(None, {name: value for name, value in feed.items() if name in self.inputs})[0]
            out.append(softmax(logits[0]))
        return out

    def tag(self, texts: Sequence[str]) -> list[Tagged]:
        return tag_texts(texts, self.tokenizer, self.run, window=self.window, stride=self.stride, labels=self.labels)
