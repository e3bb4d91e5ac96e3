// A new user's first dataset from a sample file, in headless Chromium: the editor shows each
// column's example values and null count, the saved schema offers "Upload this sample", its job
// page follows the job to its end by itself, and the dataset then shows the rows. Also the 404
// page. Screenshots of the flow: docs/web/flow-*.png (SCREENSHOTS=1).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync, mkdtempSync } from "node:fs";
import path from "node:path";
import os from "node:os";
import { BASE, ADMIN_ID, ADMIN_SECRET, launch, newPage, signInClient, shoot } from "./lib.mjs";

let browser, page, dir;
before(async () => {
  browser = await launch();
  dir = mkdtempSync(path.join(os.tmpdir(), "rapid-browser-sample-"));
  page = await newPage(browser);
  await signInClient(page, ADMIN_ID, ADMIN_SECRET);
});
after(async () => { await browser?.close(); });

// Big enough that committing it takes seconds in the debug build the tests run: the job is still
// running when its page opens (asserted, so the test cannot pass without seeing the change).
const ROWS = 300000;
const REGIONS = ["north", "south", "east", "west"];

function salesCsv() {
  const lines = ["Sale Id,Sold On,Region,Amount"];
  for (let i = 1; i <= ROWS; i++) {
    const day = String((i % 28) + 1).padStart(2, "0");
    const region = i % 10 === 0 ? "" : REGIONS[i % 4];
    lines.push(`${i},2024-03-${day},${region},${(i % 500) + 0.25}`);
  }
  return lines.join("\n") + "\n";
}

test("a sample becomes a schema with examples, then the dataset's first upload, followed to its end", async () => {
  const sample = path.join(dir, "sales.csv");
  writeFileSync(sample, salesCsv());
  await page.goto(`${BASE}/schema/new`);
  await page.fill("#domain", "newcomer");
  await page.fill("#dataset", "sales");
  await page.setInputFiles("#file", sample);
  await shoot(page, "flow-1-sample");
  await Promise.all([page.waitForNavigation(), page.click("text=Generate the schema")]);
  assert.equal(await page.textContent("h1"), "Edit and save the schema");
  // Each column's examples (distinct values, in the order read) and its null count.
  assert.equal(await page.textContent("#c0_sample .examples"), "1, 2, 3");
  assert.equal(await page.textContent("#c1_sample .examples"), "2024-03-02, 2024-03-03, 2024-03-04");
  assert.equal(await page.textContent("#c2_sample .examples"), "south, east, west");
  assert.equal(await page.textContent("#c2_sample .nulls"), `${ROWS / 10} null of ${ROWS} rows`);
  assert.equal(await page.textContent("#c3_sample .nulls"), `0 null of ${ROWS} rows`);
  assert.match(await page.textContent("#sample-note"), /sales\.csv.*upload this sample/s);
  await page.fill("#m_owners", "Sales <sales@example.com>");
  await page.fill("#m_description", "Sales by region");
  // The figures stay through a re-render (they are kept with the sample, not in the form).
  await Promise.all([page.waitForNavigation(), page.click("button[value=check]")]);
  assert.equal(await page.textContent("#c2_sample .nulls"), `${ROWS / 10} null of ${ROWS} rows`);
  await shoot(page, "flow-2-editor");

  await Promise.all([page.waitForNavigation(), page.click("form.schema button[type=submit]")]);
  assert.match(page.url(), /\/schema\/saved\/[0-9a-f]{32}$/);
  const saved = page.url();
  assert.match(await page.textContent("[role=status]"), /newcomer\/sales has been stored as version 1/);
  await shoot(page, "flow-3-saved");

  const bar = () => page.locator("#job-progress").count();
  await Promise.all([page.waitForNavigation(), page.click("#upload-sample")]);
  assert.match(page.url(), /\/jobs\/[0-9a-f-]+$/);
  assert.equal(await bar(), 1, "the job page opened while the job was still running");
  // No reload by the test: the page's script reloads it once the job has ended.
  await page.waitForSelector("dl.facts dt:text-is('Finished')", { timeout: 120000 });
  assert.equal(await bar(), 0);
  assert.equal(await page.textContent("[data-field=status] .status"), "SUCCESS");
  await shoot(page, "flow-4-job");

  await page.goto(`${BASE}/datasets/default/newcomer/sales/query`);
  assert.equal(await page.textContent("#preview-count"), `Rows 1 to 50 of ${ROWS.toLocaleString("en")}`);
  await shoot(page, "flow-5-dataset");

  // Uploaded, the sample is no longer kept: its page says so, with the way on.
  const again = await page.goto(saved);
  assert.equal(again.status(), 410);
  assert.match(await page.textContent("[role=alert]"), /no longer kept/);
  assert.equal(await page.locator("main a[href='/upload']").count(), 1);
  assert.deepEqual(page.problems, []);
});

test("an unknown page is a page with the navigation, or a way to sign in", async () => {
  const res = await page.goto(`${BASE}/datasets`);
  assert.equal(res.status(), 404);
  assert.equal(await page.textContent("h1"), "Not found");
  assert.ok(await page.locator("nav[aria-label=Main] a[href='/jobs']").count() === 1, "the navigation");
  assert.ok(await page.locator("main a[href='/']").count() >= 1, "a link back");
  await shoot(page, "not-found");
  const stranger = await newPage(browser);
  const gone = await stranger.goto(`${BASE}/nope`);
  assert.equal(gone.status(), 404);
  assert.equal(await stranger.locator("main a[href='/signin']").count(), 1);
  await stranger.context().close();
});
