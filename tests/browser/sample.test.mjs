// A new user's first dataset from a sample file, in headless Chromium: the editor shows each
// column's example values and null count, the saved schema offers "Upload this sample", its job
// page follows the job to its end by itself, and the dataset then shows the rows. Also the 404
// page. Screenshots of the flow: docs/web/flow-*.png (SCREENSHOTS=1).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync, mkdtempSync } from "node:fs";
import path from "node:path";
import os from "node:os";
import { BASE, ADMIN_ID, ADMIN_SECRET, launch, newPage, signInClient, shoot, adminToken, api } from "./lib.mjs";

let browser, page, dir;
before(async () => {
  browser = await launch();
  dir = mkdtempSync(path.join(os.tmpdir(), "rapid-browser-sample-"));
  page = await newPage(browser);
  await signInClient(page, ADMIN_ID, ADMIN_SECRET);
});
after(async () => { await browser?.close(); });

// A sample of some size, as a new user's first file would be.
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
  assert.equal(await page.textContent("#c2_sample .nulls"), `${(ROWS / 10).toLocaleString("en")} null of ${ROWS.toLocaleString("en")} rows`);
  assert.equal(await page.textContent("#c3_sample .nulls"), `0 null of ${ROWS.toLocaleString("en")} rows`);
  assert.match(await page.textContent("#sample-note"), /sales\.csv.*upload this sample/s);
  await page.fill("#m_owners", "Sales <sales@example.com>");
  await page.fill("#m_description", "Sales by region");
  // The figures stay through a re-render (they are kept with the sample, not in the form).
  await Promise.all([page.waitForNavigation(), page.click("button[value=check]")]);
  assert.equal(await page.textContent("#c2_sample .nulls"), `${(ROWS / 10).toLocaleString("en")} null of ${ROWS.toLocaleString("en")} rows`);
  await shoot(page, "flow-2-editor");

  await Promise.all([page.waitForNavigation(), page.click("form.schema button[type=submit]")]);
  assert.match(page.url(), /\/schema\/saved\/[0-9a-f]{32}$/);
  const saved = page.url();
  assert.match(await page.textContent("[role=status]"), /newcomer\/sales has been stored as version 1/);
  await shoot(page, "flow-3-saved");

  await Promise.all([page.waitForNavigation(), page.click("#upload-sample")]);
  assert.match(page.url(), /\/jobs\/[0-9a-f-]+$/);
  // Opened while the job runs (the usual case), the page reloads itself when it ends (the next
  // test makes sure of that); opened after, it shows the end already. No reload by the test.
  await page.waitForSelector("dl.facts dt:text-is('Finished')", { timeout: 120000 });
  await page.waitForLoadState("load");
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

test("a job page opened while its job runs shows Finished when it ends, without a manual reload", async () => {
  const token = await adminToken();
  const made = await api(token, "POST", "/api/schema", {
    metadata: { domain: "newcomer", dataset: "ticks", sensitivity: "PUBLIC", owners: [{ name: "O", email: "o@example.com" }] },
    columns: [{ name: "n", data_type: "int", allow_null: false }],
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  // An upload is nearly done when its 202 comes back (the file is checked as it arrives), so
  // the job watched is a large query's over the uploaded rows, which starts after its 202.
  const rows = "n\n" + Array.from({ length: 1_000_000 }, (_, i) => i).join("\n") + "\n";
  const body = new FormData();
  body.append("file", new Blob([rows], { type: "text/csv" }), "ticks.csv");
  const up = await fetch(`${BASE}/api/datasets/default/newcomer/ticks`, { method: "POST", headers: { Authorization: `Bearer ${token}` }, body });
  assert.equal(up.status, 202);
  const uploadJob = (await up.json()).details.job_id;
  for (let i = 0; i < 600; i++) {
    const j = await api(token, "GET", `/api/jobs/${uploadJob}`);
    if (j.body.status !== "IN PROGRESS") { assert.equal(j.body.status, "SUCCESS"); break; }
    await new Promise((r) => setTimeout(r, 100));
  }
  // The page's status polls are held until the test has seen the page as the server rendered it,
  // so the script cannot reload it under the test. Whether the job still ran when the page was
  // rendered is timing: an attempt that finds it ended tries again.
  let open = false;
  const held = [];
  await page.route("**/jobs/*/status", async (route) => {
    if (!open) await new Promise((r) => held.push(r));
    await route.continue().catch(() => {});
  });
  let caught = false;
  for (let attempt = 0; attempt < 5 && !caught; attempt++) {
    const q = await api(token, "POST", "/api/datasets/default/newcomer/ticks/query/large", {});
    assert.equal(q.status, 202, JSON.stringify(q.body));
    await page.goto(`${BASE}/jobs/${q.body.details.job_id}`);
    caught = (await page.locator("#job-progress").count()) === 1;
    if (caught) assert.equal(await page.locator("dl.facts dt:text-is('Finished')").count(), 0);
  }
  assert.ok(caught, "a job page opened while its job was running");
  open = true;
  held.forEach((r) => r());
  await page.waitForSelector("dl.facts dt:text-is('Finished')", { timeout: 120000 });
  await page.waitForLoadState("load");
  assert.equal(await page.locator("#job-progress").count(), 0);
  assert.equal(await page.textContent("[data-field=status] .status"), "SUCCESS");
  await page.unroute("**/jobs/*/status");
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
