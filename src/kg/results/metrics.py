"""Which way a metric is better, from a curated list: what `kg leaderboard` sorts by.

The names double as a fallback for claim finding: a metric the recognizer missed in a result
sentence ("a top-1 error of 3.1 %") is still found by name. A metric not in the list is judged
by its head word ("... error", "... loss" are lower-better; "... accuracy", "... score" higher);
`direction` says None when it cannot tell, and the leaderboard says so.
"""

from __future__ import annotations

import functools
import re
from typing import Literal

Direction = Literal["higher", "lower"]

LOWER_IS_BETTER = (
    "error", "error rate", "top-1 error", "top-5 error", "test error", "classification error", "WER",
    "word error rate", "CER", "character error rate", "PER", "phone error rate", "EER", "equal error rate",
    "perplexity", "PPL", "FID", "Fréchet Inception Distance", "KID", "FVD", "LPIPS", "MSE", "mean squared error",
    "RMSE", "root mean squared error", "root mean square error", "MAE", "mean absolute error", "NLL",
    "negative log-likelihood", "bits per dimension", "bits/dim", "bpd", "bits per character", "BPC", "loss",
    "Chamfer distance", "EPE", "end-point error", "endpoint error", "ATE", "ADE", "FDE", "miss rate",
    "regret", "TER", "ECE", "expected calibration error", "calibration error", "Abs Rel", "AbsRel", "Sq Rel",
    "Hausdorff distance", "HD95", "MPJPE", "PA-MPJPE", "false positive rate", "FPR", "FPR95", "hallucination rate",
    "latency", "inference time", "runtime", "memory", "cost", "distortion", "Wasserstein distance",
)
HIGHER_IS_BETTER = (
    "accuracy", "top-1 accuracy", "top-5 accuracy", "test accuracy", "classification accuracy", "F1", "F1 score",
    "F1-score", "F-score", "F-measure", "macro-F1", "micro-F1", "BLEU", "BLEU score", "ROUGE", "ROUGE-L", "ROUGE-1",
    "ROUGE-2", "METEOR", "CIDEr", "SPICE", "chrF", "mAP", "AP", "AP50", "AP75", "box AP", "mask AP", "mIoU", "IoU",
    "Dice", "Dice score", "AUC", "AUROC", "ROC-AUC", "AUPRC", "AUPR", "precision", "recall", "PSNR", "SSIM",
    "exact match", "EM", "success rate", "pass@1", "win rate", "NDCG", "nDCG", "MRR", "Hits@1", "Hits@10",
    "Recall@1", "R@1", "Spearman correlation", "Pearson correlation", "correlation", "R2", "UAS", "LAS", "PQ",
    "MOTA", "IDF1", "HOTA", "SPL", "BERTScore", "Inception score", "IS", "sensitivity", "specificity",
    "balanced accuracy", "mean accuracy", "average precision", "mean average precision", "kappa", "MOS",
    "NDS", "reward", "return", "score", "speedup", "speed-up", "throughput", "compression ratio",
)
_LOWER_HEADS = ("error", "loss", "distance", "perplexity", "rate of error", "divergence", "latency", "time")
_HIGHER_HEADS = ("accuracy", "score", "precision", "recall", "f1", "auc", "ap", "iou", "reward", "return", "correlation")


def metric_key(label: str) -> str:
    """Case, spacing and hyphens folded: "Top-1 Error" and "top 1 error" are one metric."""
    return re.sub(r"[\s\-_]+", " ", label.strip().lower()).removesuffix(" scores").strip()


_DIRECTIONS: dict[str, Direction] = {
    **{metric_key(name): "higher" for name in HIGHER_IS_BETTER},
    **{metric_key(name): "lower" for name in LOWER_IS_BETTER},
}


def direction(metric: str | None) -> Direction | None:
    """"lower" or "higher" when the curated list (or the metric's head word) tells, else None."""
    if not metric:
        return None
    key = metric_key(metric)
    if key in _DIRECTIONS:
        return _DIRECTIONS[key]
    words = key.split()
    if words and words[-1] in _LOWER_HEADS:
        return "lower"
    if words and words[-1] in _HIGHER_HEADS:
        return "higher"
    return None


@functools.lru_cache(maxsize=1)
def metric_names() -> re.Pattern[str]:
    """Every curated metric name as a whole word: acronyms case-sensitive, words not, longest first."""
    names = sorted({*LOWER_IS_BETTER, *HIGHER_IS_BETTER} - {"cost", "memory", "return", "reward", "score", "IS"}, key=len, reverse=True)
    parts = [re.escape(n) if n.upper() == n or any(c.isupper() for c in n[1:]) else "(?i:" + re.escape(n) + ")" for n in names]
    return re.compile(r"(?<![\w@-])(?:" + "|".join(parts) + r")(?![\w@]|-\w)")
