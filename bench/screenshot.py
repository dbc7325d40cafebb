"""The README's picture of the page: `kg build seeds/`, then a screenshot of its graph.html as it opens.

Builds the seeds as the README's first command does (pinned: SOURCE_DATE_EPOCH=1700000000,
--no-cache, into a temporary folder), opens graph.html from file:// in headless Chromium with
the network blocked, waits until the page is drawn and saves the default view as a PNG.
Run by hand from the repository root after a change to the page, and commit the picture:

    .venv/bin/python bench/screenshot.py                      # writes docs/images/page.png
    .venv/bin/python bench/screenshot.py --graph out/ -o /tmp/page.png   # an existing build instead
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
MAX_BYTES = 300_000  # the README's picture stays small


def build_seeds(out: Path) -> None:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    command = [sys.executable, "-m", "kg", "build", str(ROOT / "seeds"), "-o", str(out), "--no-cache"]
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)


def screenshot(page_path: Path, png: Path, width: int, height: int) -> list[str]:
    """Save the page's default view; returns what went wrong in the page (errors, fetches)."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("chromium is not installed (apt-get install -y chromium)")
    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=BROWSER_ARGS)
        context = browser.new_context(viewport={"width": width, "height": height})
        context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
                      else (problems.append(f"fetch: {route.request.url}"), route.abort()))  # fmt: skip
        page = context.new_page()
        page.on("console", lambda message: message.type == "error" and problems.append(f"console: {message.text}"))
        page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
        page.goto(page_path.resolve().as_uri())
        page.wait_for_function("window.kgReady === true", timeout=60_000)
        png.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(png))
        browser.close()
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graph", type=Path, default=None, help="a built folder (graph.html in it) instead of building the seeds")
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "images" / "page.png", help="PNG to write")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=800)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        folder = args.graph
        if folder is None:
            folder = Path(tmp) / "out"
            build_seeds(folder)
        problems = screenshot(folder / "graph.html", args.output, args.width, args.height)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    size = args.output.stat().st_size
    print(f"wrote {args.output} ({args.width} × {args.height}, {size / 1000:.0f} kB)")
    if size > MAX_BYTES:
        print(f"larger than {MAX_BYTES / 1000:.0f} kB: too big for the README", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
