// Data through the pages in headless Chromium: upload with progress to SUCCESS, a 422's errors
// in a table, the dataset page (schema, info, charts, files, delete with confirmation).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync, mkdtempSync } from "node:fs";
import path from "node:path";
import os from "node:os";
import { BASE, ADMIN_ID, ADMIN_SECRET, launch, newPage, signInClient, shoot, adminToken, api } from "./lib.mjs";

let browser, page, dir;
before(async () => {
  browser = await launch();
  dir = mkdtempSync(path.join(os.tmpdir(), "rapid-browser-data-"));
  const token = await adminToken();
  const created = await api(token, "POST", "/api/schema", {
    metadata: {
      layer: "default", domain: "web", dataset: "visits", sensitivity: "PUBLIC",
      update_behaviour: "APPEND", description: "Daily visits per city",
      owners: [{ name: "Owner", email: "owner@example.com" }],
      key_value_tags: { owner: "ops" },
    },
    columns: [
      { name: "city", data_type: "string", allow_null: false, partition_index: 0 },
      { name: "day", data_type: "date", allow_null: false, format: "%Y-%m-%d" },
      { name: "visits", data_type: "int", allow_null: false },
    ],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  page = await newPage(browser);
  await signInClient(page, ADMIN_ID, ADMIN_SECRET);
});
after(async () => { await browser?.close(); });

function csv(name, text) {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
}

async function upload(file) {
  await page.goto(`${BASE}/upload?dataset=default/web/visits`);
  await page.setInputFiles("#file", file);
  await page.click("#upload-button");
}

test("an upload shows its progress and follows its job to SUCCESS", async () => {
  let rows = "city,day,visits\n";
  for (let i = 0; i < 3000; i++) rows += `${["Leeds", "York", "Hull"][i % 3]},2024-0${1 + (i % 9)}-1${i % 10},${i}\n`;
  await upload(csv("visits.csv", rows));
  await page.waitForSelector('#upload-message[data-status="SUCCESS"]', { timeout: 60000 });
  assert.equal(await page.getAttribute("#upload-progress", "value"), "100");
  assert.match(await page.textContent("#upload-message"), /SUCCESS.*3000 rows/);
  await shoot(page, "upload");
  await page.click("#job-link a");
  assert.equal(await page.textContent("h1"), "Job");
  assert.equal(await page.textContent(".status"), "SUCCESS");
});

test("a refused upload lists every validation error in a table", async () => {
  await upload(csv("bad.csv", "city,day,visits\nLeeds,not-a-date,1\nYork,2024-01-01,many\n"));
  await page.waitForSelector("#upload-errors:not(.hidden)");
  assert.match(await page.textContent("#upload-error-summary"), /status 422/);
  // The problems by column and rule, counted in the whole report.
  const groups = await page.locator("#upload-groups-table tbody tr").allTextContents();
  assert.equal(groups.length, 2, groups.join("\n"));
  assert.match(groups[0], /^day\s*wrong type \(expected date.*\)\s*1\s*Column \[day\]/);
  assert.match(groups[1], /^visits\s*wrong type \(expected int\)\s*1\s*Column \[visits\]/);
  await page.click("#upload-errors details summary");
  const problems = await page.locator("#upload-error-rows tr").count();
  assert.ok(problems >= 2, `every error listed (${problems})`);
  const text = await page.textContent("#upload-error-rows");
  assert.match(text, /day/);
  assert.match(text, /visits/);
  // The true count of rows, and the whole report to download, as CSV with every problem.
  assert.match(await page.textContent("#upload-error-summary"), /^2 rows have problems/);
  const href = await page.getAttribute("#report-csv", "href");
  assert.match(href, /^\/api\/results\/.*-problems\.csv\?expires=/);
  const report = await (await page.request.get(BASE + href)).text();
  assert.equal(report.trim().split("\n").length, 3, report);
  assert.match(report, /^row,column,rule,value,key,message/);
  assert.match(await page.getAttribute("#report-parquet", "href"), /-problems\.parquet\?/);
  await shoot(page, "upload-422");
});

test("the query builder previews rows, downloads CSV and runs a large query job to its download link", async () => {
  await page.goto(`${BASE}/datasets/default/web/visits/query`);
  await page.check("#col-city");
  await page.fill("#expressions", "sum(visits) AS total");
  await page.check("#grp-city");
  await page.selectOption("#order", "city");
  await Promise.all([page.waitForNavigation(), page.click("button[value=preview]")]);
  assert.equal(await page.locator("#preview tbody tr").count(), 3);
  assert.equal(await page.textContent("#preview tbody tr:first-child td:first-child"), "Hull");
  await shoot(page, "query");

  const [download] = await Promise.all([page.waitForEvent("download"), page.click("button[value=csv]")]);
  const file = await download.path();
  const { readFileSync } = await import("node:fs");
  const text = readFileSync(file, "utf8");
  assert.match(download.suggestedFilename(), /\.csv$/);
  assert.equal(text.trim().split("\n")[0], "city,total", "no index column unless asked");
  assert.equal(text.trim().split("\n").length, 4);
  await page.check("#index");
  const [indexed] = await Promise.all([page.waitForEvent("download"), page.click("button[value=csv]")]);
  const withIndex = readFileSync(await indexed.path(), "utf8").trim().split("\n");
  assert.equal(withIndex[0], ",city,total", "asked for: the API's CSV, index column first");
  assert.match(withIndex[1], /^0,Hull,/);
  await page.uncheck("#index");

  // A filter the engine refuses is shown in words, with the form kept.
  await page.fill("#filter", "no_such_column = 1");
  await Promise.all([page.waitForNavigation(), page.click("button[value=preview]")]);
  assert.match(await page.textContent("[role=alert]"), /no_such_column/);
  assert.equal(await page.inputValue("#filter"), "no_such_column = 1");

  await page.goto(`${BASE}/datasets/default/web/visits/query?action=preview&limit=5`);
  await Promise.all([page.waitForNavigation(), page.click("button[value=job]")]);
  assert.match(await page.textContent("#query-object"), /rows\s*at most 5/);
  await Promise.all([page.waitForNavigation(), page.click("form.job button")]);
  assert.match(page.url(), /\/jobs\//);
  await page.waitForSelector(".status[data-status=SUCCESS]", { timeout: 60000 });
  await page.waitForSelector("a.download");
  const [big] = await Promise.all([page.waitForEvent("download"), page.click("a.download")]);
  const rows = readFileSync(await big.path(), "utf8").trim().split("\n");
  assert.equal(rows.length, 6, "header and the 5 limited rows");
  await shoot(page, "job");
});

test("the dataset page shows schema, info, charts and files, and deletes a file after confirmation", async () => {
  await page.goto(`${BASE}/`);
  await page.click("text=visits");
  assert.equal(await page.textContent("h1"), "default / web / visits");
  assert.equal(await page.textContent("#row-count"), "3,000");
  assert.match(await page.textContent("table.columns"), /city.*string/s);
  assert.equal(await page.locator("#charts svg.chart.wide").count(), 2);
  assert.equal(await page.locator("#charts svg.chart.narrow").count(), 2, "a phone layout of each");
  assert.equal(await page.locator("#charts svg.chart rect.bar").count() >= 3, true);
  // Column profiles: one per column, the city's three values counted exactly.
  assert.equal(await page.locator("#profiles section.profile").count(), 3);
  const city = page.locator("#profiles section.profile", { hasText: "city" });
  assert.match(await city.locator("p.figures").textContent(), /0\.0% null · about 3 distinct · from Hull to York/);
  assert.equal(await city.locator("svg.wide rect.bar").count(), 3);
  assert.match(await city.locator("svg.wide").textContent(), /Leeds.*1,000/s);
  assert.equal(await page.locator("table.files tbody tr").count(), 1);
  await shoot(page, "dataset");
  await page.click("table.files button.danger");
  assert.equal(await page.textContent("h1"), "Delete a file?");
  await Promise.all([page.waitForNavigation(), page.click("text=Yes, delete")]);
  assert.match(await page.textContent("[role=status]"), /has been deleted/);
  assert.equal(await page.locator("table.files").count(), 0);
  assert.deepEqual(page.problems, []);
});

test("quarantine stores the valid rows and links the rejected ones to fix and upload again", async () => {
  await page.goto(`${BASE}/upload?dataset=default/web/visits`);
  await page.setInputFiles("#file", csv("mixed.csv", "city,day,visits\nLeeds,2024-01-01,1\nYork,2024-13-01,2\nHull,2024-01-03,3\n"));
  await page.check("#quarantine");
  await page.click("#upload-button");
  await page.waitForSelector('#upload-message[data-status="SUCCESS"]', { timeout: 60000 });
  // The job has ended: said in the past, no longer "being stored" or "Sending the file".
  assert.equal(await page.textContent("#quarantine-summary"), "2 rows were stored; 1 row was kept apart.");
  assert.equal(await page.textContent("#upload-stage"), "Stored");
  const href = await page.getAttribute("#quarantine-csv", "href");
  assert.match(href, /^\/api\/results\/.*-quarantine\.csv\?expires=/);
  const rejected = await (await page.request.get(BASE + href)).text();
  assert.match(rejected, /^city,day,visits,_row,_problems\nYork,2024-13-01,2,2,/);
  assert.match(await page.getAttribute("#quarantine-report", "href"), /-problems\.csv\?/);
  await shoot(page, "upload-quarantine");
  assert.deepEqual(page.problems, []);
});

test("the dataset page flags what changed in the last upload", async () => {
  await upload(csv("bath.csv", "city,day,visits\nBath,2024-02-01,5\nLeeds,2024-02-02,6\n"));
  await page.waitForSelector('#upload-message[data-status="SUCCESS"]', { timeout: 60000 });
  await page.goto(`${BASE}/datasets/default/web/visits`);
  const changes = await page.textContent("#profile-changes");
  assert.match(changes, /Column \[city\] has values the upload before did not: "Bath"/);
  await shoot(page, "dataset-profile");
  assert.deepEqual(page.problems, []);
});
