# SPDX-License-Identifier: Apache-2.0
"""The run's outputs, with no torch: the JSON document (machines) and Markdown tables (people).

Document: {"harness", "family", "command", "env", "copy", "config", "points", "records",
"checks"} (and "notes_md", Markdown lines of a family that has some); one record per kernel and
point (core.Record.to_json), one `points` entry per point (bytes, floor, rotation, the copies'
times, and what the family adds).
"""

from __future__ import annotations

import json
import math
from typing import Any, Optional

FORMAT = 1


def document(family: str, command: str, env: dict[str, Any], copy: dict[str, Any],
             config: dict[str, Any], points: list[dict[str, Any]], records: list[Any],
             checks: Optional[list[dict[str, Any]]] = None) -> dict[str, Any]:
    return {
        "harness": FORMAT, "family": family, "command": command, "env": env, "copy": copy,
        "config": config, "points": points,
        "records": [r.to_json() if hasattr(r, "to_json") else r for r in records],
        "checks": checks or [],
    }


def _finite(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x


def to_json(doc: dict[str, Any]) -> str:
    """Strict JSON: NaN and infinities are written as null."""
    return json.dumps(_finite(doc), indent=1, allow_nan=False) + "\n"


def _fmt_us(us: Optional[float]) -> str:
    if us is None:
        return "-"
    return f"{us:.1f}" if us >= 10 else f"{us:.2f}"


def header(doc: dict[str, Any]) -> list[str]:
    e, c = doc["env"], doc["copy"]
    device = e.get("device", "?")
    if e.get("sm"):
        device += f" ({e['sm']}, {e.get('sms', '?')} SMs, {e.get('l2_mib', '?')} MiB L2)"
    lines = [
        f"# wyjit harness: {doc['family']}",
        "",
        f"- device: {device}",
        f"- driver {e.get('driver') or '?'} (CUDA {e.get('cuda_driver_api') or '?'}), "
        f"torch {e.get('torch', '?')} (CUDA {e.get('torch_cuda') or '?'}), "
        f"triton {e.get('triton') or 'none'}, wyjit {e.get('wyjit', '?')} "
        f"@ {e.get('wyjit_commit') or '?'}",
        f"- date: {e.get('date', '?')}",
        f"- command: `{doc['command']}`",
    ]
    if c:
        gib = c["bytes"] / (1 << 30)
        triton = f"{c['triton_gbs']:.0f}" if c.get("triton_gbs") else "n/a"
        lines.append(
            f"- copy yardstick ({gib:.0f} GiB each way, bytes read + written): torch copy_ "
            f"{c['torch_gbs']:.0f} GB/s, Triton copy kernel {triton} GB/s; floor = bytes / "
            f"{c['floor_gbs']:.0f} GB/s")
    cfg = doc["config"]
    lines.append(
        f"- timing: median of {cfg['replays']} graph replays of back-to-back calls on rotated "
        f"buffer sets (>= {cfg['footprint_mib']} MiB per cycle, >= {cfg['min_calls']} calls "
        "per graph, the same sets and calls for every kernel at a point)")
    return lines


def _table(points: list[dict[str, Any]], labels: list[str],
           cell: dict[tuple[int, int, str], str], extra: list[str]) -> list[str]:
    cols = ["K", "N", *extra, *labels]
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for pt in points:
        row = [str(pt["k"]), str(pt["n"])]
        if "MiB" in extra:
            row.append(f"{pt['bytes'] / (1 << 20):.1f}")
        if "floor us" in extra:
            row.append(_fmt_us(pt["floor_us"]))
        if "copy us" in extra:
            row.append(_fmt_us(pt.get("copy_us")))
        if "sets x calls" in extra:
            row.append(f"{pt['sets']}x{pt['calls']}" + ("" if pt.get("l2_cold", True) else "*"))
        row += [cell.get((pt["k"], pt["n"], label), "-") for label in labels]
        out.append("| " + " | ".join(row) + " |")
    return out


def markdown(doc: dict[str, Any]) -> str:
    """Per group (the point's fields other than K and N): a time table, cells `us (x copy)` with
    the fastest of a row in bold, then a % of floor table; skip and failure notes last."""
    lines = header(doc)
    records = doc["records"]
    groups: list[str] = []
    for r in records:
        if r["group"] not in groups:
            groups.append(r["group"])
    notes: list[str] = []
    for group in groups:
        recs = [r for r in records if r["group"] == group]
        labels: list[str] = []
        for r in recs:
            if r["label"] not in labels:
                labels.append(r["label"])
        pts = [p for p in doc["points"] if p["group"] == group]
        best: dict[tuple[int, int], float] = {}
        for r in recs:
            if r["us"] is not None:
                key = (r["k"], r["n"])
                best[key] = min(best.get(key, float("inf")), r["us"])
        time_cell: dict[tuple[int, int, str], str] = {}
        pct_cell: dict[tuple[int, int, str], str] = {}
        for r in recs:
            key = (r["k"], r["n"], r["label"])
            if r["us"] is None:
                time_cell[key] = pct_cell[key] = r["status"]
                notes.append(f"- {r['label']} K={r['k']} N={r['n']} ({group}): {r['status']}: "
                             f"{r['note']}")
                continue
            text = _fmt_us(r["us"]) + (f" ({r['x_copy']:.2f})" if r["x_copy"] else "")
            time_cell[key] = f"**{text}**" if r["us"] == best[(r["k"], r["n"])] else text
            pct_cell[key] = f"{r['pct_of_floor']:.0f}%"
        lines += ["", f"## {group}", "",
                  "us per call (x a graph-replayed copy of the same bytes):", ""]
        lines += _table(pts, labels, time_cell, ["MiB", "floor us", "copy us", "sets x calls"])
        lines += ["", "% of the copy floor (floor us / us):", ""]
        lines += _table(pts, labels, pct_cell, [])
    variants = {}
    for r in records:
        if r["variant"]:
            variants.setdefault(r["label"], r["variant"])
    if variants:
        lines += ["", "## Runners", ""]
        lines += [f"- {label}: `{v}`" for label, v in variants.items()]
    if any(not p.get("l2_cold", True) for p in doc["points"]):
        lines += ["", "\\* the rotation was capped by --max-sets: one cycle touches less than "
                  f"{doc['config']['footprint_mib']} MiB"]
    lines += doc.get("notes_md") or []
    if notes:
        lines += ["", "## Not measured", "", *notes]
    checks = doc.get("checks") or []
    if checks:
        lines += ["", "## Check (max |x - ref| / max |ref|)", "",
                  "| point | runner | key | vs float64 | vs wyjit | tolerance | ok |",
                  "|---|---|---|---|---|---|---|"]
        for c in checks:
            vs_w = "-" if c.get("rel_vs_wyjit") is None else f"{c['rel_vs_wyjit']:.2e}"
            lines.append(f"| K={c['k']} N={c['n']} | {c['label']} | {c['key']} | "
                         f"{c['rel_vs_ref']:.2e} | {vs_w} | {c['tolerance']:.0e} | "
                         f"{'yes' if c['ok'] else 'NO'} |")
    return "\n".join(lines) + "\n"
