#!/usr/bin/env python3
"""The routing comparison of issue 8 as one table: each reshard of
make_routing_ir.py measured under every strategy in the same run (one
artifact_runner CSV per strategy), next to the estimator's T_SOL for the
same topology (m2n-opt --m2n-estimate=format=json).

  report_routing.py ESTIMATE.json STRATEGY=CSV [STRATEGY=CSV ...]
"""
import argparse
import csv
import json
import re


def row_key(name):
    """'@rep2_tp4__bf16__67108864#0' or 'plan 0 in @rep2_tp4__bf16__67108864'
    -> 'rep2_tp4__bf16__67108864'."""
    return re.search(r"@([A-Za-z0-9_]+)", name).group(1)


def human(size):
    return f"{size >> 30} GiB" if size >= 1 << 30 else f"{size >> 20} MiB"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("estimate")
    parser.add_argument("measured", nargs="+", help="STRATEGY=CSV")
    args = parser.parse_args()
    with open(args.estimate) as f:
        estimates = {row_key(e["reshard"]): e for e in json.load(f)["estimates"]}
    measured = {}
    for spec in args.measured:
        strategy, _, path = spec.partition("=")
        with open(path) as f:
            for row in csv.DictReader(f):
                if row["status"] != "REF":
                    measured[(row_key(row["name"]), strategy)] = row
    strategies = [spec.partition("=")[0] for spec in args.measured]
    print("| reshard | size | strategy | network MB (model) | NVLink MB (model) | T_SOL ms | "
          "measured ms | check | measured / T_SOL |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key, estimate in estimates.items():
        kind, _dtype, size = key.split("__")
        by_strategy = {s["strategy"]: s for s in estimate["strategies"]}
        for strategy in strategies:
            model = by_strategy.get(strategy)
            ours = measured.get((key, strategy))
            sol = f"{model['t_sol_ms']:.3f}" if model else "-"
            net = f"{model['network_bytes'] / 1e6:.1f}" if model else "-"
            nvl = f"{model['nvlink_bytes'] / 1e6:.1f}" if model else "-"
            if ours is None:
                print(f"| {kind} | {human(int(size))} | {strategy} | {net} | {nvl} | {sol} | - | "
                      f"MISSING | - |")
                continue
            ms = float(ours["ms"])
            ratio = f"{ms / model['t_sol_ms']:.2f}" if model and model["t_sol_ms"] else "-"
            print(f"| {kind} | {human(int(size))} | {strategy} | {net} | {nvl} | {sol} | "
                  f"{ms:.3f} | {ours['status']} | {ratio} |")


if __name__ == "__main__":
    main()
