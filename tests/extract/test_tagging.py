"""kg.extract.tagging: BIO tags from gold spans, windows and their stitching, spans from tag
probabilities (runs of one type, whole words, clean edges), with exact expected values on small
texts and kg's own MiniLM tokenizer."""

from __future__ import annotations

import numpy as np
import pytest

from kg.extract.tagging import (
    CLS_ID,
    SEP_ID,
    TaggedSpan,
    bio_tags,
    decode,
    encode,
    load_tokenizer,
    stitch,
    tag_texts,
    tokenize,
    window_ids,
    windows,
)
from kg.training.transformer import shipped_tokenizer

TAGS = bio_tags()


@pytest.fixture(scope="module")
def tokenizer():
    return load_tokenizer(shipped_tokenizer())


def rows(tags: list[str], p: float = 0.9) -> np.ndarray:
    """Tag probabilities: `p` on each token's tag, the rest spread evenly."""
    out = np.full((len(tags), len(TAGS)), (1 - p) / (len(TAGS) - 1), dtype=np.float32)
    for i, tag in enumerate(tags):
        out[i, TAGS.index(tag)] = p
    return out


def test_the_tags_are_o_then_b_and_i_of_each_type():
    assert TAGS[:5] == ("O", "B-METHOD", "I-METHOD", "B-TASK", "I-TASK") and len(TAGS) == 13


def test_the_tokenizer_neither_truncates_nor_pads(tokenizer):
    text = "word " * 300  # MiniLM's tokenizer.json cuts at 128 and pads to 128
    assert len(tokenize(tokenizer, text)) == 300
    assert len(tokenize(tokenizer, "a b")) == 2
    assert len(tokenize(tokenizer, "")) == 0


def test_every_token_of_a_span_is_tagged_b_then_i(tokenizer):
    text = "Convolutional networks (CNNs) beat HMMs on TIMIT speech recognition."
    tokens = tokenize(tokenizer, text)
    tags = encode(tokens, [(0, 22, "METHOD"), (24, 28, "METHOD"), (43, 48, "DATASET"), (49, 67, "TASK")])
    named = [TAGS[t] for t in tags]
    # con ##vo ##lu ##tion ##al networks ( cnn ##s ) beat hmm ##s on tim ##it speech recognition .
    assert named == [
        "B-METHOD", "I-METHOD", "I-METHOD", "I-METHOD", "I-METHOD", "I-METHOD", "O", "B-METHOD", "I-METHOD", "O",
        "O", "O", "O", "O", "B-DATASET", "I-DATASET", "B-TASK", "I-TASK", "O",
    ]  # fmt: skip


def test_a_span_inside_a_token_tags_the_token_and_unknown_labels_are_ignored(tokenizer):
    tokens = tokenize(tokenizer, "We fine-tune BERT on GLUE.")
    assert [TAGS[t] for t in encode(tokens, [(14, 16, "METHOD"), (21, 25, "Generic")])] == ["O", "O", "O", "O", "B-METHOD", "O", "O", "O"]


@pytest.mark.parametrize(
    ("n", "window", "stride", "expected"),
    [
        (0, 8, 2, []),
        (5, 8, 2, [(0, 5)]),
        (6, 8, 2, [(0, 6)]),
        (7, 8, 2, [(0, 6), (4, 7)]),
        (14, 8, 2, [(0, 6), (4, 10), (8, 14)]),
        (15, 8, 2, [(0, 6), (4, 10), (8, 14), (12, 15)]),
        (10, 8, 0, [(0, 6), (6, 10)]),
    ],
)
def test_windows_cover_the_tokens_and_share_the_stride(n, window, stride, expected):
    assert windows(n, window, stride) == expected


@pytest.mark.parametrize("stride", [-1, 6, 7])
def test_a_stride_that_leaves_no_progress_is_refused(stride):
    with pytest.raises(ValueError, match="stride"):
        windows(20, 8, stride)


def test_a_window_is_framed_by_cls_and_sep(tokenizer):
    tokens = tokenize(tokenizer, "We fine-tune BERT on GLUE.")
    ids = window_ids(tokens, (2, 5))
    assert ids.tolist() == [CLS_ID, *tokens.ids[2:5].tolist(), SEP_ID]


def test_each_token_takes_the_window_where_it_is_farthest_from_an_edge():
    spans = [(0, 6), (4, 10)]
    first = np.arange(6, dtype=np.float32)[:, None] * np.ones((1, 2), dtype=np.float32)  # rows 0..5
    second = 100 + np.arange(6, dtype=np.float32)[:, None] * np.ones((1, 2), dtype=np.float32)  # rows 100..105 for tokens 4..9
    stitched = stitch(10, spans, [first, second])
    # token 4: room 1 in the first window (5 - 4), 0 in the second: first; token 5: 0 and 1: second
    assert stitched[:, 0].tolist() == [0, 1, 2, 3, 4, 101, 102, 103, 104, 105]


def test_a_tie_goes_to_the_earlier_window():
    stitched = stitch(7, [(0, 5), (2, 7)], [np.zeros((5, 1), np.float32), np.ones((5, 1), np.float32)])
    # token 3: room 1 in both windows
    assert stitched[:, 0].tolist() == [0, 0, 0, 0, 1, 1, 1]


def test_runs_of_one_type_become_spans_with_their_confidence(tokenizer):
    text = "Convolutional networks (CNNs) beat HMMs on TIMIT speech recognition."
    tokens = tokenize(tokenizer, text)
    tags = ["B-METHOD", "I-METHOD", "I-METHOD", "I-METHOD", "I-METHOD", "I-METHOD", "O", "B-METHOD", "I-METHOD", "O",
            "O", "B-METHOD", "I-METHOD", "O", "B-DATASET", "I-DATASET", "B-TASK", "I-TASK", "O"]  # fmt: skip
    found = decode(tokens, rows(tags), text)
    assert [(text[s.start : s.end], s.label) for s in found] == [
        ("Convolutional networks", "METHOD"), ("CNNs", "METHOD"), ("HMMs", "METHOD"), ("TIMIT", "DATASET"), ("speech recognition", "TASK")
    ]  # fmt: skip
    assert all(s.confidence == pytest.approx(0.9 + 0.1 / 12, abs=1e-4) for s in found)  # B and I of the type count


def test_spans_widen_to_whole_words_and_lose_edges_without_letters(tokenizer):
    text = "Convolutional networks (CNNs) beat HMMs on TIMIT speech recognition."
    tokens = tokenize(tokenizer, text)
    tags = ["O"] * len(tokens)
    tags[2] = "B-METHOD"  # ##lu: the whole word "Convolutional"
    tags[6:9] = ["I-METHOD", "I-METHOD", "O"]  # "( cnn": the bracket goes, ##s joins
    tags[15] = "I-DATASET"  # ##it of TIMIT: an I after O starts a run
    tags[18] = "B-TASK"  # the full stop alone: no span
    found = decode(tokens, rows(tags), text)
    assert [(s.start, s.end, s.label) for s in found] == [(0, 13, "METHOD"), (24, 28, "METHOD"), (43, 48, "DATASET")]
    assert found[0].confidence == pytest.approx((0.9 + 0.1 / 12 + 4 * 2 * 0.1 / 12) / 5, abs=1e-4)  # only ##lu was METHOD


def test_a_new_type_or_a_b_starts_a_new_span_and_widened_overlaps_join(tokenizer):
    text = "We fine-tune BERT on GLUE."
    tokens = tokenize(tokenizer, text)  # we fine - tune bert on glue .
    found = decode(tokens, rows(["O", "B-TASK", "I-TASK", "I-TASK", "I-METHOD", "B-METHOD", "B-DATASET", "O"]), text)
    assert [(text[s.start : s.end], s.label) for s in found] == [("fine-tune", "TASK"), ("BERT", "METHOD"), ("on", "METHOD"), ("GLUE", "DATASET")]
    text = "HMMs"
    tokens = tokenize(tokenizer, text)  # hmm ##s
    found = decode(tokens, rows(["B-METHOD", "B-TASK"]), text)
    assert [(s.start, s.end, s.label) for s in found] == [(0, 4, "METHOD")]  # one word: the first run's type


def test_no_tokens_no_spans(tokenizer):
    assert decode(tokenize(tokenizer, ""), np.zeros((0, len(TAGS)), np.float32), "") == []


def test_long_texts_are_read_in_windows_and_stitched(tokenizer):
    text = " ".join(["BERT"] + ["word"] * 20 + ["GLUE"] + ["word"] * 5 + ["BERT"])
    glue = tokenizer.token_to_id("glue")
    bert = tokenizer.token_to_id("bert")
    seen: list[list[int]] = []

    def run(inputs: list[np.ndarray]) -> list[np.ndarray]:
        out = []
        for ids in inputs:
            seen.append(ids.tolist())
            tags = ["B-DATASET" if i == glue else "B-METHOD" if i == bert else "O" for i in ids.tolist()]
            tags[0] = tags[-1] = "B-TERM"  # [CLS] and [SEP]: left out by stitching
            out.append(rows(tags))
        return out

    [tagged] = tag_texts([text], tokenizer, run, window=12, stride=3)
    assert len(seen) == 4 and all(ids[0] == CLS_ID and ids[-1] == SEP_ID and len(ids) <= 12 for ids in seen)
    assert [(text[s.start : s.end], s.label, s.start) for s in tagged.spans] == [("BERT", "METHOD", 0), ("GLUE", "DATASET", 105), ("BERT", "METHOD", 135)]
    assert tagged.confidence(105, 109, "DATASET") == pytest.approx(0.9 + 0.1 / 12, abs=1e-4) and tagged.confidence(105, 109, "METHOD") == pytest.approx(2 * 0.1 / 12, abs=1e-4)
    assert tagged.confidence(0, 14, "METHOD") == pytest.approx((0.9 + 0.1 / 12 + 2 * 2 * 0.1 / 12) / 3, abs=1e-4)  # "BERT word word"
    assert tagged.confidence(200, 210, "METHOD") == 0.0  # no token there


def test_empty_texts_cost_no_window(tokenizer):
    calls = []
    tagged = tag_texts(["", "BERT"], tokenizer, lambda inputs: calls.append(len(inputs)) or [rows(["O", "B-METHOD", "O"])], window=8, stride=2)
    assert calls == [1] and tagged[0].spans == () and tagged[1].spans == (TaggedSpan(0, 4, "METHOD", pytest.approx(0.9 + 0.1 / 12, abs=1e-4)),)
