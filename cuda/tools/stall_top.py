#!/usr/bin/env python3
"""Prints the rows of an ncu SASS table (--page source --csv --print-source
sass) with the most warp stall samples, the share of each stall reason over
all rows, and each out-of-line function's share (the code from a CALL
target to its RET: the field product, the squaring, the inversion) with its
executed warp instructions.

    stall_top.py sass.csv [N]
"""
import csv
import sys


def num(s):
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return 0.0


def functions(rows, addr, src, samp, execd, total):
    """The samples and executed instructions of each called function."""
    targets = set()
    for r in rows:
        ins = r[src].strip()
        if ins.startswith("CALL.REL"):
            targets.add(int(ins.split()[-1], 16))
    agg, cur = {}, "kernel body"
    for r in rows:
        a = int(r[addr], 16)
        if a in targets:
            cur = f"function at {a:#x}"
        k = agg.setdefault(cur, [0.0, 0.0, 0])
        k[0] += num(r[samp])
        k[1] += num(r[execd])
        k[2] += 1
        if r[src].strip().startswith("RET"):
            cur = "kernel body"
    for name, (smp, ex, n) in sorted(agg.items(), key=lambda kv: -kv[1][0]):
        print(f"  {name}: {100 * smp / total:.1f} % of samples, {ex / 1e6:.1f} M warp instructions executed, {n} instructions")


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    with open(path, newline="") as f:
        lines = [l for l in f if l.strip() and not l.startswith("==")]
    # the table starts at its header (a "Kernel Name" line comes first)
    rows, header = [], None
    for rec in csv.reader(lines):
        if rec and rec[0] in ("Address", "# Address"):
            header = rec
        elif header and len(rec) == len(header):
            rows.append(dict(zip(header, rec)))
    if not rows:
        print(f"{path}: no rows")
        return 1
    cols = list(rows[0].keys())
    samp = next((c for c in cols if c.startswith("Warp Stall Sampling (All")), None)
    if samp is None:
        print(f"{path}: no stall sampling column; columns: {cols}")
        return 1
    src = next((c for c in cols if c in ("Source", "# Source")), cols[1])
    addr = cols[0]
    execd = next((c for c in cols if c.startswith("Instructions Executed")), None)
    total = sum(num(r[samp]) for r in rows) or 1.0
    print(f"{path}: {len(rows)} rows, {total:.0f} samples")
    # stall reasons: the per-reason columns, when the CSV has them
    reasons = [c for c in cols if c.startswith("stall_") and "(Not Issued)" not in c]
    shares = sorted(((sum(num(r[c]) for r in rows), c) for c in reasons), reverse=True)
    print("  " + ", ".join(f"{c[6:]} {100 * s / total:.1f} %" for s, c in shares if s))
    if execd:
        functions(rows, addr, src, samp, execd, total)
    rows.sort(key=lambda r: -num(r[samp]))
    for r in rows[:n]:
        e = f" exec {num(r[execd]):.0f}" if execd else ""
        top = sorted(((num(r[c]), c[6:]) for c in reasons), reverse=True)[:2]
        why = " ".join(f"{c}:{v:.0f}" for v, c in top if v)
        print(f"{100 * num(r[samp]) / total:5.2f} % {r[addr][-8:]:>8} {r[src].strip()[:70]:<70} {why}{e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
