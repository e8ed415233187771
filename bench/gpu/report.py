#!/usr/bin/env python3
"""Joins artifact_runner's m2n rows with the baselines into one table (and a plot).

  report.py M2N.csv BASELINES.csv [--svg PLOT.svg] [--variant LABEL=CSV ...]

Bandwidths are tensor bytes per second (the full tensor for collectives,
the moved tensor for 1-to-1). speedup > 1 means m2n is faster than the row's
baseline measured in the same run. A variant (the same rows compiled with
other options) adds a row "<operation> (<label>)" against the same baseline.
"""
import argparse
import csv

TITLES = {
    "one_to_one": "1-to-1 reshard", "s0_to_s1": "Shard(0)->Shard(1)",
    "s0_to_r": "Shard(0)->Replicate", "p_to_s0": "Partial->Shard(0)",
    "p_to_r": "Partial->Replicate", "all_gather": "all_gather",
    "reduce_scatter": "reduce_scatter", "all_reduce": "all_reduce",
}


def key(name):
    """'@all_gather__bf16__1048576#7' -> ('all_gather', 'bf16', 1048576)."""
    kind, dtype, size = name.lstrip("@").split("#")[0].split("__")
    return kind, dtype, int(size)


def human(size):
    return f"{size >> 30} GiB" if size >= 1 << 30 else f"{size >> 20} MiB"


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def svg_plot(series, path, title):
    """Line plot of GB/s against size (log scale), one line per series."""
    import math
    width, height, pad = 720, 420, 60
    sizes = sorted({s for points in series.values() for s, _ in points})
    rates = [r for points in series.values() for _, r in points]
    lo, hi = math.log2(min(sizes)), math.log2(max(sizes))
    rlo, rhi = 0.0, max(rates) * 1.1

    def xy(size, rate):
        x = pad + (math.log2(size) - lo) / max(hi - lo, 1) * (width - 2 * pad)
        y = height - pad - (rate - rlo) / (rhi - rlo) * (height - 2 * pad)
        return x, y
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle">{title}</text>']
    for size in sizes:
        x, _ = xy(size, 0)
        out.append(f'<text x="{x}" y="{height - pad + 18}" text-anchor="middle">{human(size)}</text>')
    for step in range(6):
        rate = rhi * step / 5
        _, y = xy(sizes[0], rate)
        out.append(f'<line x1="{pad}" x2="{width - pad}" y1="{y}" y2="{y}" stroke="#ddd"/>')
        out.append(f'<text x="{pad - 6}" y="{y + 4}" text-anchor="end">{rate:.0f}</text>')
    for index, (label, points) in enumerate(sorted(series.items())):
        color = colors[index % len(colors)]
        dashed = ' stroke-dasharray="5,4"' if "NCCL" in label else ""
        coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(s, r) for s, r in sorted(points)))
        out.append(f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="2"{dashed}/>')
        out.append(f'<text x="{width - pad + 4 - 150}" y="{pad + 16 * index}" fill="{color}">{label}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("m2n")
    parser.add_argument("baselines")
    parser.add_argument("--svg")
    parser.add_argument("--title", default="Collectives on 2x H200: m2n vs NCCL (tensor GB/s)")
    parser.add_argument("--variant", action="append", default=[],
                        help="LABEL=CSV: m2n rows compiled another way")
    args = parser.parse_args()
    variants = []
    for spec in args.variant:
        label, _, path = spec.partition("=")
        variants.append((label, {key(r["name"]): r for r in read(path) if r["status"] != "REF"}))
    m2n = {key(row["name"]): row for row in read(args.m2n) if row["status"] != "REF"}
    engine = {key(row["name"])[2]: float(row["ms"]) for row in read(args.m2n) if row["status"] == "REF"}
    print("| operation | size | m2n ms | m2n GB/s | CTAs/GPU | check | baseline | baseline ms | baseline GB/s | speedup |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    series = {}
    for row in read(args.baselines):
        k = key(row["name"])
        kind, dtype, size = k
        ours = m2n.get(k)
        if ours is None:  # m2n did not run or report this row: say so
            print(f"| {TITLES[kind]} {dtype} | {human(size)} | - | - | - | MISSING | "
                  f"{row['baseline']} | {float(row['ms']):.3f} | - | - |")
            continue
        ms, base_ms = float(ours["ms"]), float(row["ms"])
        baselines = [(row["baseline"], base_ms)]
        if kind == "one_to_one" and size in engine:
            baselines.insert(0, ("copy engine (cudaMemcpyPeer)", engine[size]))
        for name, bms in baselines:
            print(f"| {TITLES[kind]} {dtype} | {human(size)} | {ms:.3f} | {size / ms / 1e6:.1f} | {ours['ctas']} | "
                  f"{ours['status']} | {name} | {bms:.3f} | {size / bms / 1e6:.1f} | {bms / ms:.2f}x |")
        for label, rows in variants:
            other = rows.get(k)
            if other is not None:
                vms = float(other["ms"])
                print(f"| {TITLES[kind]} {dtype} ({label}) | {human(size)} | {vms:.3f} | "
                      f"{size / vms / 1e6:.1f} | {other['ctas']} | {other['status']} | "
                      f"{row['baseline']} | {base_ms:.3f} | {size / base_ms / 1e6:.1f} | "
                      f"{base_ms / vms:.2f}x |")
        if kind in ("all_gather", "reduce_scatter", "all_reduce"):
            mine = series.setdefault(f"m2n {kind}", [])
            if (size, size / ms / 1e6) not in mine:  # once, whatever the baselines
                mine.append((size, size / ms / 1e6))
            series.setdefault(f"{row['baseline']} {kind}", []).append((size, size / base_ms / 1e6))
    if args.svg and series:
        svg_plot(series, args.svg, args.title)


if __name__ == "__main__":
    main()
