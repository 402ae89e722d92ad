"""Check that every direct dependency is installed at the floor pyproject.toml declares.

CI installs the package with ``uv pip install --resolution lowest-direct -e '.[test]'`` and runs
the offline suite on it (``.ci/run``). A floor that cannot be installed together with the others
(a resolver lifts it silently) would go untested: this script names each such floor, so the
declared ones are the ones the suite ran on.

Usage: ``python scripts/check_floors.py [EXTRA ...]`` (default: ``test``), with the Python of
the environment to check. Exits 1 when a direct dependency is not at its floor.
"""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.version import Version

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def floor(req: Requirement) -> Version | None:
    """The lowest version ``req`` allows (its ``>=`` or ``==`` bound), if it names one."""
    bounds = [Version(s.version) for s in req.specifier if s.operator in (">=", "==", "~=")]
    return max(bounds) if bounds else None


def direct_requirements(extras: list[str]) -> list[Requirement]:
    project = tomllib.loads(PYPROJECT.read_text("utf-8"))["project"]
    lines = list(project["dependencies"])
    for extra in extras:
        lines += project["optional-dependencies"][extra]
    return [Requirement(line) for line in lines]


def main(argv: list[str]) -> int:
    extras = argv or ["test"]
    wrong = 0
    seen: set[str] = set()
    for req in direct_requirements(extras):
        if req.name in seen or (req.marker and not req.marker.evaluate()):
            continue
        seen.add(req.name)
        low = floor(req)
        try:
            have = Version(version(req.name))
        except PackageNotFoundError:
            print(f"MISSING  {req.name} (declared {req.specifier})")
            wrong += 1
            continue
        ok = low is None or have == low
        wrong += not ok
        print(f"{'ok ' if ok else 'NOT AT FLOOR'}  {req.name}=={have}  (declared {req.specifier})")
    if wrong:
        print(
            f"{wrong} direct dependencies not at their declared floor: raise the floor to the "
            "version installed (it is what the suite ran on)"
        )
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
