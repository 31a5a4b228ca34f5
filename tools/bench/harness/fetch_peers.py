# SPDX-License-Identifier: Apache-2.0
"""Fills the ignored `.peers/` folder with the peer kernels the harness runs (see
each peer module's SOURCE, collected by peers/registry.py) and writes `.peers/classic/MANIFEST.json` (every file, where it came from,
its sha256).

    python3 tools/bench/harness/fetch_peers.py                       # git dirs found or cloned
    python3 tools/bench/harness/fetch_peers.py --git-dir sgl-project/sglang=/path/to/sglang.git
    python3 tools/bench/harness/fetch_peers.py --stubs-only          # tree filled by other means
    python3 tools/bench/harness/fetch_peers.py --verify              # list what is there

A repository's git directory is, in order: --git-dir OWNER/NAME=DIR; a local mirror
`/work/.mirror/OWNER+NAME`; with --clone, a blob-less clone into a temporary folder (needs
network). Each file is `git --git-dir=DIR show COMMIT:PATH`, byte for byte. Stubs and fallbacks
are written from their text in the registry. Nothing here is committed: `.peers/` is ignored.
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


def _sha256(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _git_dir(repo: str, given: dict[str, str], clone: bool, tmp: pathlib.Path) -> Optional[str]:
    if repo in given:
        return given[repo]
    mirror = MIRRORS / repo.replace("/", "+")
    if mirror.is_dir():
        # NOTE: a mirror may hold the work tree's .git or be a bare directory.
        return str(mirror / ".git") if (mirror / ".git").is_dir() else str(mirror)
    if not clone:
        return None
    dest = tmp / repo.replace("/", "+")
    subprocess.run(["git", "clone", "--quiet", "--bare", "--filter=blob:none",
                    f"https://github.com/{repo}", str(dest)], check=True)
    return str(dest)


def _show(git_dir: str, commit: str, path: str) -> bytes:
    done = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"],
                          capture_output=True)
    if done.returncode != 0:
        # NOTE: a blob-less or shallow copy may lack the commit: fetch it, then try once more.
        subprocess.run(["git", f"--git-dir={git_dir}", "fetch", "--quiet", "origin", commit],
                       capture_output=True)
        done = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"],
                              capture_output=True, check=True)
    return done.stdout


def _write(path: pathlib.Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _stubs() -> dict[str, registry.Stub]:
    """Every stub by its place under the peers directory (shared ones once)."""
    out: dict[str, registry.Stub] = {}
    for p in registry.PEERS.values():
        for s in p.stubs:
            where = f"{p.tree}/{s.path}"
            if where in out and out[where].text != s.text:
                raise SystemExit(f"two different stubs for {where}")
            out[where] = s
    for s in registry.FALLBACKS:
        out[f"{registry.SUBDIR}/{registry.FALLBACK}/{s.path}"] = s
    return out


def manifest(peers_dir: pathlib.Path, origin: dict[str, str]) -> dict:
    """What is under `peers_dir` for every registry file and stub."""
    files = []
    for p in registry.PEERS.values():
        for path in p.files:
            where = f"{p.tree}/{path}"
            f = peers_dir / where
            files.append({
                "file": where, "peer": p.key, "repo": p.repo, "commit": p.commit, "path": path,
                "kind": "kernel" if path == p.kernel_file else "closure",
                "present": f.is_file(), "bytes": f.stat().st_size if f.is_file() else None,
                "sha256": _sha256(f) if f.is_file() else None,
                "origin": origin.get(where, "present (not written by this run)"),
            })
    for where, s in _stubs().items():
        f = peers_dir / where
        files.append({"file": where, "kind": "stub", "why": s.why, "present": f.is_file(),
                      "sha256": _sha256(f) if f.is_file() else None})
    return {"subdir": registry.SUBDIR, "files": files}


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--peers-dir", default=str(REPO_ROOT / ".peers"))
    ap.add_argument("--git-dir", action="append", default=[], metavar="OWNER/NAME=DIR")
    ap.add_argument("--clone", action="store_true", help="clone repositories not found locally")
    ap.add_argument("--stubs-only", action="store_true", help="write stubs and the manifest only")
    ap.add_argument("--verify", action="store_true", help="only report what is there")
    args = ap.parse_args(argv)
    peers_dir = pathlib.Path(args.peers_dir)
    given = dict(g.split("=", 1) for g in args.git_dir)
    origin: dict[str, str] = {}

    if not args.verify:
        if not args.stubs_only:
            with tempfile.TemporaryDirectory() as tmp:
                for p in registry.PEERS.values():
                    git_dir = _git_dir(p.repo, given, args.clone, pathlib.Path(tmp))
                    if git_dir is None:
                        print(f"fetch_peers: no git directory for {p.repo} (pass --git-dir or "
                              "--clone); its files are left as they are", file=sys.stderr)
                        continue
                    for path in p.files:
                        _write(peers_dir / p.tree / path, _show(git_dir, p.commit, path))
                        origin[f"{p.tree}/{path}"] = f"git show {p.commit}:{path}"
        for where, s in _stubs().items():
            _write(peers_dir / where, s.text.encode())
        m = manifest(peers_dir, origin)
        (peers_dir / registry.SUBDIR).mkdir(parents=True, exist_ok=True)
        (peers_dir / registry.SUBDIR / "MANIFEST.json").write_text(json.dumps(m, indent=1) + "\n")

    m = manifest(peers_dir, origin)
    missing = [f["file"] for f in m["files"] if not f["present"]]
    for f in m["files"]:
        mark = "ok " if f["present"] else "MISSING"
        extra = f"{f['commit'][:10]} {f['kind']}" if "commit" in f else "stub"
        print(f"{mark} {f['file']}  ({extra})")
    total = sum((peers_dir / f["file"]).stat().st_size for f in m["files"] if f["present"])
    print(f"fetch_peers: {len(m['files']) - len(missing)} files present, {len(missing)} missing, "
          f"{total / 1024:.0f} KiB under {peers_dir / registry.SUBDIR}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
