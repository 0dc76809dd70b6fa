"""Guard against shadowing the standard library: ``reassignd/http`` must never shadow ``http``, and
no script in ``bench/`` or ``scripts/`` a stdlib module."""

from __future__ import annotations

import http
import http.client
import sys
import sysconfig
from pathlib import Path

import reassignd
import reassignd.http


def test_http_is_the_standard_librarys() -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    assert http.__file__ is not None
    assert Path(http.__file__).resolve().is_relative_to(stdlib), http.__file__
    assert Path(http.client.__file__).resolve().is_relative_to(stdlib)


def test_reassignd_http_is_the_packages() -> None:
    package_dir = Path(reassignd.__file__).resolve().parent
    assert reassignd.http.__file__ is not None
    assert Path(reassignd.http.__file__).resolve() == package_dir / "http" / "__init__.py"
    assert reassignd.http.__name__ == "reassignd.http"


def test_no_top_level_http_package_in_the_repository() -> None:
    root = Path(reassignd.__file__).resolve().parent.parent
    assert not (root / "http" / "__init__.py").exists()
    assert not (root / "http.py").exists()


def test_no_script_directory_shadows_a_standard_library_module() -> None:
    """A script run as ``python bench/x.py`` has ``bench/`` first on ``sys.path``: a ``queue.py``
    there breaks every thread pool of every other script in it (asyncio.to_thread included)."""
    root = Path(reassignd.__file__).resolve().parent.parent
    shadowing = [
        str(path.relative_to(root))
        for folder in ("bench", "scripts")
        for path in sorted((root / folder).glob("*.py"))
        if path.stem in sys.stdlib_module_names
    ]
    assert shadowing == []
