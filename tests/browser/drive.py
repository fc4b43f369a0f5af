#!/usr/bin/python3
"""Drives Debian's Chromium (headless, through chromium-driver and python3-selenium) for test_html.cpp.

    drive.py REQUEST.json

The request is a list of actions, done in order in one browser with networking turned off; the answer,
on stdout, is a JSON list with one result per action. This script only observes: the test asserts.

For a page served by attn serve (or a stand-in) on loopback, the request is an object instead:
{"loopback": true, "actions": [...]}. Then the browser may reach 127.0.0.1 and ::1 (any port) and nothing
else: every host name still resolves to nothing, every other address still goes to the closed proxy, and
the DevTools network stays on. The list form is the default and keeps networking off entirely.
With "server": [ARGV...] too, drive.py starts that program first (attn serve --port 0, say), reads the
address it prints on stderr (the first http://127.0.0.1:PORT/ or http://[::1]:PORT/), puts it, without
its last slash, in place of "{server}" in every action's text, and stops the program (SIGTERM, then
SIGKILL after 5 s) once the actions are done; what it printed is copied to drive.py's stderr.

Actions ({"do": ...}):
  load URL                 -> {"console": [messages of level WARNING or SEVERE], "resources": [URLs fetched]}
  eval JS                  -> the value of `return (JS)` in the page
  keys [KEY, ...]          -> null; keys as a user types them, to the focused element (Selenium key names:
                              "ArrowRight", "PageDown", "Space", "Home", "End", "Escape", "Tab" or characters)
  click CSS / hover CSS / focus CSS -> null
  type CSS TEXT            -> null; TEXT typed, key by key, into the element matching CSS (focused first)
  wait JS [SECONDS]        -> the first truthy value of `return (JS)`, polled every 50 ms; or
                              {"timeout": the last value} after SECONDS (default 10): waits for an answer of
                              the server to be drawn, and never passes by itself (the test asserts the value)
  pixels [CSS, ...] [DX, DY] -> a screenshot of the window; for each selector, the first match scrolled into
                              view and the [r, g, b] of the pixel DX, DY inside its top-left corner; and
                              "colors": how many distinct colours the screenshot has
  pdf                      -> the text of the page printed to PDF (pdftotext, poppler-utils), each page's
                              left column, then its right (the handout has two)
  console                  -> the messages of level WARNING or SEVERE logged since the last load or console
  alert                    -> whether a JavaScript dialog is open
  dark BOOL                -> null; emulates prefers-color-scheme (true: dark, false: light)
  viewport [W, H]          -> [innerWidth, innerHeight]; the window's content area set to W x H CSS pixels
                              (a projector's 1920 x 1080, a laptop's 1280 x 720), until the next viewport
  media TYPE               -> null; emulates a CSS media type ("print", or "" for the screen)
  pdfpages                 -> the number of pages of the page printed to PDF (pdfinfo, poppler-utils)
  pdfboxes CSS             -> the page printed to PDF; for each element matching CSS, in order, the numbers
                              of the PDF pages its text starts and ends on ([first, last]), found by printing
                              the page with a marker before and after each element's text
  stop                     -> {"status": its exit status, "seconds": how long it took to exit}; the
                              "server" program sent SIGTERM (SIGKILL after 5 s: status then -9)
  save PATH                -> null; a PNG screenshot of the window (scripts/capture-pages.sh)
  savepdf PATH             -> null; the page printed to PDF (scripts/capture-pages.sh)
"""
import base64
import io
import json
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

from PIL import Image
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys


def browser(loopback=False):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900",
                "--hide-scrollbars", "--force-device-scale-factor=1", "--disable-extensions",
                # No network: every host resolves to nothing and every request goes to a closed port
                # (with loopback, 127.0.0.1 and ::1 are resolved and not sent to the proxy; every other name
                # still resolves to nothing, every other address still goes to the closed port).
                "--host-resolver-rules=MAP * ~NOTFOUND" + (", EXCLUDE 127.0.0.1, EXCLUDE [::1]" if loopback else ""),
                "--proxy-server=127.0.0.1:9",
                "--proxy-bypass-list=" + ("127.0.0.1;[::1]" if loopback else "<-loopback>")):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    if not loopback:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.emulateNetworkConditions",
                               {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    return driver


def key(name):
    return getattr(Keys, {"ArrowRight": "ARROW_RIGHT", "ArrowLeft": "ARROW_LEFT", "ArrowUp": "ARROW_UP",
                          "ArrowDown": "ARROW_DOWN", "PageDown": "PAGE_DOWN", "PageUp": "PAGE_UP",
                          "Space": "SPACE", "Home": "HOME", "End": "END", "Escape": "ESCAPE", "Tab": "TAB",
                          "Enter": "ENTER", "Backspace": "BACKSPACE"}.get(name, "")) if len(name) > 1 else name


def print_to_pdf(driver):
    """The page printed to PDF, as the browser's Print to PDF makes it.

    Through the DevTools protocol, not WebDriver's print command: chromedriver gives that command 10 s
    ("Timed out receiving message from renderer: 10.000"), and the whole tour (about 100 pages) took
    longer on a loaded machine: the browser tier failed on it in 5 runs of 5 with six CPU hogs and the
    rest of the suite beside it. Page.printToPDF waits for the renderer however long it takes.
    """
    result = driver.execute_cdp_cmd("Page.printToPDF", {"printBackground": False})
    return base64.b64decode(result["data"])


def columns_text(pdf):
    """The PDF's text, each page's left half, then its right half: pdftotext reads a line across both
    columns otherwise."""
    info = subprocess.run(["pdfinfo", pdf], check=True, capture_output=True, text=True).stdout
    pages = int(next(line.split()[1] for line in info.splitlines() if line.startswith("Pages:")))
    width, height = (float(v) for v in next(line for line in info.splitlines()
                                           if line.startswith("Page size:")).split()[2:5:2])
    text = []
    for page in range(1, pages + 1):
        for x in (0, width / 2):
            text.append(subprocess.run(["pdftotext", "-f", str(page), "-l", str(page), "-x", str(int(x)), "-y", "0",
                                        "-W", str(int(width / 2 + 1)), "-H", str(int(height + 1)), pdf, "-"],
                                       check=True, capture_output=True, text=True).stdout)
    return "\f".join(text)


class Server:
    """The program of a request's "server", started, its address read from what it prints on stderr."""

    def __init__(self, argv):
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True, errors="replace")
        self.printed = []
        self.address = None
        found = threading.Event()

        def read():  # the whole of stderr, so the server never blocks on a full pipe
            for line in self.process.stderr:
                self.printed.append(line)
                m = re.search(r"http://(127\.0\.0\.1|\[::1\]):\d+", line)
                if m and self.address is None:
                    self.address = m.group(0)
                    found.set()
            found.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        found.wait(30)
        if self.address is None:
            self.stop()
            raise RuntimeError("the server printed no loopback address: " + "".join(self.printed))

    def stop(self):
        if self.process.poll() is not None:
            return {"status": self.process.returncode, "seconds": 0}
        start = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        return {"status": self.process.returncode, "seconds": time.monotonic() - start}


def with_address(value, address):
    if isinstance(value, str):
        return value.replace("{server}", address)
    if isinstance(value, list):
        return [with_address(v, address) for v in value]
    if isinstance(value, dict):
        return {k: with_address(v, address) for k, v in value.items()}
    return value


def act(driver, a, server=None):
    do = a["do"]
    if do == "stop":
        return server.stop()
    if do == "load":
        driver.get_log("browser")  # drop what an earlier page logged
        driver.get(a["url"])
        logs = driver.get_log("browser")
        resources = driver.execute_script(
            "return performance.getEntriesByType('resource').map(function (e) { return e.name; })")
        return {"console": [e["message"] for e in logs if e["level"] in ("WARNING", "SEVERE")],
                "resources": resources}
    if do == "console":
        return [e["message"] for e in driver.get_log("browser") if e["level"] in ("WARNING", "SEVERE")]
    if do == "eval":
        return driver.execute_script("return (" + a["js"] + ");")
    if do == "keys":
        chain = ActionChains(driver)
        for k in a["keys"]:
            chain.send_keys(key(k))
        chain.perform()
        return None
    if do in ("click", "hover", "focus"):
        element = driver.find_element(By.CSS_SELECTOR, a["css"])
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        if do == "click":
            element.click()
        elif do == "hover":
            ActionChains(driver).move_to_element(element).perform()
        else:
            driver.execute_script("arguments[0].focus()", element)
        return None
    if do == "type":
        element = driver.find_element(By.CSS_SELECTOR, a["css"])
        driver.execute_script("arguments[0].focus()", element)
        ActionChains(driver).send_keys(a["text"]).perform()
        return None
    if do == "wait":
        deadline = time.monotonic() + a.get("seconds", 10)
        while True:
            value = driver.execute_script("return (" + a["js"] + ");")
            if value:
                return value
            if time.monotonic() > deadline:
                return {"timeout": value}
            time.sleep(0.05)
    if do == "pixels":
        dx, dy = a.get("offset", [3, 3])
        first = driver.find_element(By.CSS_SELECTOR, a["css"][0])
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", first)
        rects = [driver.execute_script(
            "var r = document.querySelector(arguments[0]).getBoundingClientRect(); return [r.left, r.top];", css)
            for css in a["css"]]
        image = Image.open(io.BytesIO(base64.b64decode(driver.get_screenshot_as_base64()))).convert("RGB")
        samples = [list(image.getpixel((int(x + dx), int(y + dy)))) for x, y in rects]
        return {"samples": samples, "colors": len(image.getcolors(1 << 24))}
    if do == "pdf":
        with tempfile.NamedTemporaryFile(suffix=".pdf") as f:
            f.write(print_to_pdf(driver))
            f.flush()
            return columns_text(f.name)
    if do == "alert":
        try:
            driver.switch_to.alert.dismiss()
            return True
        except NoAlertPresentException:
            return False
    if do == "dark":
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [
            {"name": "prefers-color-scheme", "value": "dark" if a["value"] else "light"}]})
        return None
    if do == "viewport":
        w, h = a["size"]
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": False})
        return driver.execute_script("return [window.innerWidth, window.innerHeight];")
    if do == "media":
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": a["value"]})
        return None
    if do == "pdfpages":
        with tempfile.NamedTemporaryFile(suffix=".pdf") as f:
            f.write(print_to_pdf(driver))
            f.flush()
            info = subprocess.run(["pdfinfo", f.name], check=True, capture_output=True, text=True).stdout
            return int(next(line.split()[1] for line in info.splitlines() if line.startswith("Pages:")))
    if do == "pdfboxes":
        # Each element's first and last line of text marked (invisible to the eye, not to pdftotext), then
        # each page's text searched for the marks.
        count = driver.execute_script("""
            var list = document.querySelectorAll(arguments[0]);
            list.forEach(function (e, i) {
              var a = document.createElement('span'), b = document.createElement('span');
              a.className = b.className = 'pdfmark';
              a.textContent = 'QQSTART' + i + 'QQ'; b.textContent = 'QQEND' + i + 'QQ';
              a.style.fontSize = b.style.fontSize = '4px';
              e.insertBefore(a, e.firstChild); e.appendChild(b);
            });
            return list.length;""", a["css"])
        with tempfile.NamedTemporaryFile(suffix=".pdf") as f:
            f.write(print_to_pdf(driver))
            f.flush()
            text = subprocess.run(["pdftotext", f.name, "-"], check=True, capture_output=True, text=True).stdout
        driver.execute_script("document.querySelectorAll('.pdfmark').forEach(function (m) { m.remove(); });")
        pages = text.split("\f")
        def page_of(mark):
            return next((n + 1 for n, p in enumerate(pages) if mark in p.replace(" ", "").replace("\n", "")), None)
        return [[page_of("QQSTART%dQQ" % i), page_of("QQEND%dQQ" % i)] for i in range(count)]
    if do == "save":
        driver.save_screenshot(a["path"])
        return None
    if do == "savepdf":
        with open(a["path"], "wb") as f:
            f.write(print_to_pdf(driver))
        return None
    raise ValueError("unknown action " + do)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        request = json.load(f)
    loopback = isinstance(request, dict) and request.get("loopback") is True
    actions = request["actions"] if isinstance(request, dict) else request
    server = None
    if loopback and request.get("server"):
        server = Server(request["server"])
        actions = with_address(actions, server.address)
    try:
        driver = browser(loopback)
        try:
            results = [act(driver, a, server) for a in actions]
        finally:
            driver.quit()
    finally:
        if server:
            server.stop()
            server.reader.join(5)
            sys.stderr.write("".join(server.printed))
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
