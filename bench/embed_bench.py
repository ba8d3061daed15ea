"""Index-build embedding throughput: sentence-transformers (torch) against ONNX Runtime, fp32 and int8.

Not dependencies of askfirst: ``pip install onnx onnxruntime==1.32.0`` first (optimum, which sentence-transformers'
own ONNX backend needs, would downgrade transformers). The packaged all-MiniLM-L6-v2 is exported offline with
``torch.onnx.export`` and quantised with ONNX Runtime's dynamic int8 quantisation into ``--work``; the encoder then
runs with the model's own tokenizer (truncation at 256 tokens), mean pooling and normalisation, as sentence-transformers
does. Each variant embeds the same passages (MTRAG's cloud collection, chunked as askfirst indexes it) in batches of 64,
in index order or sorted by length; fidelity is the cosine of each vector to sentence-transformers' own.

    python bench/embed_bench.py --passages 512
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np


def export(work: Path) -> tuple[Path, Path]:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModel, AutoTokenizer

    from askfirst.retrieval.embedder import resolve_model_dir

    fp32, int8 = work / "minilm.onnx", work / "minilm-int8.onnx"
    if fp32.is_file() and int8.is_file():
        return fp32, int8
    work.mkdir(parents=True, exist_ok=True)
    folder = str(resolve_model_dir("all-MiniLM-L6-v2"))
    model = AutoModel.from_pretrained(folder).eval()
    enc = AutoTokenizer.from_pretrained(folder)(["a", "two words"], padding=True, return_tensors="pt")

    class LastHidden(torch.nn.Module):  # keyword arguments: transformers 5's BertModel.forward takes no positional mask
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    torch.onnx.export(LastHidden(model), tuple(enc[n] for n in names), str(fp32), input_names=names, output_names=["last_hidden_state"],
                      dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]}, opset_version=17, dynamo=False)
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
    return fp32, int8


def onnx_embed(path: Path, texts: list[str], order: list[int], *, batch: int = 64, threads: int = 2) -> tuple[float, np.ndarray]:
    import onnxruntime as ort
    from transformers import AutoTokenizer

    from askfirst.retrieval.embedder import resolve_model_dir

    tok = AutoTokenizer.from_pretrained(str(resolve_model_dir("all-MiniLM-L6-v2")))
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    out = np.zeros((len(texts), 384), dtype=np.float32)
    start = time.perf_counter()
    for i in range(0, len(order), batch):
        idx = order[i : i + batch]
        enc = tok([texts[j] for j in idx], padding=True, truncation=True, max_length=256, return_tensors="np")
        hidden = session.run(None, {k: enc[k].astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids")})[0]
        mask = enc["attention_mask"][..., None].astype(np.float32)
        v = (hidden * mask).sum(1) / mask.sum(1)
        out[idx] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return len(texts) / (time.perf_counter() - start), out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=512)
    parser.add_argument("--work", type=Path, default=Path("runs/bench/onnx"))
    args = parser.parse_args(argv)
    from askfirst.datasets.corpus import load_corpus
    from askfirst.datasets.mtrag import passage_pool_path
    from askfirst.datasets.shared_data import shared_data_dir
    from askfirst.retrieval.chunking import chunk_corpus
    from askfirst.retrieval.embedder import get_embedder

    passages = chunk_corpus(load_corpus(passage_pool_path(shared_data_dir(None), "cloud")), max_words=180, overlap_sentences=1)[: args.passages]
    texts = [f"{p.title}\n{p.text}" for p in passages]
    fp32, int8 = export(args.work)
    embedder = get_embedder()
    embedder.embed(["warm up"])
    start = time.perf_counter()
    reference = np.concatenate([embedder.embed(texts[i : i + 64]) for i in range(0, len(texts), 64)])
    print(f"{len(texts)} passages of MTRAG cloud\n\n| encoder | order | passages/s | cosine to sentence-transformers: min / mean |\n|---|---|---|---|")
    print(f"| sentence-transformers (torch) | index | {len(texts) / (time.perf_counter() - start):.1f} | 1 / 1 |")
    natural = list(range(len(texts)))
    by_length = sorted(natural, key=lambda j: len(texts[j]))
    for name, path in (("ONNX Runtime fp32", fp32), ("ONNX Runtime int8 (dynamic)", int8)):
        for order_name, order in (("index", natural), ("by length", by_length)):
            pps, vectors = onnx_embed(path, texts, order)
            cosine = (vectors * reference).sum(1)
            print(f"| {name} | {order_name} | {pps:.1f} | {cosine.min():.4f} / {cosine.mean():.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
