// Issue 54 in headless Chromium: pages that never show a wrong answer. Paging through a view with
// ties shows each row once; a description edit keeps the data visible everywhere; quarantined
// rows are found again from the jobs list, the job and the history; after a rollback every figure
// on the dataset page is the current commit's; each history row links to the rows as of it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { BASE, ADMIN_ID, ADMIN_SECRET, launch, newPage, signInClient, shoot, adminToken, api } from "./lib.mjs";

const PATH = "/api/datasets/default/town/people";
const DS = `${BASE}/datasets/default/town/people`;
const ROWS = 230;
const CITIES = ["Leeds", "Bath", "York"];
let browser, page, token;

async function upload(name, text, params = "") {
  const body = new FormData();
  body.append("file", new Blob([text], { type: "text/csv" }), name);
  const r = await fetch(`${BASE}${PATH}${params}`, {
    method: "POST", headers: { Authorization: `Bearer ${token}` }, body,
  });
  const answer = await r.json();
  assert.equal(r.status, 202, JSON.stringify(answer));
  for (let i = 0; i < 200; i++) {
    const job = await api(token, "GET", `/api/jobs/${answer.details.job_id}`);
    if (job.body.status !== "IN PROGRESS") return job.body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("upload still running");
}

async function apiCount() {
  const q = await api(token, "POST", `${PATH}/query`, { select_columns: ["count(*) AS n"] });
  assert.equal(q.status, 200, JSON.stringify(q.body));
  return q.body["0"].n;
}

before(async () => {
  browser = await launch();
  token = await adminToken();
  const created = await api(token, "POST", "/api/schema", {
    metadata: {
      layer: "default", domain: "town", dataset: "people", sensitivity: "PUBLIC",
      description: "People by city", owners: [{ name: "Owner", email: "owner@example.com" }],
    },
    columns: [
      { name: "id", data_type: "int", allow_null: false },
      { name: "city", data_type: "string", allow_null: false },
    ],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  // Four files (read in parallel), ids out of order in each, three cities: ties everywhere.
  for (let part = 0; part < 4; part++) {
    let csv = "id,city\n";
    for (let id = ROWS; id >= 1; id--) if (id % 4 === part) csv += `${id},${CITIES[id % 3]}\n`;
    assert.equal((await upload(`part${part}.csv`, csv)).status, "SUCCESS");
  }
  page = await newPage(browser);
  await signInClient(page, ADMIN_ID, ADMIN_SECRET);
});
after(async () => { await browser?.close(); });

/// Follows "Next" from the page shown to the end: the (id, city) of every row seen.
async function pageThrough() {
  const seen = [];
  for (let i = 0; i < 30; i++) {
    const rows = await page.locator("#preview tbody tr").evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent.trim())));
    for (const [id, city] of rows) seen.push([Number(id), city]);
    const next = page.locator("a[rel=next]");
    if ((await next.count()) === 0) return seen;
    await Promise.all([page.waitForNavigation(), next.click()]);
  }
  throw new Error("more pages than rows");
}

function assertEachOnce(seen, view) {
  const ids = seen.map(([id]) => id).sort((a, b) => a - b);
  assert.deepEqual(ids, Array.from({ length: ROWS }, (_, i) => i + 1), `${view}: every id once`);
}

test("paging through a view with no sort, and sorted by a column of ties, shows every row once", async () => {
  await page.goto(`${DS}/query?action=preview`);
  assertEachOnce(await pageThrough(), "no sort");
  await page.goto(`${DS}/query?action=preview`);
  await Promise.all([page.waitForNavigation(), page.click("#preview th a:has-text('city')")]);
  const sorted = await pageThrough();
  assertEachOnce(sorted, "sorted by city");
  const cities = sorted.map(([, c]) => c);
  assert.deepEqual(cities, [...cities].sort(), "in the sort's order across page ends");
  assert.deepEqual(page.problems, []);
});

test("a description edit keeps the version and its data on every page; a column change asks first", async () => {
  await page.goto(DS);
  await Promise.all([page.waitForNavigation(), page.click("text=Edit the schema")]);
  assert.match(await page.textContent("#new-version-warning"), /saved in place/);
  await page.fill("#m_description", "People by city, edited in place");
  await Promise.all([page.waitForNavigation(), page.click("form.schema button[type=submit]:not([value])")]);
  assert.match(await page.textContent("[role=status]"), /metadata of version 1 has been saved; its rows are unchanged/);
  assert.equal(await page.textContent("#version-read"), "1");
  assert.equal(await page.textContent("#row-count"), String(ROWS));
  assert.match(await page.textContent("main"), /descriptionPeople by city, edited in place/);
  // The catalogue, the browse page and SQL all still see the rows.
  await page.goto(`${BASE}/?q=people`);
  const listed = await page.textContent("main");
  assert.match(listed, /People by city, edited in place/);
  assert.doesNotMatch(listed, /Never updated/);
  await page.goto(`${DS}/query?action=preview`);
  assert.match(await page.textContent("#preview-count"), new RegExp(`of ${ROWS}$`));
  await page.goto(`${BASE}/sql`);
  await page.fill("#sql", 'SELECT count(*) AS n FROM "default"."town"."people"');
  await Promise.all([page.waitForNavigation(), page.click("#sql-run")]);
  assert.equal((await page.locator("#sql-rows tbody td").allTextContents()).at(-1).trim(), String(ROWS));
  assert.equal(await apiCount(), ROWS);

  // A column change needs a new, empty version: offered, not made, until confirmed.
  await page.goto(`${BASE}/schema/edit/default/town/people`);
  await page.selectOption("[name=c1_data_type]", "int");
  await Promise.all([page.waitForNavigation(), page.click("form.schema button[type=submit]:not([value])")]);
  assert.match(await page.textContent("#confirm-new-version"), /need a new version: version 2, which starts with no rows/);
  await shoot(page, "schema-confirm-new-version");
  const versions = await api(token, "GET", `${PATH}/info?version=2`);
  assert.equal(versions.status, 404, "no version 2 before it is confirmed");
  assert.deepEqual(page.problems, []);
});

test("quarantined rows are reached from the jobs list, the job page and the history", async () => {
  const job = await upload("bad.csv", "id,city\n900,Leeds\nnot-a-number,Bath\n901,York\n", "?on_error=quarantine");
  assert.equal(job.status, "SUCCESS", JSON.stringify(job));
  await page.goto(`${BASE}/jobs`);
  const link = page.locator(`a[href="/jobs/${job.job_id}#problems"]`);
  assert.equal(await link.textContent(), "1 row with problems");
  await Promise.all([page.waitForNavigation(), link.click()]);
  assert.ok(await page.locator("#problems").isVisible(), "the #problems anchor exists on a SUCCESS job");
  const href = await page.getAttribute("#quarantine-link", "href");
  const kept = await page.evaluate(async (u) => (await fetch(u)).text(), href);
  assert.match(kept, /not-a-number,Bath/);
  assert.doesNotMatch(kept, /900,Leeds/);
  await shoot(page, "job-quarantined");
  await page.goto(`${DS}/history`);
  const row = page.locator("#commits tbody tr", { hasText: "bad.csv" });
  await Promise.all([page.waitForNavigation(), row.locator("a.problems").click()]);
  assert.match(page.url(), new RegExp(`/jobs/${job.job_id}#problems$`));
  assert.deepEqual(page.problems, []);
});

test("after a rollback every figure is the current commit's, and each commit links to its rows", async () => {
  await page.goto(DS);
  const before = await page.textContent("main");
  const updatedBefore = before.match(/Last updated\s*(\S+ \S+)/)[1];
  await new Promise((r) => setTimeout(r, 1100)); // a later second for "last updated"
  await page.goto(`${DS}/history`);
  // Commits: four uploads, the quarantine upload (5); back to commit 2 (two files' rows).
  await Promise.all([page.waitForNavigation(), page.click("button[aria-label='Roll back to commit 2']")]);
  await Promise.all([page.waitForNavigation(), page.click("text=Yes, roll back")]);
  const expected = await apiCount();
  assert.equal(expected, 57 + 58, "parts 0 and 1: the ids 4..228 by 4 and 1..229 by 4");
  await page.goto(DS);
  await shoot(page, "dataset-after-rollback");
  assert.equal(await page.textContent("#row-count"), String(expected));
  assert.match(await page.textContent("nav.versions"), new RegExp(`1 \\(${expected} rows\\)`));
  const fileRows = await page.locator("table.files tbody tr td:nth-child(3)").allTextContents();
  assert.equal(fileRows.map(Number).reduce((a, b) => a + b, 0), expected, "the files listed hold the current rows");
  assert.equal(fileRows.length, 2);
  assert.match(await page.textContent("#files-not-current"), /part2\.csv.*part3\.csv.*bad\.csv/s);
  assert.match(await page.textContent("main"), new RegExp(`Over ${expected} rows of 2 uploads`));
  const updatedAfter = (await page.textContent("main")).match(/Last updated\s*(\S+ \S+)/)[1];
  assert.ok(updatedAfter > updatedBefore, `${updatedAfter} after ${updatedBefore}`);

  // As of commit 1 from the history: the first file's rows, and the page says which commit.
  await page.goto(`${DS}/history`);
  const first = page.locator("#commits tbody tr").last();
  await Promise.all([page.waitForNavigation(), first.locator("a.as-of").click()]);
  assert.equal(await page.textContent("#as-of"), "commit 1");
  const asOf = await api(token, "POST", `${PATH}/query?as_of_commit=1`, { select_columns: ["count(*) AS n"] });
  assert.match(await page.textContent("#preview-count"), new RegExp(`of ${asOf.body["0"].n}$`));
  await shoot(page, "query-as-of");
  assert.deepEqual(page.problems, []);
});

test("the small things: sort links that look like links, a net change per commit, plural words, the password minimum", async () => {
  await page.goto(`${DS}/query?action=preview`);
  const header = page.locator("#preview thead th a").first();
  assert.match(await header.textContent(), /↕/);
  assert.match(await header.evaluate((a) => getComputedStyle(a).textDecorationLine), /underline/);
  await page.goto(`${DS}/history`);
  const rollback = page.locator("#commits tbody tr", { hasText: "ROLLBACK" });
  const cells = await rollback.locator("td").allTextContents();
  assert.equal(cells[7], "−" + String(ROWS + 2 - 115), "the rollback's net change");
  await page.goto(`${BASE}/jobs`);
  assert.match(await page.textContent("table.jobs"), /1 row with problems/);
  // A link cannot put its own words in the green box: only the service's, for this session.
  await page.goto(`${BASE}/?done=Your+account+is+locked%3A+call+0800`);
  assert.doesNotMatch(await page.textContent("main"), /account is locked/);
  await page.goto(`${DS}/history?done=Forged&done_sig=${"0".repeat(64)}`);
  assert.doesNotMatch(await page.textContent("main"), /Forged/);
  // A statement the parser cannot read is explained in words, not as ParserError(...).
  await page.goto(`${BASE}/sql`);
  await page.fill("#sql", "SELEC 1");
  await Promise.all([page.waitForNavigation(), page.click("#sql-run")]);
  const unread = await page.textContent("[role=alert]");
  assert.match(unread, /The statement could not be read: expected .* but found SELEC \(line 1, column 1\)/);
  assert.doesNotMatch(unread, /ParserError/);
  // Hints name this dataset's columns; facets say what they count; a favicon is served.
  await page.goto(`${DS}/query?action=preview`);
  assert.equal(await page.getAttribute("#filter", "placeholder"), "id IS NOT NULL AND city IS NOT NULL");
  assert.match(await page.textContent("#facets-note"), /every row the filter keeps, whatever the limit/);
  const icon = await page.getAttribute("link[rel=icon]", "href");
  assert.equal((await page.request.get(BASE + icon)).status(), 200);
  // The catalogue: a domain found by part of its name; "N of M" counts every dataset seen.
  const every = (await api(token, "POST", "/api/datasets", {})).body.length;
  await page.goto(`${BASE}/?domain=TOW`);
  assert.equal(await page.locator("table.datasets tbody tr", { hasText: "people" }).count(), 1);
  await page.goto(`${BASE}/?sensitivity=PRIVATE`);
  assert.equal(await page.textContent("#catalogue-count"), `0 of ${every} datasets`);
  await page.goto(`${BASE}/password`);
  assert.match(await page.textContent("label[for=new_password]"), /at least 12 characters/);
  assert.equal(await page.getAttribute("#new_password", "minlength"), "12");
  // The column change's confirmation names what changed.
  await page.goto(`${BASE}/schema/edit/default/town/people`);
  await page.selectOption("[name=c1_data_type]", "int");
  await Promise.all([page.waitForNavigation(), page.click("form.schema button[type=submit]:not([value])")]);
  assert.equal(await page.textContent("#column-changes"), "column city: type string → int");
  assert.deepEqual(page.problems, []);
});

test("a column is added from the pages: a new version, the changes listed first", async () => {
  await page.goto(`${BASE}/schema/edit/default/town/people`);
  // greater_than and less_than are strict, and the editor says so.
  assert.match(await page.textContent("main"), /greater_than: more than the threshold \(0 refuses 0\)/);
  await Promise.all([page.waitForNavigation(), page.click("#add-column")]);
  assert.equal(await page.locator("table.editor tbody tr").count(), 3);
  await page.fill("[name=c2_name]", "street");
  await Promise.all([page.waitForNavigation(), page.click("form.schema button[type=submit]:not([value])")]);
  assert.equal(await page.textContent("#column-changes"), "column street added (string)");
  await Promise.all([page.waitForNavigation(), page.click("#confirm-new-version button")]);
  assert.match(await page.textContent("[role=status]"), /stored as version 2/);
  assert.match(await page.textContent("table.columns"), /street/);
  // The new version is empty, and the pages say where the rows are.
  assert.match(await page.textContent("#version-empty"), /Version 2 has no data yet.*version 1/s);
  assert.deepEqual(page.problems, []);
});

test("a PUBLIC dataset in a protected domain: the editor warns, the domains page says the rule", async () => {
  assert.equal((await api(token, "POST", "/api/protected_domains/vault")).status, 201);
  await page.goto(`${BASE}/schema/edit/default/town/people`);
  assert.equal(await page.locator(".protection-warning").count(), 0, "town is not protected");
  await page.goto(`${BASE}/protected-domains`);
  assert.match(await page.textContent("#protection-rule"), /PUBLIC or PRIVATE dataset in the same domain is not protected/);
  // A draft for the protected domain, PUBLIC: the editor says who can read it.
  await page.goto(`${BASE}/schema/new`);
  await page.fill("#domain", "vault");
  await page.fill("#dataset", "open_box");
  const sample = new Blob(["a,b\n1,2\n"]);
  await page.setInputFiles("#file", { name: "box.csv", mimeType: "text/csv", buffer: Buffer.from(await sample.arrayBuffer()) });
  await Promise.all([page.waitForNavigation(), page.click("text=Generate the schema")]);
  assert.match(await page.textContent(".protection-warning"), /vault is protected.*PUBLIC dataset is readable with READ_PUBLIC/s);
  assert.deepEqual(page.problems, []);
});

test("partition labels read as their values, not URL-encoded", async () => {
  const created = await api(token, "POST", "/api/schema", {
    metadata: { layer: "default", domain: "town", dataset: "areas", sensitivity: "PUBLIC",
      owners: [{ name: "Owner", email: "owner@example.com" }] },
    columns: [
      { name: "area", data_type: "string", allow_null: false, partition_index: 0 },
      { name: "n", data_type: "int", allow_null: false },
    ],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const body = new FormData();
  body.append("file", new Blob(["area,n\nNorth East,1\nSouth/West,2\n"], { type: "text/csv" }), "areas.csv");
  const r = await fetch(`${BASE}/api/datasets/default/town/areas`, { method: "POST", headers: { Authorization: `Bearer ${token}` }, body });
  const job = (await r.json()).details.job_id;
  for (let i = 0; i < 100 && (await api(token, "GET", `/api/jobs/${job}`)).body.status === "IN PROGRESS"; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.goto(`${BASE}/datasets/default/town/areas`);
  const labels = (await page.locator("svg.chart text").allTextContents()).join(" | ");
  assert.match(labels, /area=North East/);
  assert.match(labels, /area=South\/West/);
  assert.doesNotMatch(labels, /%2[0F]/i);
});

test("histogram labels are numbers for people, not float noise", async () => {
  const created = await api(token, "POST", "/api/schema", {
    metadata: { layer: "default", domain: "town", dataset: "levels", sensitivity: "PUBLIC",
      owners: [{ name: "Owner", email: "owner@example.com" }] },
    columns: [{ name: "level", data_type: "double", allow_null: false }],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  let csv = "level\n";
  for (let i = 0; i < 300; i++) csv += `${(0.1 * i + 0.03).toFixed(2)}\n`;
  const body = new FormData();
  body.append("file", new Blob([csv], { type: "text/csv" }), "levels.csv");
  const r = await fetch(`${BASE}/api/datasets/default/town/levels`, { method: "POST", headers: { Authorization: `Bearer ${token}` }, body });
  const job = (await r.json()).details.job_id;
  for (let i = 0; i < 100 && (await api(token, "GET", `/api/jobs/${job}`)).body.status === "IN PROGRESS"; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  await page.goto(`${BASE}/datasets/default/town/levels`);
  const labels = await page.locator("svg.chart text").allTextContents();
  assert.ok(labels.some((l) => / up to /.test(l)), labels.join(" | "));
  assert.ok(labels.every((l) => !/\d\.\d{13,}/.test(l)), labels.join(" | "));
  // Bins do not overlap: each holds its lower end only ("up to"), the last both ends ("to").
  const bins = [...new Set(labels.filter((l) => / (up )?to /.test(l)))];
  assert.equal(bins.filter((l) => / to /.test(l) && !/ up to /.test(l)).length, 1, bins.join(" | "));
});
