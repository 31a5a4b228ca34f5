# SPDX-License-Identifier: Apache-2.0
"""Fills the ignored `.peers/` folder with the peer kernels the harness runs (see each peer
module's SOURCE, collected by peers/registry.py) and writes `.peers/<subdir>/MANIFEST.json` for
each subdir (every file, where it came from, its sha256).

    python3 tools/bench/harness/fetch_peers.py                       # git dirs found or cloned
    python3 tools/bench/harness/fetch_peers.py --git-dir sgl-project/sglang=/path/to/sglang.git
    python3 tools/bench/harness/fetch_peers.py --tree NVIDIA/TensorRT-LLM=DIR  # files at DIR/<path>
    python3 tools/bench/harness/fetch_peers.py --stubs-only          # tree filled by other means
    python3 tools/bench/harness/fetch_peers.py --verify              # list what is there

Each file comes from the first of: `git show COMMIT:PATH` in --git-dir OWNER/NAME=DIR, or in a
local mirror `/work/.mirror/OWNER+NAME`; `git show` in a mirror of one of the peer's
alternates (another repository with the same bytes, checked against the peer's sha256 pins);
a copy of DIR/PATH given with --tree OWNER/NAME=DIR (checked against the pins where there are
some); with --clone, a blob-less clone into a temporary folder (needs network). Stubs and
fallbacks are written from their text in the registry. Nothing here is committed: `.peers/` is
ignored.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import subprocess
import sys
import tempfile
from typing import Optional

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from harness.peers import registry  # noqa: E402

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
MIRRORS = pathlib.Path("/work/.mirror")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _mirror(repo: str) -> Optional[str]:
    """The git directory of a local mirror of `repo`, if there is one."""
    top = MIRRORS / repo.replace("/", "+")
    # NOTE: a mirror may be a bare directory, hold one (`repo/`), or hold a work tree's .git.
    for d in (top / "repo" / ".git", top / "repo", top / ".git", top):
        if (d / "HEAD").is_file() and (d / "objects").is_dir():
            return str(d)
    return None


def _clone(repo: str, tmp: pathlib.Path) -> str:
    dest = tmp / repo.replace("/", "+")
    if not dest.is_dir():
        subprocess.run(["git", "clone", "--quiet", "--bare", "--filter=blob:none",
                        f"https://github.com/{repo}", str(dest)], check=True)
    return str(dest)


def _show(git_dir: str, commit: str, path: str) -> Optional[bytes]:
    done = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"],
                          capture_output=True)
    if done.returncode != 0:
        # NOTE: a blob-less or shallow copy may lack the commit: fetch it, then try once more.
        subprocess.run(["git", f"--git-dir={git_dir}", "fetch", "--quiet", "origin", commit],
                       capture_output=True)
        done = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"],
                              capture_output=True)
    return done.stdout if done.returncode == 0 else None


def fetch_file(p: registry.Peer, path: str, given: dict[str, str], trees: dict[str, str],
               clone: bool, tmp: pathlib.Path) -> tuple[Optional[bytes], str, list[str]]:
    """(bytes or None, where they came from, problems) for one registry file, sources in the
    order of the module docstring."""
    pins = dict(p.sha256)
    problems: list[str] = []
    git_dir = given.get(p.repo) or _mirror(p.repo)
    if git_dir is not None:
        data = _show(git_dir, p.commit, path)
        if data is not None:
            if path in pins and _sha256(data) != pins[path]:
                problems.append(f"{path}: git show {p.commit[:12]} differs from the sha256 pin "
                                "(update the pin in the adapter)")
            return data, f"git show {p.commit}:{path}", problems
    for alt in (p.alternates if path in pins else ()):
        alt_dir = given.get(alt.repo) or _mirror(alt.repo)
        data = None if alt_dir is None else _show(alt_dir, alt.commit, path)
        if data is not None and pins.get(path) == _sha256(data):
            return data, f"git show {alt.commit}:{path} in {alt.repo} (same sha256)", problems
        if data is not None:
            problems.append(f"{path}: {alt.repo} @ {alt.commit[:12]} differs from the pin")
    if p.repo in trees:
        f = pathlib.Path(trees[p.repo]) / path
        if f.is_file():
            data = f.read_bytes()
            if path not in pins:
                return data, f"copied from {f} (no pin to check it against)", problems
            if pins[path] == _sha256(data):
                return data, f"copied from {f} (sha256 pin matches)", problems
            problems.append(f"{path}: {f} differs from the sha256 pin, not taken")
    if clone:
        data = _show(_clone(p.repo, tmp), p.commit, path)
        if data is not None:
            return data, f"git show {p.commit}:{path} (blob-less clone)", problems
    problems.append(f"{path}: no source for {p.repo} @ {p.commit[:12]} (pass --git-dir, "
                    "--tree or --clone)")
    return None, "", problems


def _stubs() -> dict[str, registry.Stub]:
    """Every stub and fallback by its place under the peers directory (shared ones once)."""
    out: dict[str, registry.Stub] = {}
    for p in registry.PEERS.values():
        placed = [(f"{p.tree}/{s.path}", s) for s in p.stubs]
        placed += [(f"{p.fallback_dir}/{s.path}", s) for s in p.fallbacks]
        for where, s in placed:
            if where in out and out[where].text != s.text:
                raise SystemExit(f"two different stubs for {where}")
            out[where] = s
    return out


def manifest(peers_dir: pathlib.Path, origin: dict[str, str], subdir: str) -> dict:
    """What is under `peers_dir` for every registry file and stub of one subdir."""
    files = []
    for p in registry.PEERS.values():
        if p.subdir != subdir:
            continue
        pins = dict(p.sha256)
        for path in p.files:
            where = f"{p.tree}/{path}"
            f = peers_dir / where
            sha = _sha256(f.read_bytes()) if f.is_file() else None
            files.append({
                "file": where, "peer": p.key, "repo": p.repo, "commit": p.commit, "path": path,
                "kind": "kernel" if path == p.kernel_file else "closure",
                "present": f.is_file(), "bytes": f.stat().st_size if f.is_file() else None,
                "sha256": sha, "pinned": pins.get(path),
                "origin": origin.get(where, "present (not written by this run)"),
            })
    for where, s in _stubs().items():
        if where.split("/", 1)[0] != subdir:
            continue
        f = peers_dir / where
        files.append({"file": where, "kind": "stub", "why": s.why, "present": f.is_file(),
                      "sha256": _sha256(f.read_bytes()) if f.is_file() else None})
    return {"subdir": subdir, "files": files}


def _origins(path: pathlib.Path) -> dict[str, str]:
    """Where an earlier run took each file from (kept for files this run leaves alone)."""
    try:
        files = json.loads(path.read_text())["files"]
    except (OSError, ValueError, KeyError):
        return {}
    return {f["file"]: f["origin"] for f in files if f.get("present") and "origin" in f
            and not f["origin"].startswith("present")}


def _pairs(items: list[str]) -> dict[str, str]:
    return dict(g.split("=", 1) for g in items)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--peers-dir", default=str(REPO_ROOT / ".peers"))
    ap.add_argument("--git-dir", action="append", default=[], metavar="OWNER/NAME=DIR")
    ap.add_argument("--tree", action="append", default=[], metavar="OWNER/NAME=DIR",
                    help="a folder holding the repository's files at their paths")
    ap.add_argument("--clone", action="store_true", help="clone repositories not found locally")
    ap.add_argument("--stubs-only", action="store_true", help="write stubs and the manifest only")
    ap.add_argument("--verify", action="store_true", help="only report what is there")
    args = ap.parse_args(argv)
    peers_dir = pathlib.Path(args.peers_dir)
    given, trees = _pairs(args.git_dir), _pairs(args.tree)
    origin: dict[str, str] = {}
    problems: list[str] = []
    subdirs = sorted({p.subdir for p in registry.PEERS.values()})

    if not args.verify:
        if not args.stubs_only:
            with tempfile.TemporaryDirectory() as tmp:
                for p in registry.PEERS.values():
                    for path in p.files:
                        data, where, bad = fetch_file(p, path, given, trees, args.clone,
                                                      pathlib.Path(tmp))
                        dest = peers_dir / p.tree / path
                        if data is None and dest.is_file():
                            continue  # put there earlier or by other means: left as it is
                        problems += [f"{p.key}: {b}" for b in bad]
                        if data is not None:
                            dest.parent.mkdir(parents=True, exist_ok=True)
                            dest.write_bytes(data)
                            origin[f"{p.tree}/{path}"] = where
        for where, s in _stubs().items():
            (peers_dir / where).parent.mkdir(parents=True, exist_ok=True)
            (peers_dir / where).write_text(s.text)
        for sub in subdirs:
            (peers_dir / sub).mkdir(parents=True, exist_ok=True)
            origin = {**_origins(peers_dir / sub / "MANIFEST.json"), **origin}
            (peers_dir / sub / "MANIFEST.json").write_text(
                json.dumps(manifest(peers_dir, origin, sub), indent=1) + "\n")

    missing, total, count = [], 0, 0
    for sub in subdirs:
        for f in manifest(peers_dir, origin, sub)["files"]:
            count += 1
            mark = "ok " if f["present"] else "MISSING"
            extra = f"{f['commit'][:10]} {f['kind']}" if "commit" in f else "stub"
            if f.get("pinned") and f["present"] and f["sha256"] != f["pinned"]:
                mark = "DIFFERS"
                problems.append(f"{f['file']}: sha256 differs from its pin")
            print(f"{mark} {f['file']}  ({extra})")
            if f["present"]:
                total += (peers_dir / f["file"]).stat().st_size
            else:
                missing.append(f["file"])
    for p in problems:
        print(f"fetch_peers: {p}", file=sys.stderr)
    print(f"fetch_peers: {count - len(missing)} files present, {len(missing)} missing, "
          f"{total / 1024:.0f} KiB under {peers_dir}/{{{','.join(subdirs)}}}")
    return 1 if missing or any("differs" in p for p in problems) else 0


if __name__ == "__main__":
    sys.exit(main())
