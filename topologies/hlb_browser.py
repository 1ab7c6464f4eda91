#!/usr/bin/python3
"""hlb_browser: the web view of hybridlbd in a real headless browser (Debian's chromium and
chromium-driver, driven by selenium), run inside the emulation's namespace where the daemon listens.

    hlb_browser.py shot URL OUT.png [CA.pem]   open the page, wait for it to draw, keep a screenshot
    hlb_browser.py serve URL [CA.pem]          a session driven by JSON lines on stdin (Browser below)

CA.pem: the CA of an HTTPS daemon, trusted by this browser only (a private NSS store, as an
operator adds a CA to a browser); a daemon with tokens is opened as URL /ui/#token=<token>.

Browser(tag) starts a `serve` session in the emulation's namespace from outside it; each call
sends one command and returns the answer: state() reads what the page shows (switch states,
where each VIP is drawn, the status line) and the browser's console errors so far.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WINDOW = (1500, 950)
LOAD_TIMEOUT_S = 30

# What the page shows, read in the page: switch -> state, VIP -> where it is drawn.
READ_PAGE = """
const out = {updates: Number(document.body.dataset.updates || 0), switches: {}, vips: {},
             status: document.getElementById('status').textContent,
             inFlight: document.getElementById('migration-now').dataset.inFlight || ''};
for (const g of document.querySelectorAll('#fabric g.switch')) out.switches[g.dataset.switch] = g.dataset.state;
for (const g of document.querySelectorAll('#fabric g.vip')) out.vips[g.dataset.vip] = g.dataset.at;
return out;
"""


def available():
    return os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK) and shutil.which("certutil") is not None


class Page:
    """One headless chromium on the view (inside the namespace)."""

    def __init__(self, url, ca=None):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        self.profile = tempfile.mkdtemp(prefix="hlb-chromium-")
        env = dict(os.environ)
        if ca:
            # chromium on Linux trusts the NSS store under $HOME/.pki/nssdb
            env["HOME"] = self.profile
            nssdb = os.path.join(self.profile, ".pki", "nssdb")
            os.makedirs(nssdb)
            subprocess.run(["certutil", "-N", "-d", "sql:" + nssdb, "--empty-password"], check=True)
            subprocess.run(["certutil", "-A", "-d", "sql:" + nssdb, "-n", "hybridlb CA", "-t", "C,,", "-i", ca],
                           check=True)
        o = webdriver.ChromeOptions()
        o.binary_location = CHROMIUM
        # root in a namespace: no sandbox; no GPU; /dev/shm may be small
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                  "--window-size=%d,%d" % WINDOW, "--user-data-dir=" + self.profile):
            o.add_argument(a)
        o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER, env=env), options=o)
        self.driver.set_page_load_timeout(LOAD_TIMEOUT_S)
        self.url = url
        self.console = []

    def open(self):
        self.driver.get(self.url)
        return self.wait(1)

    def state(self):
        s = self.driver.execute_script(READ_PAGE)
        self.console += [e for e in self.driver.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
        s["consoleErrors"] = [e["message"] for e in self.console]
        return s

    def wait(self, updates, timeout=LOAD_TIMEOUT_S):
        """Until the page has drawn `updates` times in all (it redraws once a second)."""
        deadline = time.monotonic() + timeout
        while True:
            s = self.state()
            if s["updates"] >= updates or time.monotonic() > deadline:
                return s
            time.sleep(0.2)

    def screenshot(self, path):
        self.driver.save_screenshot(path)
        return {"path": path}

    def close(self):
        try:
            self.driver.quit()
        finally:
            subprocess.run(["rm", "-rf", self.profile], check=False)


def serve(url, ca=None):
    page = Page(url, ca)
    try:
        for line in sys.stdin:
            cmd = json.loads(line)
            try:
                if cmd["cmd"] == "quit":
                    print(json.dumps({"ok": True}), flush=True)
                    return
                r = {"open": page.open, "state": page.state,
                     "wait": lambda: page.wait(cmd["updates"], cmd.get("timeout", LOAD_TIMEOUT_S)),
                     "screenshot": lambda: page.screenshot(cmd["path"])}[cmd["cmd"]]()
                print(json.dumps({"ok": True, "result": r}), flush=True)
            except Exception as e:  # answered, so the driving test sees it
                print(json.dumps({"ok": False, "error": "%s: %s" % (type(e).__name__, e)}), flush=True)
    finally:
        page.close()


class Browser:
    """A `serve` session in the emulation's namespace, driven from outside it."""

    def __init__(self, tag, url, ca=None):
        here = os.path.abspath(__file__)
        self.proc = subprocess.Popen(["ip", "netns", "exec", "hlbemu-" + tag, "/usr/bin/python3", here, "serve", url]
                                     + ([ca] if ca else []),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)

    def call(self, cmd, **args):
        self.proc.stdin.write(json.dumps(dict(args, cmd=cmd)) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("browser session ended: %s" % self.proc.stderr.read()[-2000:])
        answer = json.loads(line)
        if not answer["ok"]:
            raise RuntimeError(answer["error"])
        return answer.get("result")

    def open(self):
        return self.call("open")

    def state(self):
        return self.call("state")

    def wait(self, updates, timeout=LOAD_TIMEOUT_S):
        return self.call("wait", updates=updates, timeout=timeout)

    def screenshot(self, path):
        return self.call("screenshot", path=path)

    def close(self):
        if self.proc.poll() is None:
            try:
                self.call("quit")
            except (RuntimeError, OSError, ValueError):
                pass
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def shot(url, out, ca=None, updates=3):
    page = Page(url, ca)
    try:
        page.open()
        s = page.wait(updates)
        page.screenshot(out)
        return s
    finally:
        page.close()


def main():
    if len(sys.argv) in (3, 4) and sys.argv[1] == "serve":
        serve(*sys.argv[2:])
    elif len(sys.argv) in (4, 5) and sys.argv[1] == "shot":
        print(json.dumps(shot(*sys.argv[2:])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
