"""Trains locus's neural second stage: a small cross-encoder (a transformer
encoder over "[CLS] query [SEP] document [SEP]", one logit from [CLS]),
from scratch, with a listwise softmax loss over each query's positive and
hard negatives; exports it to ONNX for ONNX Runtime.

Usage: python3 train.py TRAIN.jsonl VALID.jsonl PARAMS.json OUTDIR

TRAIN.jsonl and VALID.jsonl: one query a line, {"ids": [[...], ...],
"types": [[...], ...]}: the token ids and token types of its pairs, the
positive first (locus tokenizes them with the vocab.txt it wrote, so that
training and inference read the same tokens). PARAMS.json: the model's
shape and the training's settings (locus writes it). OUTDIR receives
model.onnx and train.json (losses, held-out accuracy, the scores of the
first pairs, which locus checks ONNX Runtime gives back).
"""
import json
import math
import random
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Layer(nn.Module):
    """A post-norm transformer layer written out, so that the export is
    plain MatMul/Softmax (no fused kernels that ONNX lacks)."""

    def __init__(self, d, heads, ff, drop):
        super().__init__()
        self.h, self.dk = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)
        self.ln2 = nn.LayerNorm(d)
        self.drop = nn.Dropout(drop)

    def forward(self, x, bias):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.h, self.dk).permute(2, 0, 3, 1, 4)
        a = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dk) + bias
        a = self.drop(torch.softmax(a, dim=-1))
        y = torch.matmul(a, v).transpose(1, 2).reshape(b, n, d)
        x = self.ln1(x + self.drop(self.o(y)))
        return self.ln2(x + self.drop(self.ff2(F.gelu(self.ff1(x)))))


class CrossEncoder(nn.Module):
    def __init__(self, vocab, d, layers, heads, ff, positions, drop):
        super().__init__()
        self.word = nn.Embedding(vocab, d, padding_idx=0)
        self.position = nn.Embedding(positions, d)
        self.token_type = nn.Embedding(2, d)
        self.ln = nn.LayerNorm(d)
        self.layers = nn.ModuleList([Layer(d, heads, ff, drop) for _ in range(layers)])
        self.head = nn.Linear(d, 1)
        self.drop = nn.Dropout(drop)

    def forward(self, input_ids, attention_mask, token_type_ids):
        n = input_ids.shape[1]
        pos = torch.arange(n, device=input_ids.device).unsqueeze(0)
        x = self.word(input_ids) + self.position(pos) + self.token_type(token_type_ids)
        x = self.drop(self.ln(x))
        bias = (1.0 - attention_mask.to(x.dtype)).unsqueeze(1).unsqueeze(1) * -1e4
        for l in self.layers:
            x = l(x, bias)
        return self.head(x[:, 0]).squeeze(-1)


def read(path):
    out = []
    with open(path) as f:
        for line in f:
            g = json.loads(line)
            if len(g["ids"]) < 2:
                raise SystemExit("train.py: %s: a query without a negative" % path)
            out.append(g)
    return out


def batch(seqs, types):
    n = max(len(s) for s in seqs)
    ids = torch.zeros((len(seqs), n), dtype=torch.long)
    mask = torch.zeros((len(seqs), n), dtype=torch.long)
    tt = torch.zeros((len(seqs), n), dtype=torch.long)
    for i, (s, t) in enumerate(zip(seqs, types)):
        ids[i, :len(s)] = torch.tensor(s)
        mask[i, :len(s)] = 1
        tt[i, :len(t)] = torch.tensor(t)
    return ids, mask, tt


def scores(model, groups):
    """The model's scores of each group's pairs, in eval mode."""
    out = []
    model.eval()
    with torch.no_grad():
        for g in groups:
            out.append(model(*batch(g["ids"], g["types"])).tolist())
    return out


def accuracy(model, groups):
    """Held-out: the positive's mean reciprocal rank among its group, and
    how often it is first."""
    rr, top = 0.0, 0
    for s in scores(model, groups):
        rank = 1 + sum(1 for x in s[1:] if x >= s[0])
        rr += 1.0 / rank
        top += rank == 1
    return rr / max(len(groups), 1), top / max(len(groups), 1)


def main(train_path, valid_path, params_path, out):
    with open(params_path) as f:
        p = json.load(f)
    torch.manual_seed(p["seed"])
    random.seed(p["seed"])
    torch.set_num_threads(p["threads"])
    train, valid = read(train_path), read(valid_path)
    model = CrossEncoder(p["vocab_size"], p["hidden"], p["layers"], p["heads"], p["ff"], p["max_tokens"], p["dropout"])
    opt = torch.optim.AdamW(model.parameters(), lr=p["lr"], weight_decay=0.01)
    steps = p["epochs"] * math.ceil(len(train) / p["batch_queries"])
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (steps - s) / max(1, steps - warm)))
    before = accuracy(model, valid)
    log, step, start = [], 0, time.time()
    for epoch in range(p["epochs"]):
        order = list(range(len(train)))
        random.shuffle(order)
        for s in range(0, len(order), p["batch_queries"]):
            model.train()
            gs = [train[i] for i in order[s:s + p["batch_queries"]]]
            seqs = [x for g in gs for x in g["ids"]]
            types = [x for g in gs for x in g["types"]]
            logits = model(*batch(seqs, types))
            loss, at = 0.0, 0
            for g in gs:
                k = len(g["ids"])
                # Listwise: the positive (index 0) against its negatives.
                loss = loss + F.cross_entropy(logits[at:at + k].unsqueeze(0), torch.zeros(1, dtype=torch.long))
                at += k
            loss = loss / len(gs)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            if step % 50 == 0 or step == steps:
                log.append({"step": step, "loss": round(float(loss), 4), "seconds": round(time.time() - start, 1)})
                print("step %d/%d loss %.4f %.0fs" % (step, steps, float(loss), time.time() - start), file=sys.stderr, flush=True)
    after = accuracy(model, valid)
    train_acc = accuracy(model, train[:len(valid) or 200])
    model.eval()
    check = valid[:4] or train[:4]
    ids, mask, tt = batch(check[0]["ids"], check[0]["types"])
    torch.onnx.export(model, (ids, mask, tt), out + "/model.onnx",
                      input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
                                    "token_type_ids": {0: "batch", 1: "tokens"}, "logits": {0: "batch"}},
                      opset_version=14, do_constant_folding=True)
    report = {"torch": torch.__version__, "steps": step, "seconds": round(time.time() - start, 1),
              "train_queries": len(train), "valid_queries": len(valid), "log": log,
              "valid_mrr_before": round(before[0], 4), "valid_top1_before": round(before[1], 4),
              "valid_mrr": round(after[0], 4), "valid_top1": round(after[1], 4),
              "train_mrr": round(train_acc[0], 4), "train_top1": round(train_acc[1], 4),
              "check": {"groups": len(check), "scores": scores(model, check)}}
    with open(out + "/train.json", "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
