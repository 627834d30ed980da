"""A screenshot of the dashboard with Debian's Chromium, headless, through Selenium and chromium-driver.

No browser is downloaded: ``./dev setup`` installs ``chromium`` and ``chromium-driver`` with apt-get.
Only loopback URLs are opened, with every background network feature of the browser switched off."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from kafka_balancer.errors import ClusterError

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1400,1800")


def browser_missing() -> str | None:
    """Why the browser cannot run here, or None."""
    for path in (CHROMIUM, DRIVER):
        if not Path(path).exists():
            return f"{path} is missing"
    return None


def open_browser(profile: Path) -> Any:
    """A headless Chromium driven by Selenium, with a fresh profile in ``profile``."""
    why = browser_missing()
    if why:
        raise ClusterError(f"Chromium is not installed ({why})",
                           hint="run ./dev setup (it installs chromium and chromium-driver with apt-get)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for f in FLAGS:
        opts.add_argument(f)
    opts.add_argument(f"--user-data-dir={profile}")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=DRIVER), options=opts)


def screenshot(url: str, dest: Path, settle_s: float = 6.0) -> Path:
    """Open ``url`` (loopback only), wait until the page has rendered the model, save a PNG."""
    if not url.startswith(("http://127.", "https://127.", "http://localhost", "https://localhost")):
        raise ClusterError(f"refusing to open {url}: only loopback addresses")
    profile = Path(tempfile.mkdtemp(prefix="kb-chromium-"))
    try:
        drv = open_browser(profile)
        try:
            drv.get(url)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if drv.execute_script("return document.querySelectorAll('#load svg').length") >= 4:
                    break
                time.sleep(0.5)
            time.sleep(settle_s)
            dest.parent.mkdir(parents=True, exist_ok=True)
            height = int(drv.execute_script("return document.documentElement.scrollHeight"))
            # the window's own frame takes part of its height: size it so the viewport holds the page
            frame = int(drv.execute_script("return window.outerHeight - window.innerHeight"))
            drv.set_window_size(1400, max(900, min(4000, height + frame + 20)))
            drv.save_screenshot(str(dest))
        finally:
            drv.quit()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    return dest
