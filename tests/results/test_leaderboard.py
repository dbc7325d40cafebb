"""`kg leaderboard`, kg.leaderboard and kg.results.leaderboard (issue 37, item 2): rows ranked in the metric's
direction (said when unknown), labels forgiven as `kg sparql --bind` forgives them, an unknown
name answered with close labels and exit 25, --json, --min-score, one table per metric, and the
index written beside graph.json (with graph.json as the fallback when it is missing or stale)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kg.cli import main
from kg.errors import ExitCode, LabelNotFound
from kg.leaderboard import INDEX_FILE, leaderboard, write_index
from kg.results import MIN_RESULT_SCORE

LOW, HIGH = 0.2, 0.9  # scores below and above the default threshold (checked in the first test)

TEXTS = {
    "p1": "We propose ViT. ViT reaches 88.5 % top-1 accuracy on ImageNet.",
    "p2": "ResNet reaches 76.1 % top-1 accuracy and a 5.2 % error rate on ImageNet.",
    "p3": "Our model reaches 80.3 % top-1 accuracy on ImageNet, 3.1 points over ResNet, which gets 77.2 %. Its zorp index is 0.42 on ImageNet.",
    "p4": "A draft gets 99.0 % top-1 accuracy on ImageNet and a 3.0 % error rate. On COCO it reaches 41.0 AP.",
}
YEARS = {"p1": 2021, "p2": 2016, "p3": 2022, "p4": 2023}


def claim(pid: str, value: str, metric: str | None, score: float, *, nth: int = 0, **fields: Any):
    """A Result of paper `pid` on the words `value` (its `nth` occurrence) in `metric` on ImageNet."""
    from kg.model import Result

    text = TEXTS[pid]
    start = -1
    for _ in range(nth + 1):
        start = text.index(value, start + 1)
    sent_start = text.rfind(". ", 0, start) + 2 if ". " in text[:start] else 0
    sent_end = text.find(". ", start) + 1 or len(text)
    metric_concept = {"top-1 accuracy": "metric/top1", "error rate": "metric/error", "zorp index": "metric/zorp", "AP": "metric/ap"}.get(metric or "")
    base: dict[str, Any] = {
        "paper_id": pid, "start": start, "end": start + len(value), "value": value, "number": float(value), "unit": "%", "kind": "absolute",
        "metric": metric, "metric_concept": metric_concept, "dataset": "ImageNet", "dataset_concept": "dataset/imagenet",
        "task": "image classification", "task_concept": "task/cls", "method": "(proposed)", "method_concept": None, "proposed": True,
        "baseline": None, "baseline_concept": None, "score": score, "sent_start": sent_start, "sent_end": sent_end,
    }  # fmt: skip
    return Result(**{**base, **fields})


def board_graph():
    from kg.graph import build_graph
    from kg.model import Concept, Mention, Paper, PaperEntities

    concepts = [
        Concept("dataset/imagenet", "DATASET", "ImageNet", ("ILSVRC-2012",)),
        Concept("dataset/coco", "DATASET", "MS COCO", ("COCO",)),
        Concept("dataset/cifar10", "DATASET", "CIFAR-10"),
        Concept("metric/top1", "METRIC", "top-1 accuracy", ("top-1 acc",)),
        Concept("metric/error", "METRIC", "error rate"),
        Concept("metric/zorp", "METRIC", "zorp index"),
        Concept("metric/ap", "METRIC", "AP", ("average precision",)),
        Concept("method/vit", "METHOD", "vision transformer", ("ViT",)),
        Concept("method/resnet", "METHOD", "ResNet"),
        Concept("task/cls", "TASK", "image classification"),
    ]
    papers = [Paper(pid, f"Paper {pid}", text, year=YEARS[pid]) for pid, text in TEXTS.items()]
    entities = [PaperEntities(pid, (Mention(0, 1, "x", "DATASET", "dataset/imagenet", "used", "vocab", 0.9, 0, 1),)) for pid in TEXTS]
    vit = {"method": "ViT", "method_concept": "method/vit"}
    resnet = {"method": "ResNet", "method_concept": "method/resnet"}
    results = [
        (claim("p1", "88.5", "top-1 accuracy", HIGH, **vit),),
        (claim("p2", "76.1", "top-1 accuracy", 0.8, **resnet), claim("p2", "5.2", "error rate", 0.7, **resnet)),
        (
            claim("p3", "80.3", "top-1 accuracy", 0.6),
            claim("p3", "3.1", "top-1 accuracy", 0.7, unit="points", kind="improvement", baseline="ResNet", baseline_concept="method/resnet"),
            claim("p3", "77.2", "top-1 accuracy", 0.6, proposed=False, **resnet),  # the baseline's own number
            claim("p3", "0.42", "zorp index", 0.8, unit=None),
        ),
        (
            claim("p4", "99.0", "top-1 accuracy", LOW),
            claim("p4", "3.0", "error rate", HIGH),
            claim("p4", "41.0", "AP", HIGH, unit=None, dataset="COCO", dataset_concept="dataset/coco", task=None, task_concept=None),
        ),
    ]
    return build_graph(papers, entities, concepts, results=results)


@pytest.fixture
def board_dir(tmp_path: Path) -> Path:
    """A saved graph of four papers' claims (most on ImageNet) with its leaderboard.idx, as `kg build` leaves it."""
    from kg.graph import save

    graph = board_graph()
    save(graph, tmp_path)
    write_index(graph, tmp_path)
    return tmp_path


def values(table) -> list[str]:
    return [row.value for row in table.rows]


def test_the_fixture_scores_straddle_the_threshold() -> None:
    assert LOW < MIN_RESULT_SCORE <= 0.6 < HIGH


def test_one_table_per_metric_ranked_in_its_direction(board_dir: Path) -> None:
    board = leaderboard(board_dir, "ImageNet")
    assert board.source == "index" and board.dataset == "ImageNet" and board.concepts == ("dataset/imagenet",)
    tables = {table.metric: table for table in board.tables}
    assert list(tables) == ["top-1 accuracy", "error rate", "zorp index"]  # most claims first
    assert (tables["top-1 accuracy"].direction, values(tables["top-1 accuracy"])) == ("higher", ["88.5", "80.3", "77.2", "76.1"])
    assert (tables["error rate"].direction, values(tables["error rate"])) == ("lower", ["3.0", "5.2"])  # lower is better: ascending
    assert (tables["zorp index"].direction, values(tables["zorp index"])) == (None, ["0.42"])
    # The gain is listed apart, not ranked; the claim scored LOW is left out and counted.
    assert [row.value for row in tables["top-1 accuracy"].improvements] == ["3.1"]
    assert board.below == 1
    top = tables["top-1 accuracy"].rows
    assert [(row.method, row.proposed, row.year, row.paper_id) for row in top] == [
        ("vision transformer", True, 2021, "p1"), ("(proposed)", True, 2022, "p3"), ("ResNet", False, 2022, "p3"), ("ResNet", True, 2016, "p2"),
    ]  # fmt: skip
    assert top[0].sentence == "ViT reaches 88.5 % top-1 accuracy on ImageNet."
    assert top[0].sentence[top[0].value_start : top[0].value_end] == "88.5"
    assert top[0].task == "image classification"


@pytest.mark.parametrize("name", ["imagenet", "IMAGENET", "ImageNets", "ILSVRC 2012", "ilsvrc-2012"])
def test_dataset_labels_forgive_case_plurals_hyphens_and_alt_labels(board_dir: Path, name: str) -> None:
    assert leaderboard(board_dir, name).concepts == ("dataset/imagenet",)


@pytest.mark.parametrize("name", ["Top-1 Acc", "top 1 accuracy", "TOP-1 ACCURACY"])
def test_metric_labels_forgive(board_dir: Path, name: str) -> None:
    board = leaderboard(board_dir, "imagenet", metric=name)
    assert [table.metric for table in board.tables] == ["top-1 accuracy"]
    assert values(board.tables[0]) == ["88.5", "80.3", "77.2", "76.1"]


def test_task_filter(board_dir: Path) -> None:
    assert [table.metric for table in leaderboard(board_dir, "ImageNet", task="Image Classification").tables] == ["top-1 accuracy", "error rate", "zorp index"]
    with pytest.raises(LabelNotFound) as caught:
        leaderboard(board_dir, "ImageNet", task="segmentation")
    assert caught.value.suggestions == ("image classification",)


def test_an_unknown_name_suggests_close_labels(board_dir: Path) -> None:
    with pytest.raises(LabelNotFound) as caught:
        leaderboard(board_dir, "ImagNet")
    assert caught.value.suggestions[0] == "ImageNet" and caught.value.exit_code == ExitCode.LABEL_NOT_FOUND == 25
    with pytest.raises(LabelNotFound) as caught:
        leaderboard(board_dir, "cifar10")  # no space: still close to "cifar 10"
    assert caught.value.suggestions[0] == "CIFAR-10"
    with pytest.raises(LabelNotFound) as caught:
        leaderboard(board_dir, "Penn Treebank")
    assert caught.value.suggestions == ()
    with pytest.raises(LabelNotFound) as caught:
        leaderboard(board_dir, "ImageNet", metric="top-5 accuracy")  # the metrics of ImageNet's claims are suggested
    assert "top-1 accuracy" in caught.value.suggestions


def test_a_dataset_with_no_claims_gives_an_empty_board(board_dir: Path) -> None:
    board = leaderboard(board_dir, "CIFAR-10")
    assert (board.tables, board.below) == ((), 0)


def test_min_score(board_dir: Path) -> None:
    tables = {t.metric: t for t in leaderboard(board_dir, "ImageNet", min_score=0.0).tables}
    assert values(tables["top-1 accuracy"])[0] == "99.0"
    tables = {t.metric: t for t in leaderboard(board_dir, "ImageNet", min_score=0.75).tables}
    assert values(tables["top-1 accuracy"]) == ["88.5", "76.1"] and "error rate" in tables and "zorp index" in tables


def test_no_index_or_a_stale_one_reads_graph_json(board_dir: Path) -> None:
    from kg.graph import save

    expected = leaderboard(board_dir, "ImageNet").to_dict()
    (board_dir / INDEX_FILE).unlink()
    board = leaderboard(board_dir, "ImageNet")
    assert (board.source, board.to_dict()) == ("graph", expected)
    # graph.json saved anew with one claim less: the old index is stale, not read.
    graph = board_graph()
    write_index(graph, board_dir)
    graph.nodes["paper:p1"]["results"] = []
    save(graph, board_dir)
    board = leaderboard(board_dir, "ImageNet")
    assert board.source == "graph" and "88.5" not in values(board.tables[0])
    (board_dir / INDEX_FILE).write_bytes(b"not json\n")
    assert leaderboard(board_dir, "ImageNet").source == "graph"


# ---- the command --------------------------------------------------------------------------------


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["leaderboard", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_text(board_dir: Path, capsys) -> None:
    code, out, err = run(capsys, "imagenet", "--graph", str(board_dir))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"Leaderboard of ImageNet (claims scored {MIN_RESULT_SCORE:g} or more)"
    headings = [line for line in lines if line and not line.startswith(" ")][1:]
    assert headings == [
        "top-1 accuracy (higher is better), 4 claims", "error rate (lower is better), 2 claims",
        "zorp index (direction unknown: sorted high to low), 1 claim", f"1 claim scored below {MIN_RESULT_SCORE:g} left out (--min-score 0 shows them)",
    ]  # fmt: skip
    first = lines.index(headings[0])
    assert lines[first + 1].split() == ["#", "value", "method", "year", "paper"]
    assert lines[first + 2].split() == ["1", "88.5%", "vision", "transformer", "2021", "p1"]
    assert lines[first + 3].strip() == "“ViT reaches [88.5] % top-1 accuracy on ImageNet.”"
    assert "ResNet (baseline)" in lines[first + 6]
    assert "gains reported (1, not ranked):" in out and "3.1 points" in out


def test_cli_metric_json_and_min_score(board_dir: Path, capsys) -> None:
    code, out, _ = run(capsys, "ILSVRC-2012", "--metric", "top-1 acc", "--json", "--min-score", "0", "--graph", str(board_dir))
    assert code == 0
    data = json.loads(out)
    assert (data["dataset"], data["min_score"], data["below_min_score"]) == ("ImageNet", 0.0, 0)
    [table] = data["tables"]
    assert (table["metric"], table["direction"]) == ("top-1 accuracy", "higher")
    assert [(row["rank"], row["value"], row["paper_id"]) for row in table["rows"]] == [(1, "99.0", "p4"), (2, "88.5", "p1"), (3, "80.3", "p3"), (4, "77.2", "p3"), (5, "76.1", "p2")]
    row = table["rows"][1]
    assert {k: row[k] for k in ("method", "method_concept", "unit", "year", "score", "title")} == {
        "method": "vision transformer", "method_concept": "method/vit", "unit": "%", "year": 2021, "score": HIGH, "title": "Paper p1",
    }  # fmt: skip
    assert row["sentence"][row["value_start"] : row["value_end"]] == "88.5"


def test_cli_unknown_names_exit_25_with_close_labels(board_dir: Path, capsys) -> None:
    code, out, err = run(capsys, "ImagNet", "--graph", str(board_dir))
    assert (code, out) == (ExitCode.LABEL_NOT_FOUND, "")
    assert err.startswith("Error: no dataset has the label 'ImagNet' (key 'imagnet'); close labels: ImageNet")
    code, out, err = run(capsys, "coco", "--metric", "mAP", "--graph", str(board_dir))
    assert (code, out) == (25, "")
    assert "no metric on MS COCO has the label 'mAP'" in err and "close labels: AP" in err


@pytest.mark.parametrize("score", ["1.5", "-0.1", "nan"])
def test_cli_rejects_a_score_out_of_range(board_dir: Path, capsys, score: str) -> None:
    code, _, err = run(capsys, "ImageNet", "--min-score", score, "--graph", str(board_dir))
    assert code == 2 and "is not a score from 0 to 1" in err


def test_cli_without_a_graph(tmp_path: Path, capsys) -> None:
    code, _, err = run(capsys, "ImageNet", "--graph", str(tmp_path))
    assert code == ExitCode.GRAPH_NOT_FOUND and "no graph" in err


def test_a_fraction_beside_percentages_ranks_as_its_percentage() -> None:
    from dataclasses import replace

    from kg.results.leaderboard import Row, rank

    base = Row("p", "t", 2020, "0", 0.0, "%", "absolute", "accuracy", "(proposed)", None, True, None, None, 0.9, "s", 0, 1)
    rows = [replace(base, value="76.1", number=76.1), replace(base, value="0.80", number=0.8, unit=None), replace(base, value="1.0", number=1.0, unit=None)]
    assert [row.value for row in rank(rows, "higher")] == ["0.80", "76.1", "1.0"]  # 0.80 is 80 %; "1.0" (no fraction) stays 1
    assert [row.value for row in rank(rows[1:], "higher")] == ["1.0", "0.80"]  # no percentage in the table: as written
