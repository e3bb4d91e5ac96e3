// Issue 38 in headless Chromium: every output runs the form as it stands (the job too, and its
// page shows the query), grouped columns in the answer, previews with the typed limit, a total
// and pages, ordering by an alias, numbers for people; jobs one line each, problems grouped;
// and issue 35's SQL page, reached from the query page.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { BASE, ADMIN_ID, ADMIN_SECRET, launch, newPage, signInClient, shoot, adminToken, api } from "./lib.mjs";

const DS = `${BASE}/datasets/default/shop/sales`;
let browser, page, token;

/// 300 rows over three regions, and two Irish rows whose prices add up with float noise.
function salesCsv() {
  let rows = "day,region,product,quantity,price\n";
  const regions = ["Wales", "Scotland", "England"];
  for (let i = 0; i < 300; i++) {
    rows += `2024-01-${String(1 + (i % 28)).padStart(2, "0")},${regions[i % 3]},p${i % 5},${1 + (i % 7)},${(10 + i).toFixed(2)}\n`;
  }
  return rows + "2024-02-01,Ireland,p1,1,0.1\n2024-02-02,Ireland,p2,1,0.2\n";
}

async function uploadCsv(name, text) {
  const body = new FormData();
  body.append("file", new Blob([text], { type: "text/csv" }), name);
  const r = await fetch(`${BASE}/api/datasets/default/shop/sales`, {
    method: "POST", headers: { Authorization: `Bearer ${token}` }, body,
  });
  return { status: r.status, body: await r.json() };
}

before(async () => {
  browser = await launch();
  token = await adminToken();
  const created = await api(token, "POST", "/api/schema", {
    metadata: {
      layer: "default", domain: "shop", dataset: "sales", sensitivity: "PUBLIC",
      owners: [{ name: "Owner", email: "owner@example.com" }],
    },
    columns: [
      { name: "day", data_type: "date", allow_null: false, format: "%Y-%m-%d" },
      { name: "region", data_type: "string", allow_null: false },
      { name: "product", data_type: "string", allow_null: false },
      { name: "quantity", data_type: "int", allow_null: false },
      { name: "price", data_type: "double", allow_null: false },
    ],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const up = await uploadCsv("sales.csv", salesCsv());
  assert.equal(up.status, 202, JSON.stringify(up.body));
  for (let i = 0; i < 100; i++) {
    const job = await api(token, "GET", `/api/jobs/${up.body.details.job_id}`);
    if (job.body.status !== "IN PROGRESS") break;
    await new Promise((r) => setTimeout(r, 200));
  }
  page = await newPage(browser);
  await signInClient(page, ADMIN_ID, ADMIN_SECRET);
});
after(async () => { await browser?.close(); });

async function preview() {
  await Promise.all([page.waitForNavigation(), page.click("button[value=preview]")]);
}

test("the job runs the query the form shows, not the last preview, and its page shows that query", async () => {
  await page.goto(`${DS}/query`);
  await preview();
  // Typed, not previewed.
  await page.fill("#filter", "region = 'Wales'");
  await Promise.all([page.waitForNavigation(), page.click("button[value=job]")]);
  assert.equal(await page.textContent("h1"), "Run this query as a job");
  assert.match(await page.textContent("#query-object"), /filter\s*region = 'Wales'/);
  await Promise.all([page.waitForNavigation(), page.click("form.job button")]);
  assert.match(page.url(), /\/jobs\//);
  await page.waitForSelector(".status[data-status=SUCCESS]", { timeout: 60000 });
  assert.match(await page.textContent("#query-object"), /region = 'Wales'/);
  const [file] = await Promise.all([page.waitForEvent("download"), page.click("a.download")]);
  const lines = readFileSync(await file.path(), "utf8").trim().split("\n");
  assert.equal(lines.length, 101, "the header and Wales's 100 rows");
  assert.ok(lines.slice(1).every((l) => l.includes(",Wales,")), lines.slice(0, 3).join("\n"));
  await shoot(page, "job-query");
  // Back to the dataset, and to the builder with that query.
  assert.equal(await page.locator("main a[href='/datasets/default/shop/sales?version=1']").count() >= 1, true);
  await Promise.all([page.waitForNavigation(), page.click("#open-query")]);
  assert.equal(await page.inputValue("#filter"), "region = 'Wales'");
  assert.match(await page.textContent("#preview-count"), /of 100$/);

  // A download, too, runs the form as it stands.
  await page.fill("#filter", "region = 'Scotland'");
  const [csv] = await Promise.all([page.waitForEvent("download"), page.click("button[value=csv]")]);
  assert.match(csv.suggestedFilename(), /^default-shop-sales-v1-\d{8}T\d{6}Z\.csv$/);
  const rows = readFileSync(await csv.path(), "utf8").trim().split("\n");
  assert.equal(rows.length, 101);
  assert.ok(rows.slice(1).every((l) => l.includes(",Scotland,")));
  assert.deepEqual(page.problems, []);
});

test("grouping adds the grouped columns to the answer, and numbers are written for people", async () => {
  await page.goto(`${DS}/query`);
  await page.fill("#expressions", "avg(price) AS avg_price; sum(price) AS total");
  await page.check("#grp-region");
  await page.selectOption("#order", "region");
  await preview();
  const headers = await page.locator("#preview thead th").allTextContents();
  assert.deepEqual(headers.map((h) => h.replace(/[▲▼↕]/g, "").trim()), ["region", "avg_price", "total"]);
  assert.equal(await page.textContent("#preview tbody tr:first-child td:first-child"), "England");
  assert.match(await page.textContent("#preview-count"), /^Rows 1 to 4 of 4$/);
  const ireland = page.locator("#preview tbody tr", { hasText: "Ireland" });
  // 0.1 + 0.2 without the float noise (0.30000000000000004).
  assert.equal(await ireland.locator("td").nth(2).textContent(), "0.3");
  const england = page.locator("#preview tbody tr", { hasText: "England" });
  // sum of 12.00, 15.00, ... 309.00 = 16,050: grouped thousands.
  assert.equal(await england.locator("td").nth(2).textContent(), "16,050");
  await shoot(page, "query-grouped");
  // A value clicked keeps only its rows (added to the filter).
  await Promise.all([page.waitForNavigation(), page.click("#preview tbody tr:first-child td:first-child a.value")]);
  assert.equal(await page.inputValue("#filter"), "region = 'England'");
  assert.match(await page.textContent("#preview-count"), /^Rows 1 to 1 of 1$/);
  assert.deepEqual(page.problems, []);
});

test("the preview honours the typed limit, shows the total and pages through the answer", async () => {
  await page.goto(`${DS}/query`);
  assert.equal(await page.locator("#preview tbody tr").count(), 50, "rows on arrival");
  assert.equal(await page.textContent("#preview-count"), "Rows 1 to 50 of 302");
  await Promise.all([page.waitForNavigation(), page.click("a[rel=next]")]);
  assert.equal(await page.textContent("#preview-count"), "Rows 51 to 100 of 302");
  await Promise.all([page.waitForNavigation(), page.click("a[rel=prev]")]);
  assert.equal(await page.textContent("#preview-count"), "Rows 1 to 50 of 302");

  // Facets: the few-valued columns' commonest values and counts; one clicked filters on it.
  const region = page.locator("#facets .facet", { hasText: "region" });
  assert.match(await region.textContent(), /England\s*100.*Ireland\s*2/s);
  await Promise.all([page.waitForNavigation(), region.locator("a", { hasText: "Ireland" }).click()]);
  assert.equal(await page.inputValue("#filter"), "region = 'Ireland'");
  assert.equal(await page.textContent("#preview-count"), "Rows 1 to 2 of 2");
  assert.match(await page.locator("#facets .facet", { hasText: "product" }).textContent(), /p1\s*1.*p2\s*1/s);
  await shoot(page, "query-facets");
  await page.fill("#filter", "");

  await page.fill("#limit", "120");
  await preview();
  assert.equal(await page.locator("#preview tbody tr").count(), 120);
  assert.equal(await page.textContent("#preview-count"), "Rows 1 to 120 of 120");
  assert.equal(await page.locator("a[rel=next]").count(), 0);
});

test("ordering offers expression columns, and an order by an alias survives the next preview", async () => {
  await page.goto(`${DS}/query`);
  await page.check("#col-day");
  await page.check("#col-region");
  await page.fill("#expressions", "price * quantity AS revenue");
  await preview();
  await page.selectOption("#order", "revenue");
  await page.selectOption("#direction", "DESC");
  await preview();
  assert.equal(await page.inputValue("#order"), "revenue");
  const first = await page.textContent("#preview tbody tr:first-child td:last-child");
  assert.equal(first, "2121", "303.00 × 7, the largest revenue (under 10,000: not grouped)");
  // A preview again (another page) keeps the order by the alias.
  await Promise.all([page.waitForNavigation(), page.click("a[rel=next]")]);
  assert.equal(await page.inputValue("#order"), "revenue");
  assert.equal(await page.getAttribute("#preview thead th:last-child", "aria-sort"), "descending");
  // A header sorts by its column.
  await Promise.all([page.waitForNavigation(), page.click("#preview thead th:first-child a")]);
  assert.equal(await page.inputValue("#order"), "day");
  assert.equal(await page.textContent("#preview tbody tr:first-child td:first-child"), "2024-01-01");
  // A date clicked filters on it too.
  await Promise.all([page.waitForNavigation(), page.click("#preview tbody tr:first-child td:first-child a.value")]);
  assert.equal(await page.inputValue("#filter"), "day = '2024-01-01'");
  assert.match(await page.textContent("#preview-count"), /^Rows 1 to 11 of 11$/);
});

test("the jobs page has one line per job; a job's problems are grouped by column and rule", async () => {
  let bad = "day,region,product,quantity,price\n";
  for (let i = 0; i < 150; i++) bad += `not-a-date,Wales,p1,${i % 3 === 0 ? "many" : 1},1.5\n`;
  const refused = await uploadCsv("bad.csv", bad);
  assert.equal(refused.status, 422);
  const missing = await uploadCsv("missing.csv", "day,region,product\n2024-01-01,Wales,p1\n");
  assert.ok(missing.status >= 400, JSON.stringify(missing.body));
  await page.goto(`${BASE}/jobs`);
  assert.equal(await page.locator("table.jobs ul.errors").count(), 0, "no problem listed inline");
  const failed = page.locator("table.jobs tbody tr", { hasText: "150 rows with problems" });
  assert.equal(await failed.count(), 1);
  await shoot(page, "jobs-one-line");
  await Promise.all([page.waitForNavigation(), failed.locator("a", { hasText: "150 rows" }).click()]);
  assert.match(await page.textContent("#problem-totals"), /^150 rows have problems\. 100 problems are listed below, and \d+ more are not\./);
  const groups = page.locator("#problem-groups tbody tr");
  // True totals, counted in the report: 150 bad dates and 50 bad quantities (100 are listed).
  assert.equal(await page.textContent("#problem-groups thead th:nth-child(3)"), "Problems");
  assert.match(await groups.nth(0).textContent(), /^day\s*wrong type \(expected date.*\)\s*150\s*Column \[day\]/);
  assert.match(await groups.nth(1).textContent(), /^quantity\s*wrong type \(expected int\)\s*50\s*Column \[quantity\]/);
  assert.ok(await page.getAttribute("#job-report", "href"));
  await shoot(page, "job-problems");
  // A file without some of the schema's columns: each missing column named.
  await page.goto(`${BASE}/jobs`);
  const short = page.locator("table.jobs tbody tr", { hasText: "missing.csv" });
  await Promise.all([page.waitForNavigation(), short.locator("td:first-child a").click()]);
  const named = await page.textContent("#problem-groups");
  assert.match(named, /quantity\s*missing from the file/, named);
  assert.match(named, /price\s*missing from the file/, named);
  assert.deepEqual(page.problems, []);
});

test("a dataset the subject cannot read has a lock in the catalogue, and its page answers as a missing one, with the navigation", async () => {
  const made = await api(token, "POST", "/api/schema", {
    metadata: { domain: "shop", dataset: "payroll", sensitivity: "PRIVATE", owners: [{ name: "O", email: "o@example.com" }] },
    columns: [{ name: "n", data_type: "int", allow_null: false }],
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const client = await api(token, "POST", "/api/client", { client_name: "public_reader", permissions: ["READ_PUBLIC"] });
  assert.equal(client.status, 201, JSON.stringify(client.body));
  const reader = await newPage(browser);
  await signInClient(reader, client.body.client_id, client.body.client_secret);
  const payroll = reader.locator("table.datasets tbody tr", { hasText: "payroll" });
  assert.equal(await payroll.locator(".lock").count(), 1);
  assert.match(await payroll.textContent(), /no read access/);
  const sales = reader.locator("table.datasets tbody tr", { hasText: "sales" });
  assert.equal(await sales.locator(".lock").count(), 0);
  // The readable one opens on its rows straight from the catalogue; the locked one offers none.
  assert.equal(await payroll.locator("a.rows").count(), 0);
  assert.equal(await sales.locator("a.rows").getAttribute("href"), "/datasets/default/shop/sales/query");
  await shoot(reader, "catalogue-locked");
  const [res] = await Promise.all([reader.waitForNavigation(), payroll.locator("a").click()]);
  // Out of reach and unknown answer alike: the status and words never tell that it exists.
  assert.equal(res.status(), 404);
  assert.equal(await reader.textContent("h1"), "Not found");
  const words = (await reader.textContent("main")).replaceAll("payroll", "NAME");
  const missing = await reader.goto(`${BASE}/datasets/default/shop/nosuch`);
  assert.equal(missing.status(), 404);
  assert.equal((await reader.textContent("main")).replaceAll("nosuch", "NAME"), words);
  await reader.goBack();
  assert.equal(await reader.locator("nav[aria-label=Main] a", { hasText: "Catalogue" }).count(), 1);
  assert.equal(await reader.locator("form.signout").count(), 1);
  await shoot(reader, "forbidden");
});

test("a query the engine cannot run is explained in words, the form kept", async () => {
  await page.goto(`${DS}/query`);
  await page.fill("#filter", "quantity = 'many'");
  await preview();
  const alert = await page.textContent("[role=alert]");
  assert.doesNotMatch(alert, /Arrow error|Cast error|Query failed to execute/, alert);
  assert.match(alert, /'many'.*cannot be read as a whole number/, alert);
  assert.equal(await page.inputValue("#filter"), "quantity = 'many'");
  // A value without quotes, and an average of text: what to do instead.
  await page.fill("#filter", "region = Wales");
  await preview();
  assert.match(await page.textContent("[role=alert]"), /\[Wales\], which is not a column of this dataset\. If it is a value, put it in single quotes: column = 'Wales'/);
  await page.fill("#filter", "");
  await page.fill("#expressions", "avg(region) AS a");
  await preview();
  const avg = await page.textContent("[role=alert]");
  assert.match(avg, /^The function avg does not take text/, avg);
  assert.doesNotMatch(avg, /DataFusion|Utf8/);
  // A job that fails says why in words too.
  await page.fill("#expressions", "quantity / 0 AS x");
  await Promise.all([page.waitForNavigation(), page.click("button[value=job]")]);
  await Promise.all([page.waitForNavigation(), page.click("form.job button")]);
  await page.waitForSelector(".status[data-status=FAILED]", { timeout: 60000 });
  await page.reload();
  assert.match(await page.textContent("main [role=alert]"), /^The query divides by zero for some rows/);
  assert.equal(await page.locator("#problem-groups").count(), 0);
});

test("the new-user form keeps what was typed after a refusal", async () => {
  await page.goto(`${BASE}/subjects`);
  await page.fill("#user-name", "kept.user");
  await page.fill("#user-email", "kept.user@not-allowed.org");
  await page.check("#user-READ_PRIVATE");
  await Promise.all([page.waitForNavigation(), page.click("section[aria-labelledby=new-user] button")]);
  assert.match(await page.textContent("[role=alert]"), /not-allowed\.org|domain/i);
  assert.equal(await page.inputValue("#user-name"), "kept.user");
  assert.equal(await page.inputValue("#user-email"), "kept.user@not-allowed.org");
  assert.equal(await page.isChecked("#user-READ_PRIVATE"), true);
});

test("an answer too large to download is offered as a one-click job", async () => {
  const made = await api(token, "POST", "/api/schema", {
    metadata: { domain: "shop", dataset: "ticks", sensitivity: "PUBLIC", owners: [{ name: "O", email: "o@example.com" }] },
    columns: [{ name: "n", data_type: "int", allow_null: false }],
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  let rows = "n\n";
  for (let i = 0; i < 100001; i++) rows += `${i}\n`;
  const body = new FormData();
  body.append("file", new Blob([rows], { type: "text/csv" }), "ticks.csv");
  const up = await fetch(`${BASE}/api/datasets/default/shop/ticks`, { method: "POST", headers: { Authorization: `Bearer ${token}` }, body });
  assert.equal(up.status, 202);
  const job = (await up.json()).details.job_id;
  for (let i = 0; i < 300; i++) {
    if ((await api(token, "GET", `/api/jobs/${job}`)).body.status !== "IN PROGRESS") break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await page.goto(`${BASE}/datasets/default/shop/ticks/query`);
  assert.equal(await page.textContent("#preview-count"), "Rows 1 to 50 of 100,001");
  // The last page the preview reaches says where pages stop.
  await page.goto(`${BASE}/datasets/default/shop/ticks/query?page=9999`);
  assert.equal(await page.textContent("#preview-count"), "Rows 99,951 to 100,000 of 100,001");
  assert.match(await page.textContent("nav.pager"), /Pages stop at row 100,000: run the query as a job for the rest\./);
  assert.equal(await page.locator("a[rel=next]").count(), 0);
  await page.goto(`${BASE}/datasets/default/shop/ticks/query`);
  await Promise.all([page.waitForNavigation(), page.click("button[value=csv]")]);
  const alert = await page.textContent("[role=alert]");
  assert.match(alert, /^The answer has more than 100,000 rows, too many to show or download at once: run the query as a job/);
  assert.doesNotMatch(alert, /\/api\//);
  await shoot(page, "query-too-large");
  await Promise.all([page.waitForNavigation(), page.click(".offer form.job button")]);
  await page.waitForSelector(".status[data-status=SUCCESS]", { timeout: 120000 });
  assert.match(await page.textContent("table.jobs"), /100,001/);
});

test("the query page's SQL link runs a SELECT over the dataset, downloads it whole, and refuses a write in words", async () => {
  // "Ask in SQL" keeps the view: its filter, order and limit.
  await page.goto(`${DS}/query?filter=region+%3D+%27Wales%27&order=price&direction=DESC&limit=7&action=preview`);
  const view = 'SELECT * FROM "default"."shop"."sales" WHERE region = \'Wales\' ORDER BY "price" DESC NULLS LAST LIMIT 7';
  assert.equal(await page.textContent("#view-sql"), view);
  await Promise.all([page.waitForNavigation(), page.click("#sql-link")]);
  assert.equal(await page.inputValue("#sql"), view);
  await Promise.all([page.waitForNavigation(), page.click("#sql-run")]);
  assert.equal(await page.textContent("#sql-shown"), "7 rows");
  await page.goto(`${DS}/query`);
  await Promise.all([page.waitForNavigation(), page.click("#sql-link")]);
  assert.equal(await page.inputValue("#sql"), 'SELECT * FROM "default"."shop"."sales" LIMIT 100');
  await Promise.all([page.waitForNavigation(), page.click("#sql-run")]);
  assert.equal(await page.textContent("#sql-shown"), "100 rows");
  const grouped = 'SELECT region, count(*) AS n FROM "default".shop.sales GROUP BY region ORDER BY region';
  await page.fill("#sql", grouped);
  await Promise.all([page.waitForNavigation(), page.click("#sql-run")]);
  assert.equal(await page.textContent("#sql-shown"), "4 rows");
  const first = await page.locator("#sql-rows tbody tr").first().locator("td").allTextContents();
  assert.deepEqual(first, ["England", "100"]);
  assert.deepEqual(await page.locator("#sql-rows th").allTextContents(), ["region", "n"]);
  await shoot(page, "sql");
  const [csv] = await Promise.all([page.waitForEvent("download"), page.click("#sql-csv")]);
  const lines = readFileSync(await csv.path(), "utf8").trim().split("\n");
  assert.deepEqual(lines, ["region,n", "England,100", "Ireland,2", "Scotland,100", "Wales,100"]);
  await page.fill("#sql", 'DELETE FROM "default".shop.sales');
  await Promise.all([page.waitForNavigation(), page.click("#sql-run")]);
  // The refusal names what runs here: not SHOW or SET, which this page refuses too.
  assert.match(await page.textContent("[role=alert]"), /Only one SELECT \(or EXPLAIN of one\) runs here: DELETE is refused/);
  assert.equal(await page.inputValue("#sql"), 'DELETE FROM "default".shop.sales');
  // An EXPLAIN answers its plan.
  await page.fill("#sql", 'EXPLAIN SELECT count(*) FROM "default".shop.sales');
  await Promise.all([page.waitForNavigation(), page.click("#sql-run")]);
  assert.match(await page.textContent("#sql-rows"), /plan_type/);
  assert.deepEqual(page.problems, []);
});

// Last: it makes version 2, the latest, which the tests above do not expect.
test("a metadata edit keeps version 1 and its rows; a column change makes an empty version 2 the pages explain", async () => {
  await page.goto(`${BASE}/schema/edit/default/shop/sales`);
  assert.match(await page.textContent("#new-version-warning"), /saved in place \(version 1\): the rows stay/);
  await shoot(page, "schema-edit-version");
  await page.fill("#m_description", "Sales, described");
  await Promise.all([page.waitForNavigation(), page.click("form.schema button[type=submit]:not([value])")]);
  assert.match(await page.textContent("[role=status]"), /metadata of version 1 has been saved/);
  assert.equal(await page.textContent("#version-read"), "1");
  assert.equal(await page.textContent("#row-count"), "302");
  // The catalogue's search reads descriptions too.
  await page.goto(`${BASE}/?q=described`);
  assert.equal(await page.locator("table.datasets tbody tr", { hasText: "sales" }).count(), 1);
  // A column's type changed: a new version, empty, made once confirmed.
  await page.goto(`${BASE}/schema/edit/default/shop/sales`);
  await page.selectOption("[name=c3_data_type]", "double");
  await Promise.all([page.waitForNavigation(), page.click("form.schema button[type=submit]:not([value])")]);
  await Promise.all([page.waitForNavigation(), page.click("#confirm-new-version button")]);
  assert.match(await page.textContent("[role=status]"), /version 2/);
  assert.equal(await page.textContent("#version-read"), "2");
  assert.match(await page.textContent("#version-empty"), /Version 2 has no data yet.*version 1 \(302 rows\)/s);
  // The query page of the empty version says so, in place of "No rows match.".
  await page.goto(`${BASE}/datasets/default/shop/sales/query?version=2&action=preview`);
  assert.equal(await page.textContent("#preview-count"), "No rows: this version holds none (at this commit).");
  assert.match(await page.textContent("#version-empty"), /Version 2 has no rows.*version 1 \(302 rows\)/s);
  await page.goBack();
  await shoot(page, "dataset-versions");
  await Promise.all([page.waitForNavigation(), page.click("#version-empty a")]);
  assert.equal(await page.textContent("#version-read"), "1");
  assert.equal(await page.textContent("#row-count"), "302");
  await page.click("text=Query this dataset");
  assert.equal(await page.inputValue("#version"), "1");
  assert.match(await page.textContent("#preview-count"), /of 302$/);
  assert.deepEqual(page.problems, []);
});
