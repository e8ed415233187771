#!/usr/bin/env python3
"""Tables (and plots) of the engine microbenchmark (bench/gpu/engine_bench.cu).

  report_engine.py ENGINE.csv [--svg PREFIX]

Every number comes from one run: CUDA events around back-to-back launches,
the median of 7 repetitions (the spread column: (max - min) / median).
Kernels are the builds the run was given (e.g. "before" and "after" a
kernel change; "-all" the builds with the SM path). Tables:
 1. GB/s against CTAs at the compiler's defaults (64 KiB items, 3 stages,
    one walker), per op and build, with the plain SM kernel at the same
    CTAs ("plain": int4 loads and stores, 1024 threads) and each build's
    ratio to it, and the copy engine of the same run;
 2. issue rate: Mitems/s against item size and stages, 1 and 16 CTAs;
 3. walkers: the best walkers x stages for each op, item size and CTA
    count, against the best with one walker (same build);
 4. the SM path against TMA for the same bytes.
"""
import argparse
import csv
from collections import defaultdict

from report import svg_plot


def read(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("item_bytes", "items", "ctas", "walkers", "stages", "bytes", "launches"):
            r[k] = int(r[k])
        for k in ("us_median", "us_min", "us_max", "mitems_per_s", "gb_per_s"):
            r[k] = float(r[k])
    return rows


def size(n):
    return f"{n >> 10} KiB" if n >= 1024 else f"{n} B"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csv")
    parser.add_argument("--svg")
    args = parser.parse_args()
    rows = read(args.csv)
    engine = [r for r in rows if r["kernel"] == "ref"]
    plain = [r for r in rows if r["kernel"] == "plain"]
    rows = [r for r in rows if r["kernel"] not in ("ref", "plain")]
    failed = [r for r in rows + plain if r["check"] != "PASS"]
    print(f"{len(rows)} cases, {len(failed)} failed their check"
          + "".join(f"\n  FAIL {r['kernel']} {r['op']} {r['item_bytes']} B {r['ctas']} CTAs "
                    f"W{r['walkers']} S{r['stages']}" for r in failed))
    kernels = list(dict.fromkeys(r["kernel"] for r in rows))
    bulk_kernels = [k for k in kernels if not k.endswith("-all")]

    def pick(**want):
        return [r for r in rows if all(r[k] == v for k, v in want.items())]

    print("\n## 1. GB/s against CTAs (64 KiB items, 3 stages, one walker)\n")
    counts = sorted({r["ctas"] for r in pick(item_bytes=65536, stages=3, walkers=1)})
    print("| op | kernel | " + " | ".join(f"{c}" for c in counts) + " | per CTA at 1 |")
    print("|---|---|" + "---|" * (len(counts) + 1))
    series = {}
    for op in ("bulk copy", "bulk add.f32", "bulk add.bf16"):
        for k in bulk_kernels:
            got = {r["ctas"]: r for r in pick(kernel=k, op=op, item_bytes=65536, stages=3, walkers=1)}
            if not got:
                continue
            cells = " | ".join(f"{got[c]['gb_per_s']:.0f}" if c in got else "-" for c in counts)
            one = got.get(1)
            print(f"| {op} | {k} | {cells} | {one['gb_per_s']:.1f} |" if one else f"| {op} | {k} | {cells} | - |")
            series[f"{'m2n ' if k != 'before' else ''}{k} {op}"] = [(c, r["gb_per_s"]) for c, r in got.items()]
            ref = {r["ctas"]: r for r in plain if r["op"] == op}
            if ref:
                ratios = " | ".join(f"{got[c]['gb_per_s'] / ref[c]['gb_per_s']:.2f}" if c in got and c in ref
                                    else "-" for c in counts)
                print(f"| {op} | {k} / plain | {ratios} | |")
        ref = {r["ctas"]: r for r in plain if r["op"] == op}
        if ref:
            cells = " | ".join(f"{ref[c]['gb_per_s']:.0f}" if c in ref else "-" for c in counts)
            one = ref.get(1)
            print(f"| {op} | plain SM kernel | {cells} | {one['gb_per_s']:.1f} |" if one
                  else f"| {op} | plain SM kernel | {cells} | - |")
            series[f"plain SM kernel {op}"] = sorted((c, r["gb_per_s"]) for c, r in ref.items())
    for r in engine:
        print(f"\ncopy engine (cudaMemcpyAsync, {r['bytes'] >> 20} MiB, same GPU): {r['gb_per_s']:.0f} GB/s")
    if args.svg and series:
        svg_plot(series, f"{args.svg}-ctas.svg", "Transfer kernel on 1 H200: 64 KiB items, 3 stages",
                 "CTAs", "GB/s", x_text=str)

    print("\n## 2. Issue rate: Mitems/s (GB/s) against item size and stages, bulk copy, one walker\n")
    for k in bulk_kernels:
        for ctas in (1, 16):
            got = pick(kernel=k, op="bulk copy", ctas=ctas, walkers=1)
            stages = sorted({r["stages"] for r in got})
            items = sorted({r["item_bytes"] for r in got})
            if not got:
                continue
            print(f"{k}, {ctas} CTA(s):\n")
            print("| item | " + " | ".join(f"{s} stages" for s in stages) + " |")
            print("|---|" + "---|" * len(stages))
            for item in items:
                cell = {r["stages"]: r for r in got if r["item_bytes"] == item}
                print(f"| {size(item)} | " + " | ".join(
                    f"{cell[s]['mitems_per_s']:.2f} ({cell[s]['gb_per_s']:.0f})" if s in cell else "-"
                    for s in stages) + " |")
            print()

    walker_rows = [r for r in rows if r["walkers"] > 1]
    if walker_rows:
        print("## 3. Walkers: the best walkers x stages against the best with one walker\n")
        print("| op | kernel | item | CTAs | best, 1 walker (GB/s) | best (W x S) | GB/s | gain |")
        print("|---|---|---|---|---|---|---|---|")
        groups = defaultdict(list)
        for r in rows:
            if r["kernel"] in {w["kernel"] for w in walker_rows}:
                groups[(r["op"], r["kernel"], r["item_bytes"], r["ctas"])].append(r)
        for (op, k, item, ctas), got in sorted(groups.items()):
            one = [r for r in got if r["walkers"] == 1]
            many = [r for r in got if r["walkers"] > 1]
            if not one or not many:
                continue
            b1 = max(one, key=lambda r: r["gb_per_s"])
            bw = max(got, key=lambda r: r["gb_per_s"])
            print(f"| {op} | {k} | {size(item)} | {ctas} | {b1['gb_per_s']:.0f} (S{b1['stages']}) | "
                  f"{bw['walkers']} x {bw['stages']} | {bw['gb_per_s']:.0f} | {bw['gb_per_s'] / b1['gb_per_s']:.2f}x |")
        print()

    sm = [r for r in rows if r["kernel"].endswith("-all")]
    if sm:
        print("## 4. The SM path (128 threads) against TMA, same bytes: GB/s\n")
        for k in dict.fromkeys(r["kernel"] for r in sm):
            got = [r for r in sm if r["kernel"] == k]
            ops = list(dict.fromkeys(r["op"] for r in got))
            print(f"{k}:\n")
            print("| item | CTAs | " + " | ".join(ops) + " |")
            print("|---|---|" + "---|" * len(ops))
            for item in sorted({r["item_bytes"] for r in got}):
                for ctas in sorted({r["ctas"] for r in got}):
                    cell = {r["op"]: r for r in got if r["item_bytes"] == item and r["ctas"] == ctas}
                    print(f"| {size(item)} | {ctas} | " + " | ".join(
                        f"{cell[o]['gb_per_s']:.0f}" if o in cell else "-" for o in ops) + " |")
            print()

    if len(bulk_kernels) >= 2:
        a, b = bulk_kernels[0], bulk_kernels[1]
        print(f"## 5. {b} against {a}, the same cases (one walker)\n")
        index = {(r["op"], r["item_bytes"], r["ctas"], r["stages"]): r for r in pick(kernel=a, walkers=1)}
        ratios = []
        for r in pick(kernel=b, walkers=1):
            other = index.get((r["op"], r["item_bytes"], r["ctas"], r["stages"]))
            if other:
                ratios.append(r["gb_per_s"] / other["gb_per_s"])
        if ratios:
            ratios.sort()
            print(f"{len(ratios)} cases: {b}/{a} GB/s ratio min {ratios[0]:.3f}, "
                  f"median {ratios[len(ratios) // 2]:.3f}, max {ratios[-1]:.3f}")


if __name__ == "__main__":
    main()
