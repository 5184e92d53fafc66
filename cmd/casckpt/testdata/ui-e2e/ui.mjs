// Drives casckpt ui's page in headless chromium (TestUIBrowserEndToEnd).
// Environment: UI_URL (the page's URL, with the token and the project),
// UI_DIR (the project), CASCKPT_BIN (the binary, with the store in the
// environment), CHROMIUM, SHOTS (a directory for screenshots, or "").
import { chromium } from "playwright-core";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const { UI_URL, UI_DIR, CASCKPT_BIN, CHROMIUM, SHOTS } = process.env;
const casckpt = (...args) => execFileSync(CASCKPT_BIN, args, { encoding: "utf8" });
const check = (ok, what) => { if (!ok) throw new Error("FAILED: " + what); console.log("ok: " + what); };
const read = (name) => existsSync(join(UI_DIR, name)) ? readFileSync(join(UI_DIR, name), "utf8") : null;

const profile = mkdtempSync(join(tmpdir(), "casckpt-ui-chromium-"));
// A fresh profile: playwright passes it as --user-data-dir.
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  viewport: { width: 1280, height: 800 },
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
try {
  const page = browser.pages()[0] || await browser.newPage();
  const foreign = [];
  page.on("pageerror", (e) => console.log("page error: " + e));
  page.on("request", (r) => { if (!r.url().startsWith(new URL(UI_URL).origin)) foreign.push(r.url()); });
  const shot = async (name) => { if (SHOTS) await page.screenshot({ path: join(SHOTS, name + ".png") }); };

  // highlight.js is held back until the first diff is shown, to see that diff coloured once it comes.
  let release;
  const held = new Promise((r) => { release = r; });
  await page.route("**/vendor/highlight.js", async (route) => { await held; await route.continue(); });
  await page.goto(UI_URL, { waitUntil: "domcontentloaded" }); // "load" waits for the held script
  const turns = page.locator('#left .row[data-kind="turn"]');
  await turns.nth(2).waitFor();
  const texts = await turns.allInnerTexts();
  check(texts.length === 3, "the timeline shows three turns: " + JSON.stringify(texts));
  check(/t3/.test(texts[0]) && /t2/.test(texts[1]) && /t1/.test(texts[2]), "newest first");
  check(/2 files\s+\+2\s+−0/.test(texts[1]) && /1 files\s+\+1\s+−0/.test(texts[0]), "each with its counts");
  check((await page.locator('#left .row[data-kind="snap"]').allInnerTexts()).some((t) => /initial/.test(t)), "the loose snapshot between");
  check(await page.locator("#where").innerText() === "~/my-app", "the project under the home directory is shown as ~/my-app");
  await shot("timeline-1280");

  await turns.nth(2).focus();
  await page.keyboard.press("k"); // the keyboard: up to the second turn, then open it
  await page.keyboard.press("Enter");
  await page.locator(".file").nth(1).waitFor();
  const files = await page.locator(".file .fh a").allInnerTexts();
  check(files.join() === "a.txt,c.go", "the second turn's diff names its files: " + files);
  check((await page.locator("tr.a td.c").allInnerTexts()).some((t) => t.includes("two")), "with its added line");
  check(await page.locator("span[class^=hljs]").count() === 0, "plain text while highlight.js has not come");
  release();
  const goLine = page.locator(".file").nth(1).locator("tr.a td.c");
  await goLine.locator("span.hljs-keyword").waitFor();
  check(await goLine.locator("span.hljs-keyword", { hasText: "package" }).count() === 1 && (await goLine.innerText()).includes("package c"),
    "the .go line is coloured by highlight.js: " + await goLine.innerHTML());
  check(await page.locator(".file").first().locator("span[class^=hljs]").count() === 0, "the .txt file stays plain text");
  await shot("diff-1280");
  await page.getByRole("button", { name: "Side by side" }).click();
  check(await page.locator("table.diff td.c.a").count() > 0, "side by side");

  const newest = JSON.parse(casckpt("list", "--json", UI_DIR))[0].id;
  await page.getByRole("button", { name: "Undo this turn…" }).click();
  await page.locator("#dry").waitFor();
  const dry = await page.locator("#dry").innerText();
  check(/a\.txt/.test(dry) && /c\.go/.test(dry), "the undo preview lists what it reverts");
  check(read("c.go") === "package c\n", "the preview changed nothing");
  await shot("undo-preview-1280");
  await page.locator("#go").click();
  await page.locator("#result").waitFor();
  check(read("c.go") === null && read("a.txt") === "one\n" && read("d.txt") === "d\n", "the undo reverted the turn on disk");
  const pre = await page.locator("#pre").innerText();
  check(newest.startsWith(pre), "the page shows the pre-undo snapshot " + pre);
  check(await page.locator("#back").isVisible(), "with a button to undo the undo");

  writeFileSync(join(UI_DIR, "d.txt"), "edited by hand\n");
  const t1 = page.locator('#left .row[data-kind="turn"]').nth(2);
  await t1.click();
  await page.getByRole("button", { name: "Restore…" }).click();
  await page.locator("#rs").check();
  await page.locator("#rgo").click();
  await page.locator("#dry").waitFor();
  check(/Kept[\s\S]*d\.txt/.test(await page.locator("#dry").innerText()), "the safe restore's preview lists the hand-edited file as kept");
  await page.locator("#go").click();
  await page.locator("#result").waitFor();
  check(/d\.txt/.test(await page.locator("#result").innerText()), "and the result lists it");
  check(read("d.txt") === "edited by hand\n", "the hand-edited file is kept on disk");

  await page.evaluate(() => { window.notReloaded = true; });
  writeFileSync(join(UI_DIR, "e.txt"), "e\n");
  casckpt("snapshot", UI_DIR, "-m", "taken from the command");
  await page.locator("#left .row", { hasText: "taken from the command" }).waitFor({ timeout: 20000 });
  check(await page.evaluate(() => window.notReloaded === true), "a snapshot from the command appears without a reload");

  const taken = JSON.parse(casckpt("list", "--json", UI_DIR))[0];
  await page.locator("#left .row", { hasText: "taken from the command" }).click();
  await page.getByRole("button", { name: "Forget…" }).click();
  await page.locator("#dry").waitFor();
  const forgetDry = await page.locator("#dry").innerText();
  check(forgetDry.includes(taken.id.slice(0, 12)) && /taken from the command/.test(forgetDry) && /held by no other snapshot/.test(forgetDry),
    "the forget preview lists the snapshot from its dry run: " + forgetDry);
  check(JSON.parse(casckpt("list", "--json", UI_DIR))[0].id === taken.id, "the forget preview changed nothing");
  await page.locator("#go").click();
  await page.locator("#result").waitFor();
  await page.locator("#left .row", { hasText: "taken from the command" }).waitFor({ state: "detached" });
  check(!JSON.parse(casckpt("list", "--json", UI_DIR)).some((s) => s.id === taken.id), "forgotten: gone from the timeline and the store");
  check(foreign.length === 0, "no request left the server: " + foreign.join(" "));
  const colours = () => page.evaluate(() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]);
  const light = await colours();
  await page.emulateMedia({ colorScheme: "dark" });
  const dark = await colours();
  check(light[0] === "rgb(255, 255, 255)" && dark[0] === "rgb(13, 17, 23)" && dark[1] === "rgb(230, 237, 243)",
    "a dark theme when the system prefers one: " + JSON.stringify({ light, dark }));
  if (SHOTS) await shot("timeline-dark-1280");
  await page.emulateMedia({ colorScheme: "light" });

  if (SHOTS) {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.keyboard.press("Escape");
    await shot("timeline-390");
    await page.locator('#left .row[data-kind="turn"]', { hasText: "t3" }).click();
    await page.locator(".file").first().waitFor();
    await page.locator("#right").scrollIntoViewIfNeeded();
    await shot("diff-390");
    await page.getByRole("button", { name: "Undo this turn…" }).click();
    await page.locator("#dry").waitFor();
    await page.locator("#dry").scrollIntoViewIfNeeded();
    await shot("undo-preview-390");
  }
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
