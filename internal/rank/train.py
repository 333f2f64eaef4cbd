"""Trains locus's learned ranker: LambdaMART (XGBoost, objective rank:ndcg)
on a feature table that locus wrote, and writes a locus model file.

Usage: python3 train.py TABLE.tsv PARAMS.json OUT.json PREDICTIONS.txt

TABLE.tsv: a header "qid label <feature>..." then one row per candidate,
the rows of one query together. PARAMS.json: {"features": [...],
"xgboost": {...}, "rounds": N, "trained": {...}} (locus writes it).

The trees are written in LightGBM's JSON dump layout, which the Go reader
(github.com/dmitryikh/leaves) loads; it does not read XGBoost 1.x files.
The conversion is exact: XGBoost sends a value left when value < threshold
(both float32), LightGBM when value <= threshold, so each threshold becomes
the largest float32 below it; missing values follow XGBoost's default
branch; the base score becomes a one-leaf tree. PREDICTIONS.txt gets the
model's margins of the table's first rows, for locus to check that Go
scores them the same.
"""
import hashlib
import json
import sys

import numpy as np
import xgboost as xgb


def main(table, params_path, out_path, pred_path):
    with open(params_path) as f:
        params = json.load(f)
    names = params["features"]
    with open(table, "rb") as f:
        data = f.read()
    sha = hashlib.sha256(data).hexdigest()
    lines = data.decode().splitlines()
    header = lines[0].split("\t")
    if header != ["qid", "label"] + names:
        raise SystemExit("train.py: the table's header does not match the feature list")
    rows = np.array([[float(v) for v in l.split("\t")] for l in lines[1:]], dtype=np.float64)
    if rows.size == 0:
        raise SystemExit("train.py: the table has no rows")
    qid, y, X = rows[:, 0].astype(np.int64), rows[:, 1], rows[:, 2:]
    groups = []
    for i, q in enumerate(qid):
        if i == 0 or q != qid[i - 1]:
            groups.append(0)
        groups[-1] += 1
    fnames = ["f%d" % i for i in range(len(names))]
    d = xgb.DMatrix(X, label=y, feature_names=fnames)
    d.set_group(groups)
    booster = xgb.train(params["xgboost"], d, num_boost_round=params["rounds"])

    cfg = json.loads(booster.save_config())
    base = float(cfg["learner"]["learner_model_param"]["base_score"])

    def node(n):
        if "leaf" in n:
            return {"leaf_value": float(n["leaf"]), "leaf_count": 0}
        f = int(n["split"][1:])
        t = float(np.nextafter(np.float32(n["split_condition"]), np.float32(-np.inf)))
        kids = {c["nodeid"]: c for c in n["children"]}
        return {"split_feature": f, "split_gain": 0.0, "threshold": t, "decision_type": "<=",
                "default_left": n["missing"] == n["yes"], "missing_type": "NaN",
                "internal_value": 0.0, "internal_count": 0,
                "left_child": node(kids[n["yes"]]), "right_child": node(kids[n["no"]])}

    def leaves(t):
        return 1 if "leaf_value" in t else leaves(t["left_child"]) + leaves(t["right_child"])

    trees = [{"leaf_value": base, "leaf_count": 0}]
    trees += [node(json.loads(s)) for s in booster.get_dump(dump_format="json")]
    dump = {"name": "tree", "version": "v2", "num_class": 1, "num_tree_per_iteration": 1,
            "label_index": 0, "max_feature_idx": len(names) - 1, "objective": "lambdarank",
            "average_output": False, "feature_names": fnames,
            "tree_info": [{"tree_index": i, "num_leaves": leaves(t), "num_cat": 0, "shrinkage": 1,
                           "tree_structure": t} for i, t in enumerate(trees)]}
    gain = booster.get_score(importance_type="total_gain")
    trained = dict(params.get("trained", {}))
    trained.update({"rows": int(len(y)), "queries": len(groups), "data_sha256": sha})
    model = {"format": "locus-rank-model/1", "feature_version": params["feature_version"],
             "features": names,
             "trainer": {"library": "xgboost", "version": xgb.__version__,
                         "params": params["xgboost"], "rounds": params["rounds"]},
             "trained": trained,
             "importance": {names[int(k[1:])]: round(v, 6) for k, v in sorted(gain.items())},
             "trees": dump}
    if params.get("table"):
        model["table"] = params["table"]
    with open(out_path, "w") as f:
        json.dump(model, f, sort_keys=True, separators=(",", ":"))
        f.write("\n")
    n = min(len(y), 2000)
    margins = booster.predict(xgb.DMatrix(X[:n], feature_names=fnames), output_margin=True)
    with open(pred_path, "w") as f:
        f.write("\n".join(repr(float(m)) for m in margins) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    main(*sys.argv[1:])
