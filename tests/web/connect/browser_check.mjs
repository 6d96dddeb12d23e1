// Open a page in headless Chromium (Debian's, not a downloaded one) and print what it shows, as JSON.
//
//   node browser_check.mjs URL CHROMIUM_PATH
//
// Waits (at most 20 s) for the page's #status to leave "running", then prints the text of
// #unary, #stream's items, #error and #status, with the page's uncaught errors and console errors.
import { chromium } from "playwright-core";

const [url, executablePath] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath,
  headless: true,
  // the flags the machine's notes give for Chromium here: no sandbox as root, no GPU, and no
  // background connections (the network is closed)
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage();
  const errors = [];  // uncaught exceptions of the page's script
  const console_errors = [];  // what the console shows (a failed request's status among them)
  page.on("console", (m) => { if (m.type() === "error") console_errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url, { timeout: 20000 });
  await page.waitForFunction(() => document.getElementById("status").textContent !== "running", null,
                             { timeout: 20000 });
  const text = (sel) => page.$eval(sel, (el) => el.textContent);
  console.log(JSON.stringify({
    unary: await text("#unary"),
    stream: await page.$$eval("#stream li", (items) => items.map((li) => li.textContent)),
    error: await text("#error"),
    status: await text("#status"),
    errors,
    console_errors,
  }));
} finally {
  await browser.close();
}
