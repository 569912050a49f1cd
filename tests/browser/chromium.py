"""Debian's Chromium under chromedriver, as the viewer's tests and
``benchmarks/bench_viewer.py`` drive it: headless, no network of its own, a fresh
profile. The driver's path is given, so Selenium Manager (which would download one)
never runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1280,900",
)


def missing() -> str | None:
    """Why the browser cannot run here, or None."""
    absent = [path for path in (CHROMIUM, DRIVER) if not os.path.exists(path)]
    if absent:
        return f"no {' or '.join(absent)}: apt-get install chromium chromium-driver"
    return None


def open_browser(profile: Path, downloads: Path | None = None) -> Any:
    """A Chrome session with its profile in ``profile`` (a fresh folder) and its
    downloads going to ``downloads``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    if downloads is not None:
        options.add_experimental_option("prefs", {"download.default_directory": str(downloads)})
    return webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
