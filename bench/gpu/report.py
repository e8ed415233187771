#!/usr/bin/env python3
"""Joins artifact_runner's m2n rows with their baselines into tables and plots.

  report.py M2N.csv [BASELINES.csv ...] [--variant LABEL=CSV ...]
            [--sweep [LABEL:]CTAS=M2N.csv ...] [--baseline-sweep CTAS=BASELINES.csv ...]
            [--plain ENGINE.csv] [--ranks N] [--svg PREFIX] [--title TEXT]

Both sides are timed the same way (CUDA events around back-to-back
launches, and inside a CUDA graph; artifact_runner.cu and baselines.py), in
the same run. Every row gives the median time per operation in us with its
min-max spread, the graph time, and the bus bandwidth as nccl-tests defines
it: S / t x (n-1)/n for all_gather, reduce_scatter and all_to_all, S / t x
2(n-1)/n for all_reduce, S / t for the 1-to-1 and DTensor rows, where S is
the full tensor (all_to_all: one rank's part). speedup > 1: m2n is faster
(direct launches against direct calls, graph against graph).

The copy-engine rows of artifact_runner (REF) are the 1-to-1 rows' first
baseline when no baselines CSV has one. --sweep and --baseline-sweep give
the CTA-budget table: m2n compiled for each CTA budget and the baseline at
each cap (NCCL_MIN_CTAS = NCCL_MAX_CTAS), busbw at each size; a labelled
--sweep (unfused:16=CSV) is another build of m2n, a row "m2n LABEL". --plain
takes engine_bench's CSV: under each m2n sweep row, the ratio of m2n's rate
(bytes its kernels moved / time) to the plain SM kernel's (copy, or add for
the reductions, whose programs also copy their own share) at the CTAs m2n
ran on the GPU (CTAs a rank x the ranks that work: one for the 1-to-1),
timed the same way in the same run; only for rows of at least a quarter of
the plain kernel's bytes (smaller ones are bound by latency, not rate).
--svg PREFIX writes PREFIX-busbw.svg (large sizes), PREFIX-latency.svg
(small sizes) and, with a sweep, PREFIX-ctas.svg; m2n solid, baselines
dashed.
"""
import argparse
import csv
import math

TITLES = {
    "one_to_one": "1-to-1 reshard", "s0_to_s1": "Shard(0)->Shard(1)",
    "s0_to_r": "Shard(0)->Replicate", "p_to_s0": "Partial->Shard(0)",
    "p_to_r": "Partial->Replicate", "all_gather": "all_gather",
    "reduce_scatter": "reduce_scatter", "all_reduce": "all_reduce",
    "all_to_all": "all_to_all",
}
COLLECTIVES = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all")
# Below this size a row is about latency (us), from it about bandwidth.
LATENCY_BELOW = 1 << 20


def key(name):
    """'@all_gather__bf16__1048576#7' -> ('all_gather', 'bf16', 1048576)."""
    kind, dtype, size = name.lstrip("@").split("#")[0].split("__")
    return kind, dtype, int(size)


def human(size):
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if size >= 1 << shift:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def read(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def bus_factor(kind, ranks):
    if kind == "all_reduce":
        return 2 * (ranks - 1) / ranks
    if kind in COLLECTIVES:
        return (ranks - 1) / ranks
    return 1.0


def busbw(kind, size, ms, ranks):
    """GB/s; all_to_all's S is one rank's part of the tensor."""
    s = size / ranks if kind == "all_to_all" else size
    return s / (ms * 1e-3) / 1e9 * bus_factor(kind, ranks)


def timing(row):
    """(median, min, max, graph or None) in ms from a CSV row."""
    ms = float(row["ms"])
    low = float(row.get("ms_min") or ms)
    high = float(row.get("ms_max") or ms)
    graph = float(row["graph_ms"]) if row.get("graph_ms") else None
    return ms, low, high, graph


def us(ms):
    return "-" if ms is None else f"{ms * 1e3:.1f}"


def ratio(base, ours):
    return "-" if base is None or ours is None else f"{base / ours:.2f}x"


def m2n_rows(path):
    return {key(r["name"]): r for r in read(path) if r["status"] != "REF"}


def svg_plot(series, path, title, xlabel, ylabel, log_x=True, x_text=human):
    """A line plot, one line per series: m2n solid, others dashed."""
    width, height, pad = 760, 440, 64
    xs = sorted({x for points in series.values() for x, _ in points})
    ys = [y for points in series.values() for _, y in points]
    fx = (lambda x: math.log2(x)) if log_x else (lambda x: x)
    lo, hi = fx(min(xs)), fx(max(xs))
    top = max(ys) * 1.1 if ys else 1

    def xy(x, y):
        return (pad + (fx(x) - lo) / max(hi - lo, 1e-9) * (width - 2 * pad),
                height - pad - y / top * (height - 2 * pad))
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
              "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle">{title}</text>',
           f'<text x="{width / 2}" y="{height - 12}" text-anchor="middle">{xlabel}</text>',
           f'<text x="14" y="{height / 2}" transform="rotate(-90 14 {height / 2})" '
           f'text-anchor="middle">{ylabel}</text>']
    for x in xs:
        px, _ = xy(x, 0)
        out.append(f'<text x="{px}" y="{height - pad + 18}" text-anchor="middle">{x_text(x)}</text>')
    for step in range(6):
        y = top * step / 5
        _, py = xy(xs[0], y)
        out.append(f'<line x1="{pad}" x2="{width - pad}" y1="{py}" y2="{py}" stroke="#ddd"/>')
        out.append(f'<text x="{pad - 6}" y="{py + 4}" text-anchor="end">{y:.0f}</text>')
    for index, (label, points) in enumerate(sorted(series.items())):
        color = colors[index % len(colors)]
        dashed = "" if label.startswith("m2n") else ' stroke-dasharray="5,4"'
        coords = " ".join(f"{px:.1f},{py:.1f}" for px, py in (xy(x, y) for x, y in sorted(points)))
        out.append(f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="2"{dashed}/>')
        out.append(f'<text x="{pad + 8}" y="{pad + 16 * index}" fill="{color}">{label}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("m2n")
    parser.add_argument("baselines", nargs="*")
    parser.add_argument("--variant", action="append", default=[],
                        help="LABEL=CSV: m2n rows compiled another way")
    parser.add_argument("--sweep", action="append", default=[],
                        help="CTAS=CSV of m2n, or LABEL:CTAS=CSV of another m2n build (a row 'm2n LABEL')")
    parser.add_argument("--baseline-sweep", action="append", default=[], help="CTAS=CSV of baselines")
    parser.add_argument("--plain", help="engine_bench CSV with the plain SM kernel's rows")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--svg", help="prefix of the plots")
    parser.add_argument("--title", default="m2n vs NCCL")
    args = parser.parse_args()
    n = args.ranks
    ours = m2n_rows(args.m2n)
    variants = [(label, m2n_rows(path)) for label, _, path in
                (spec.partition("=") for spec in args.variant)]
    baselines = [row for path in args.baselines for row in read(path)]
    # The copy engine of artifact_runner serves where no baseline CSV has one.
    if not any(r["baseline"].startswith("copy engine") for r in baselines):
        for r in read(args.m2n):
            if r["status"] == "REF":
                kind = "one_to_one"
                size = key(r["name"])[2]
                label = ("copy engine, same GPU (cudaMemcpyAsync)" if r["name"].startswith("same_gpu")
                         else "copy engine (cudaMemcpyPeerAsync)")
                baselines.append({"name": f"{kind}__f32__{size}", "baseline": label, **{
                    k: r.get(k, "") for k in ("ms", "ms_min", "ms_max", "graph_ms")}})
    print("| operation | size | m2n us [min-max] | m2n graph us | m2n busbw GB/s | CTAs | check "
          "| baseline | baseline us [min-max] | baseline graph us | baseline busbw GB/s | speedup | speedup (graph) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    bandwidth, latency = {}, {}

    def line(title, k, mine, base):
        kind, dtype, size = k
        ms, low, high, graph = timing(mine)
        if base is None:
            cells = "- | - | - | - | - | -"
        else:
            bms, blow, bhigh, bgraph = timing(base)
            cells = (f"{base['baseline']} | {us(bms)} [{us(blow)}-{us(bhigh)}] | {us(bgraph)} | "
                     f"{busbw(kind, size, bms, n):.1f} | {ratio(bms, ms)} | {ratio(bgraph, graph)}")
        print(f"| {title} {dtype} | {human(size)} | {us(ms)} [{us(low)}-{us(high)}] | {us(graph)} | "
              f"{busbw(kind, size, ms, n):.1f} | {mine['ctas']} | {mine['status']} | {cells} |")

    for k in sorted(ours, key=lambda k: (list(TITLES).index(k[0]), k[2])):
        kind, dtype, size = k
        mine = ours[k]
        mine_bases = [b for b in baselines if key(b["name"]) == k] or [None]
        for base in mine_bases:
            line(TITLES[kind], k, mine, base)
        for label, rows in variants:
            if k in rows:
                for base in mine_bases:
                    line(f"{TITLES[kind]} ({label})", k, rows[k], base)
        if kind in COLLECTIVES:
            ms = timing(mine)[0]
            target = latency if size < LATENCY_BELOW else bandwidth
            value = ms * 1e3 if size < LATENCY_BELOW else busbw(kind, size, ms, n)
            target.setdefault(f"m2n {kind}", []).append((size, value))
            for base in mine_bases:
                if base is not None:
                    bms = timing(base)[0]
                    value = bms * 1e3 if size < LATENCY_BELOW else busbw(kind, size, bms, n)
                    target.setdefault(f"{base['baseline']} {kind}", []).append((size, value))
    for b in baselines:  # rows m2n did not run: say so
        if key(b["name"]) not in ours:
            kind, dtype, size = key(b["name"])
            print(f"| {TITLES[kind]} {dtype} | {human(size)} | - | - | - | - | MISSING | {b['baseline']} "
                  f"| {us(float(b['ms']))} | - | - | - | - |")

    sweep, moved = {}, {}
    for spec in args.sweep:
        # CTAS=CSV, or LABEL:CTAS=CSV for another build of m2n (its own row).
        ctas, _, path = spec.partition("=")
        label, _, ctas = ctas.rpartition(":")
        side = f"m2n {label}" if label else "m2n"
        for k, row in m2n_rows(path).items():
            sweep.setdefault(k, {}).setdefault(side, {})[int(ctas)] = timing(row)[0]
            if not label:
                moved[k, int(ctas)] = float(row["moved_bytes"])
    # The plain SM kernel's GB/s by (op, CTAs), and the bytes it moved: the
    # ratio is printed for rows of at least a quarter of them (rates of
    # latency-bound sizes compare with nothing the plain kernel measured).
    plain, plain_bytes = {}, 0
    if args.plain:
        for row in read(args.plain):
            if row["kernel"] == "plain":
                plain[row["op"], int(row["ctas"])] = float(row["gb_per_s"])
                plain_bytes = max(plain_bytes, int(row["bytes"]))
    for spec in args.baseline_sweep:
        ctas, _, path = spec.partition("=")
        for row in read(path):
            label = row["baseline"].split(" (")[0]
            sweep.setdefault(key(row["name"]), {}).setdefault(label, {})[int(ctas)] = float(row["ms"])
    cta_series = {}
    if sweep:
        counts = sorted({c for sides in sweep.values() for side in sides.values() for c in side})
        print()
        print("CTA budget: busbw GB/s at each CTA count (m2n: max-ctas; baseline: NCCL_MIN_CTAS = NCCL_MAX_CTAS)")
        print()
        print("| operation | size | side | " + " | ".join(f"{c} CTAs" for c in counts) + " |")
        print("|---|---|---|" + "---|" * len(counts))
        for k in sorted(sweep, key=lambda k: (list(TITLES).index(k[0]), k[2])):
            kind, dtype, size = k
            for side, times in sorted(sweep[k].items(), key=lambda s: (s[0] != "m2n", not s[0].startswith("m2n"), s[0])):
                cells = " | ".join(f"{busbw(kind, size, times[c], n):.1f}" if c in times else "-" for c in counts)
                print(f"| {TITLES[kind]} {dtype} | {human(size)} | {side} | {cells} |")
                if side == "m2n" and plain and 4 * size >= plain_bytes:
                    op = f"bulk add.{dtype}" if kind in ("reduce_scatter", "all_reduce") else "bulk copy"
                    working = 1 if kind == "one_to_one" else n

                    def to_plain(c):
                        rate = plain.get((op, c * working))
                        if c not in times or rate is None:
                            return "-"
                        return f"{moved[k, c] / (times[c] * 1e6) / rate:.2f}"
                    cells = " | ".join(to_plain(c) for c in counts)
                    print(f"| {TITLES[kind]} {dtype} | {human(size)} | m2n / plain SM {op.split()[1]} | {cells} |")
                if size >= LATENCY_BELOW:
                    cta_series[f"{side} {kind} {human(size)}"] = [
                        (c, busbw(kind, size, t, n)) for c, t in times.items()]
    if args.svg:
        if bandwidth:
            svg_plot(bandwidth, f"{args.svg}-busbw.svg", f"{args.title}: bus bandwidth",
                     "tensor size", "busbw GB/s (nccl-tests)")
        if latency:
            svg_plot(latency, f"{args.svg}-latency.svg", f"{args.title}: latency",
                     "tensor size", "us per operation")
        if cta_series:
            svg_plot(cta_series, f"{args.svg}-ctas.svg", f"{args.title}: CTA budget",
                     "CTAs per GPU", "busbw GB/s (nccl-tests)", x_text=str)


if __name__ == "__main__":
    main()
