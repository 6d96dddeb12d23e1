// Drive tests/pyodide/page.html in headless Chromium (Debian's /usr/bin/chromium) and print what it shows.
//
//   node tests/pyodide/browser.mjs URL [TIMEOUT_SECONDS]
//
// Opens URL (a page served on 127.0.0.1 by tests/test_browser.py), waits until its #status says "done" or
// "failed" (at most TIMEOUT_SECONDS, default 600), and prints one JSON line: the status, the text of #result,
// the page's console lines, and every request to another host (refused: the page may use local files only).
import { chromium } from "playwright-core";

const [url, timeoutSeconds = "600"] = process.argv.slice(2);
const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";
// no network but the test's server: Chromium's background connections off (they are refused here anyway)
const browser = await chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
const refused = [];
const consoleLines = [];
let status = "timeout";
let result = "";
try {
  const page = await browser.newPage();
  const allowed = new URL(url).host;
  await page.route("**/*", (route) => {
    const target = new URL(route.request().url());
    if (target.host === allowed) return route.continue();
    refused.push(target.href);
    return route.abort();
  });
  page.on("console", (message) => consoleLines.push(message.text()));
  await page.goto(url);
  await page.waitForFunction(() => ["done", "failed"].includes(document.getElementById("status").textContent),
                             null, { timeout: Number(timeoutSeconds) * 1000, polling: 500 });
  status = await page.textContent("#status");
  result = await page.textContent("#result");
} catch (error) {
  result = String(error);
} finally {
  await browser.close();
}
console.log(JSON.stringify({ status, result, console: consoleLines, refused }));
