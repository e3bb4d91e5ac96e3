// Issue 54's last points in headless Chromium: a download and a job of a view read its rows in
// the view's total order; "Ask in SQL" keeps an as-of read; after a column change the pages read
// the version with rows; the history switches versions; checks in words; a focus ring of 3:1 and
// a preview page with few tab stops; every permission explained.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { BASE, ADMIN_ID, ADMIN_SECRET, launch, newPage, signInClient, shoot, adminToken, api } from "./lib.mjs";

const PATH = "/api/datasets/default/farm/animals";
const DS = `${BASE}/datasets/default/farm/animals`;
const KINDS = ["pig", "cow", "hen"];
const FIRST = 40;
const ROWS = 90;
let browser, page, token;

async function upload(name, text) {
  const body = new FormData();
  body.append("file", new Blob([text], { type: "text/csv" }), name);
  const r = await fetch(`${BASE}${PATH}`, { method: "POST", headers: { Authorization: `Bearer ${token}` }, body });
  const answer = await r.json();
  assert.equal(r.status, 202, JSON.stringify(answer));
  for (let i = 0; i < 200; i++) {
    const job = await api(token, "GET", `/api/jobs/${answer.details.job_id}`);
    if (job.body.status !== "IN PROGRESS") return job.body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("upload still running");
}

/// `id,kind` rows for ids hi..lo (descending: the file is not in the view's order).
function csv(hi, lo) {
  let text = "id,kind\n";
  for (let id = hi; id >= lo; id--) text += `${id},${KINDS[id % 3]}\n`;
  return text;
}

/// The (kind, id) pairs of a CSV's rows, `skip` leading cells (an index column) left out.
function pairs(text, skip = 0) {
  const lines = text.trim().split("\n").slice(1);
  return lines.map((l) => l.split(",").slice(skip)).map(([id, kind]) => [kind, Number(id)]);
}

function inViewOrder(rows) {
  const sorted = [...rows].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
  assert.deepEqual(rows, sorted, "kind, then the tiebreak (id) ascending");
}

before(async () => {
  browser = await launch();
  token = await adminToken();
  const created = await api(token, "POST", "/api/schema", {
    metadata: {
      layer: "default", domain: "farm", dataset: "animals", sensitivity: "PUBLIC",
      owners: [{ name: "Owner", email: "owner@example.com" }], key_value_tags: { site: "north" },
    },
    columns: [
      { name: "id", data_type: "int", allow_null: false, checks: { positive: { check_type: "greater_than", parameters: { min_value: 0 } } } },
      { name: "kind", data_type: "string", allow_null: false },
    ],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal((await upload("first.csv", csv(FIRST, 1))).status, "SUCCESS");
  assert.equal((await upload("second.csv", csv(ROWS, FIRST + 1))).status, "SUCCESS");
  page = await newPage(browser);
  await signInClient(page, ADMIN_ID, ADMIN_SECRET);
});
after(async () => { await browser?.close(); });

test("a download and a query job of a view sorted by a column of ties read its rows in the view's total order", async () => {
  const download = await page.request.get(`${DS}/query?order=kind&direction=ASC&action=csv`);
  assert.equal(download.status(), 200);
  const downloaded = pairs(await download.text());
  assert.equal(downloaded.length, ROWS);
  inViewOrder(downloaded);
  await page.goto(`${DS}/query?order=kind&direction=ASC&action=job`);
  await Promise.all([page.waitForNavigation(), page.click("form.job button")]);
  await page.waitForSelector(".status[data-status=SUCCESS]", { timeout: 60000 });
  await page.waitForSelector("a.download");
  const [file] = await Promise.all([page.waitForEvent("download"), page.click("a.download")]);
  // Named after the dataset and the job, and, as the download, with no index column.
  assert.match(file.suggestedFilename(), /^default-farm-animals-v1-job-[0-9a-f]{8}\.csv$/);
  const text = readFileSync(await file.path(), "utf8");
  assert.equal(text.split("\n")[0], "id,kind");
  assert.deepEqual(pairs(text), downloaded, "the job's rows, in the download's order");
  assert.deepEqual(page.problems, []);
});

test("as of a commit, the view's SQL and 'Ask in SQL' read that commit", async () => {
  await page.goto(`${DS}/query?as_of_commit=1&action=preview`);
  assert.match(await page.textContent("#preview-count"), new RegExp(`of ${FIRST}$`));
  assert.match(await page.textContent("#view-sql"), /"animals@c1"/);
  await Promise.all([page.waitForNavigation(), page.click("#sql-link")]);
  assert.match(await page.inputValue("#sql"), /animals@c1/);
  await Promise.all([page.waitForNavigation(), page.click("#sql-run")]);
  assert.equal((await page.textContent("#sql-shown")).trim(), `${FIRST} rows`);
  // SHOW is refused in this page's words, saying where it runs.
  await page.fill("#sql", "SHOW TABLES");
  await Promise.all([page.waitForNavigation(), page.click("#sql-run")]);
  const refused = await page.textContent("[role=alert]");
  assert.match(refused, /exactly one SELECT.*SHOW, SET and transactions run over the PostgreSQL protocol only/s);
  assert.doesNotMatch(refused, /body's sql/);
  assert.deepEqual(page.problems, []);
});

test("checks read in words on the dataset page; numbers and times in one format; charts readable on a phone", async () => {
  await page.goto(DS);
  const columns = await page.textContent("table.columns");
  assert.match(columns, /more than 0 \(0 itself fails\)/);
  assert.doesNotMatch(columns, /check_type=/);
  const when = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/;
  assert.match((await page.locator("dl.facts dd").nth(2).textContent()).trim(), when, "last updated");
  const uploaded = await page.locator("table.files tbody td[data-label=Uploaded]").allTextContents();
  assert.ok(uploaded.length > 0 && uploaded.every((t) => when.test(t.trim())), uploaded.join(" | "));
  await page.setViewportSize({ width: 390, height: 844 });
  assert.equal(await page.locator("svg.chart.wide").first().isVisible(), false);
  const shown = await page.evaluate(() => {
    const svg = document.querySelector("svg.chart.narrow");
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const size = parseFloat(getComputedStyle(svg.querySelector("text")).fontSize);
    return { px: size * scale, display: getComputedStyle(svg).display, width: svg.getBoundingClientRect().width };
  });
  assert.ok(shown.px >= 11, `a chart label of ${JSON.stringify(shown)} on a phone`);
  await page.setViewportSize({ width: 1280, height: 800 });
});

test("keyboard: a focus ring of at least 3:1, and a preview page's tab stops are few", async () => {
  await page.goto(`${DS}/query?action=preview`);
  const stops = await page.evaluate(() => [...document.querySelectorAll("a[href], button, input, select, textarea, summary, [tabindex]")]
    .filter((e) => e.tabIndex >= 0 && !e.disabled && e.getClientRects().length > 0).length);
  assert.ok(stops < 80, `${stops} tab stops on a preview page of 50 rows`);
  await page.keyboard.press("Tab"); // the skip link
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate(() => !!document.activeElement.closest("main"))) break;
  }
  const ratio = await page.evaluate(() => {
    const rgb = (c) => c.match(/[\d.]+/g).slice(0, 3).map(Number);
    const lum = ([r, g, b]) => {
      const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const e = document.activeElement;
    const style = getComputedStyle(e);
    if (style.outlineStyle === "none" || parseFloat(style.outlineWidth) < 2) return 0;
    let back = e.parentElement;
    while (back && getComputedStyle(back).backgroundColor.endsWith(", 0)")) back = back.parentElement;
    const [a, b] = [lum(rgb(style.outlineColor)), lum(rgb(getComputedStyle(back || document.body).backgroundColor))];
    return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
  });
  assert.ok(ratio >= 3, `focus ring contrast ${ratio.toFixed(2)}:1`);
});

test("the permissions page says what each permission lets a subject do", async () => {
  await page.goto(`${BASE}/subjects`);
  const boxes = await page.locator(".perm-groups input[type=checkbox]").count();
  const meanings = await page.locator(".perm-groups .perm-meaning").allTextContents();
  assert.ok(boxes > 0);
  assert.equal(meanings.length, boxes);
  assert.ok(meanings.every((m) => m.trim().length > 10), meanings.join(" | "));
  assert.ok(meanings.some((m) => /read PRIVATE and PUBLIC datasets in every layer/.test(m)), meanings.join(" | "));
  // Long names break after an underscore, never mid-word.
  assert.ok((await page.locator(".perm-name wbr").count()) > 0);
  await shoot(page, "subjects-permissions");
});

test("after a column change the pages read the version with rows, and the history switches versions", async () => {
  const info = await api(token, "GET", `${PATH}/info`);
  assert.equal(info.status, 200, JSON.stringify(info.body));
  const next = {
    metadata: { layer: "default", domain: "farm", dataset: "animals", sensitivity: "PUBLIC", owners: [{ name: "Owner", email: "owner@example.com" }], key_value_tags: { site: "north" } },
    columns: [
      { name: "id", data_type: "int", allow_null: false },
      { name: "kind", data_type: "string", allow_null: false },
      { name: "name", data_type: "string", allow_null: true },
    ],
  };
  const put = await api(token, "PUT", "/api/schema", next);
  assert.equal(put.status, 200, JSON.stringify(put.body));
  await page.goto(DS);
  assert.equal(await page.textContent("#version-read"), "1");
  assert.equal(await page.textContent("#row-count"), String(ROWS));
  assert.match(await page.textContent("#latest-empty"), /Version 2 \(the latest\) has no data yet/);
  // The catalogue says where the rows are, not "Never updated"; it lists the tags.
  await page.goto(`${BASE}/`);
  const listed = page.locator("table.datasets tbody tr", { hasText: "animals" });
  assert.match(await listed.textContent(), new RegExp(`Version 2 is new and empty; ${ROWS} rows in version 1`));
  assert.equal(await listed.locator(".badge.tag").textContent(), "site=north");
  assert.equal(await listed.locator("td.rows").textContent(), String(ROWS), "the rows a reader reads");
  await shoot(page, "catalogue-tags");
  await page.goto(`${DS}/query?action=preview`);
  assert.equal(await page.inputValue("#version"), "1");
  assert.match(await page.textContent("#preview-count"), new RegExp(`of ${ROWS}$`));
  await page.goto(`${DS}/history`);
  assert.equal(await page.textContent("#history-version"), "1");
  await Promise.all([page.waitForNavigation(), page.click("#history-versions a:has-text('2')")]);
  assert.equal(await page.textContent("#history-version"), "2");
  assert.match(await page.textContent("#history-versions"), /1 \(90 rows\)/);
  await shoot(page, "history-versions");
  assert.deepEqual(page.problems, []);
});

test("the editor warns when a check refuses the sample's own values (greater_than is strict)", async () => {
  await page.goto(`${BASE}/schema/new`);
  await page.fill("#domain", "farm");
  await page.fill("#dataset", "counts");
  const sample = "n,kind\n0,pig\n3,cow\n5,hen\n";
  await page.setInputFiles("#file", { name: "counts.csv", mimeType: "text/csv", buffer: Buffer.from(sample) });
  await Promise.all([page.waitForNavigation(), page.click("text=Generate the schema")]);
  assert.equal(await page.locator(".protection-warning").count(), 0);
  await page.selectOption("[name=c0_k0_type]", "greater_than");
  await page.fill("[name=c0_k0_values]", "0");
  await Promise.all([page.waitForNavigation(), page.click("button[value=check]")]);
  assert.match(await page.textContent("main"), /Column n: the sample has 0 that its check greater_than \(more than 0 \(0 itself fails\)\) refuses/);
  assert.deepEqual(page.problems, []);
});
