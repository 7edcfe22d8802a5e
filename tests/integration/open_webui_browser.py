"""A person's chat in Open WebUI, driven in headless Chromium by Playwright; run by the Open WebUI venv's
Python (Playwright is not in the project's venv): ``python open_webui_browser.py URL MODEL QUESTION CITED OUT``.
Opens the page, closes the release notes shown on a first visit, picks MODEL in the model selector, types
QUESTION, sends it, waits for the reply to be complete, opens its thinking and then the citation chip named
CITED, and writes to OUT as JSON what the page shows: the reply, the thinking, the reply's buttons (its
citation chips among them), the opened citation's text, the model named on the reply and the whole page's
text, with timings.
On failure a screenshot and the page's text are left beside OUT."""

import json
import sys
import time
from contextlib import suppress
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"  # Debian's: Playwright's own browser download is not used


def chat(page, url: str, model: str, question: str, cited: str) -> dict:
    started = time.perf_counter()
    page.goto(url)
    page.locator("#chat-input").wait_for(timeout=60_000)
    with suppress(PlaywrightTimeout):  # an admin's first visit shows the release notes in a modal over the page
        page.get_by_role("button", name="Okay, Let's Go!").click(timeout=5_000)
    loaded = time.perf_counter() - started

    page.locator("#model-selector-model-button").click()
    offered = page.get_by_role("option").all_inner_texts()
    page.get_by_role("option").filter(has_text=model).first.click()
    page.locator("#chat-input").click()
    page.keyboard.type(question)
    page.keyboard.press("Enter")
    sent = time.perf_counter()

    reply = page.locator(".chat-assistant").last
    reply.wait_for(timeout=60_000)
    page.get_by_text("Response complete").wait_for(state="attached", timeout=180_000)
    answered = time.perf_counter() - sent

    shown = reply.inner_text()  # the thinking folded: one "Thought for N seconds" line, then the reply
    thought = reply.get_by_role("button").filter(has_text="Thought for").first
    thinking = ""
    if thought.count():
        folded = thought.inner_text().strip()
        shown = shown.strip().removeprefix(folded)
        thought.click()
        page.wait_for_timeout(500)
        thinking = reply.inner_text().strip().removeprefix(folded).split(shown.strip()[:40])[0]
    buttons = [b.strip() for b in reply.get_by_role("button").all_inner_texts() if b.strip()]
    opened = ""
    chip = reply.get_by_role("button").filter(has_text=cited)
    if chip.count():  # a citation chip: it opens the passage behind it
        chip.first.click()
        dialog = page.get_by_role("dialog").last
        with suppress(PlaywrightTimeout):
            dialog.wait_for(timeout=10_000)
            opened = dialog.inner_text()
    return {
        "offered": [o.strip() for o in offered],
        "model": page.locator("#response-message-model-name").last.inner_text().strip(),
        "chat": page.locator("#chat-pane").inner_text(),
        "reply": shown.strip(),
        "thinking": thinking,
        "buttons": buttons,
        "opened": opened,
        "page": page.locator("body").inner_text(),
        "seconds": {"page": round(loaded, 1), "answer": round(answered, 1)},
    }


def main() -> int:
    url, model, question, cited, out = sys.argv[1:6]
    out = Path(out)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            try:
                out.write_text(json.dumps(chat(page, url, model, question, cited)))
            except Exception:
                page.screenshot(path=str(out.with_suffix(".png")), full_page=True)
                out.with_suffix(".txt").write_text(page.locator("body").inner_text())
                raise
            page.screenshot(path=str(out.with_suffix(".png")), full_page=True)
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
