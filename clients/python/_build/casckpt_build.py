"""The PEP 517 build backend of the casckpt Python package: standard library only.

pyproject.toml names it (``backend-path = ["_build"]``), so ``pip install
./clients/python`` builds offline, with nothing to fetch. Without settings it
builds a pure-Python wheel (py3-none-any) whose client runs ``casckpt`` from
``$CASCKPT_BIN`` or PATH. With the config settings ``binary`` (a casckpt
executable), ``companion`` (casckpt-full, the whole build that it runs
for s3:// stores, status, migrate, clear-legacy and mcp) and ``platform``
(a wheel platform tag, such as ``manylinux_2_17_x86_64``) it builds that
platform's wheel, as ruff's are: the binaries inside the package
(``casckpt/_bin/casckpt`` and ``casckpt/_bin/casckpt-full``, ``.exe`` on
Windows) and a ``casckpt`` console command that runs the first.
``go run ./internal/release`` builds one per target this way.

The version is the repository's VERSION file (PKG-INFO's in an sdist).
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "casckpt"
# Every archive entry gets this time, so a build is reproducible.
EPOCH = (1980, 1, 1, 0, 0, 0)


def get_requires_for_build_wheel(config_settings=None):
    """Nothing: the standard library builds it."""
    return []


def get_requires_for_build_sdist(config_settings=None):
    """Nothing: the standard library builds it."""
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """Writes the wheel into wheel_directory and returns its file name."""
    settings = config_settings or {}
    binary, companion, platform = settings.get("binary"), settings.get("companion"), settings.get("platform")
    if not (bool(binary) == bool(companion) == bool(platform)):
        raise ValueError("casckpt_build: the config settings binary, companion and platform go together")
    meta = _metadata()
    if binary:  # the binary carries internal/textdiff, a port of git's xdiff
        meta["License"] += " AND LGPL-2.1-or-later"
    files = [(p.relative_to(ROOT).as_posix(), p.read_bytes(), 0o644) for p in _package_files()]
    if binary:
        exe = ".exe" if platform.startswith("win") else ""
        files.append((f"{PACKAGE}/_bin/casckpt{exe}", Path(binary).read_bytes(), 0o755))
        files.append((f"{PACKAGE}/_bin/casckpt-full{exe}", Path(companion).read_bytes(), 0o755))
    tag = f"py3-none-{platform or 'any'}"
    dist_info = f"{PACKAGE}-{meta['Version']}.dist-info"
    files.append((f"{dist_info}/METADATA", _metadata_text(meta).encode(), 0o644))
    files.append((f"{dist_info}/WHEEL", _wheel_text(tag, purelib=not binary).encode(), 0o644))
    if binary:
        entry = f"[console_scripts]\n{PACKAGE} = {PACKAGE}._binary:main\n"
        files.append((f"{dist_info}/entry_points.txt", entry.encode(), 0o644))
    files += [(f"{dist_info}/{name}", data, 0o644) for name, data in _licenses(binary)]
    wheel_name = f"{PACKAGE}-{meta['Version']}-{tag}.whl"
    _write_wheel(Path(wheel_directory) / wheel_name, files, f"{dist_info}/RECORD")
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    """Writes the source distribution (a pure-Python package) and returns its file name."""
    meta = _metadata()
    base = f"{PACKAGE}-{meta['Version']}"
    paths = [ROOT / "pyproject.toml", ROOT / "README.md", Path(__file__).resolve()] + _package_files()
    name = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        extra = [("PKG-INFO", _metadata_text(meta).encode())] + _licenses(True)
        for rel, data in extra + [(p.relative_to(ROOT).as_posix(), p.read_bytes()) for p in paths]:
            info = tarfile.TarInfo(f"{base}/{rel}")
            info.size, info.mode, info.mtime = len(data), 0o644, 315532800
            tar.addfile(info, io.BytesIO(data))
    return name


def _package_files():
    """The package's files in the source tree (no caches, no bundled binary), sorted."""
    return sorted(p for p in (ROOT / PACKAGE).rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
                  and p.relative_to(ROOT / PACKAGE).parts[0] != "_bin")


def _metadata():
    """The core metadata: pyproject.toml's [project] strings and the version."""
    project = _project_table((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {
        "Name": project["name"],
        "Version": _version(),
        "Summary": project.get("description", ""),
        "Requires-Python": project.get("requires-python", ""),
        "License": project.get("license", ""),
    }


def _project_table(text):
    """The [project] table's string values (tomllib where there is one)."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11: its one-line string values
        table, out = None, {}
        for line in text.splitlines():
            if line.startswith("["):
                table = line.strip()
            m = re.match(r'\s*([A-Za-z-]+)\s*=\s*"([^"]*)"\s*$', line)
            if table == "[project]" and m:
                out[m.group(1)] = m.group(2)
        return out
    return {k: v for k, v in tomllib.loads(text)["project"].items() if isinstance(v, str)}


def _licenses(with_binary):
    """The licence files (name, bytes): LICENSE, and with the binary LICENSE.textdiff;
    an sdist's own, else the repository's."""
    out = []
    for name, repo_path in (("LICENSE", "LICENSE"), ("LICENSE.textdiff", "internal/textdiff/LICENSE")):
        if name == "LICENSE.textdiff" and not with_binary:
            continue
        for path in (ROOT / name, ROOT.parent.parent / repo_path):
            if path.is_file():
                out.append((name, path.read_bytes()))
                break
    return out


def _version():
    """PKG-INFO's version in an sdist, else the repository's VERSION file."""
    pkg_info = ROOT / "PKG-INFO"
    if pkg_info.is_file():
        m = re.search(r"^Version: (\S+)$", pkg_info.read_text(encoding="utf-8"), re.M)
        if m:
            return m.group(1)
    version_file = ROOT.parent.parent / "VERSION"
    try:
        return version_file.read_text(encoding="utf-8").strip()
    except OSError as e:
        raise RuntimeError(f"casckpt_build: no version: {version_file}: {e}") from e


def _metadata_text(meta):
    lines = ["Metadata-Version: 2.1"] + [f"{k}: {v}" for k, v in meta.items() if v]
    readme = ROOT / "README.md"
    if readme.is_file():
        lines += ["Description-Content-Type: text/markdown", "", readme.read_text(encoding="utf-8")]
    return "\n".join(lines) + "\n"


def _wheel_text(tag, purelib):
    return (f"Wheel-Version: 1.0\nGenerator: casckpt_build\n"
            f"Root-Is-Purelib: {'true' if purelib else 'false'}\nTag: {tag}\n")


def _write_wheel(path, files, record_name):
    """Writes files (name, bytes, mode) and their RECORD into the zip at path."""
    record = []
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data, mode in files:
            _add(zf, name, data, mode)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{name},sha256={digest},{len(data)}")
        record.append(f"{record_name},,")
        _add(zf, record_name, ("\n".join(record) + "\n").encode(), 0o644)
    os.replace(tmp, path)


def _add(zf, name, data, mode):
    info = zipfile.ZipInfo(name, EPOCH)
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)
