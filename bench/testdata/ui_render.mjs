// Renders casckpt ui's page in headless chromium for BenchmarkUIRender
// and prints {"timeline_ms", "diff_ms", "rows", "files"}: the time from
// the page's load to its timeline's rows, and from a click on the
// snapshot to its diff's files. Environment: PLAYWRIGHT (playwright-core's
// index.mjs), CHROMIUM, UI_URL (with the project), DIFF_REASON (the label
// of the snapshot whose diff is rendered).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const { chromium } = await import(process.env.PLAYWRIGHT);
const profile = mkdtempSync(join(tmpdir(), "casckpt-ui-bench-"));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM,
  viewport: { width: 1280, height: 800 },
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
try {
  const page = browser.pages()[0] || await browser.newPage();
  let t = Date.now();
  await page.goto(process.env.UI_URL);
  const row = page.locator("#left .row", { hasText: process.env.DIFF_REASON });
  await row.waitFor();
  const timeline = Date.now() - t;
  const rows = await page.locator("#left .row").count();
  t = Date.now();
  await row.click();
  await page.locator(".file").last().waitFor();
  const diff = Date.now() - t;
  const files = await page.locator(".file").count();
  console.log(JSON.stringify({ timeline_ms: timeline, diff_ms: diff, rows, files }));
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
