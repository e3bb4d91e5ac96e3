// Issue 36 on the pages: a dataset's history lists its commits, and a DATA_ADMIN rolls back to
// an earlier one behind a confirmation; the dataset then holds that commit's rows. A file deleted
// with the erasure box ticked leaves every retained commit (an ERASE commit).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { BASE, ADMIN_ID, ADMIN_SECRET, launch, newPage, signInClient, shoot, adminToken, api } from "./lib.mjs";

const DS = `${BASE}/datasets/default/shop/ledger`;
let browser, page, token;

async function upload(name, text) {
  const body = new FormData();
  body.append("file", new Blob([text], { type: "text/csv" }), name);
  const r = await fetch(`${BASE}/api/datasets/default/shop/ledger`, {
    method: "POST", headers: { Authorization: `Bearer ${token}` }, body,
  });
  const answer = await r.json();
  assert.equal(r.status, 202, JSON.stringify(answer));
  for (let i = 0; i < 100; i++) {
    const job = await api(token, "GET", `/api/jobs/${answer.details.job_id}`);
    if (job.body.status !== "IN PROGRESS") return job.body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("upload still running");
}

before(async () => {
  browser = await launch();
  token = await adminToken();
  const created = await api(token, "POST", "/api/schema", {
    metadata: {
      layer: "default", domain: "shop", dataset: "ledger", sensitivity: "PUBLIC",
      owners: [{ name: "Owner", email: "owner@example.com" }],
    },
    columns: [
      { name: "item", data_type: "string", allow_null: false },
      { name: "amount", data_type: "int", allow_null: false },
    ],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal((await upload("first.csv", "item,amount\na,1\nb,2\n")).status, "SUCCESS");
  assert.equal((await upload("second.csv", "item,amount\nc,3\nd,4\ne,5\n")).status, "SUCCESS");
  page = await newPage(browser);
  await signInClient(page, ADMIN_ID, ADMIN_SECRET);
});
after(async () => { await browser?.close(); });

test("the history lists the commits newest first and a rollback, confirmed, brings back an earlier commit's rows", async () => {
  await page.goto(DS);
  assert.equal(await page.textContent("#row-count"), "5");
  await Promise.all([page.waitForNavigation(), page.click("#history-link")]);
  const rows = page.locator("#commits tbody tr");
  assert.equal(await rows.count(), 2);
  const newest = await rows.nth(0).locator("td").allTextContents();
  assert.deepEqual([newest[0], newest[2], newest[5], newest[6]], ["2", "APPEND", "3", "0"]);
  assert.match(newest[4], /-second\.csv$/); // the stored raw file's name
  assert.equal(newest[7], "+3");
  assert.equal(newest[8], "Rows as of this commit");
  assert.match(newest[9], /current/);
  await shoot(page, "history");
  // Roll back to commit 1: a confirmation first, which says nothing is deleted.
  await Promise.all([page.waitForNavigation(), page.click("button[aria-label='Roll back to commit 1']")]);
  assert.match(await page.textContent("main"), /Make a new commit of version 1 whose rows are those of commit 1\?.*Nothing is deleted/s);
  await Promise.all([page.waitForNavigation(), page.click("text=Yes, roll back")]);
  assert.match(await page.textContent("[role=status]"), /Commit 3 has the rows of commit 1\./);
  const after = await rows.nth(0).locator("td").allTextContents();
  assert.deepEqual([after[0], after[2]], ["3", "ROLLBACK"]);
  assert.equal(await rows.count(), 3);
  await page.goto(DS);
  assert.equal(await page.textContent("#row-count"), "2");
  assert.deepEqual(page.problems, []);
});

test("a file deleted with its erasure box ticked is an ERASE commit, and the page states the retention", async () => {
  assert.equal((await upload("third.csv", "item,amount\nf,6\n")).status, "SUCCESS");
  await page.goto(DS);
  assert.equal(await page.textContent("#row-count"), "3");
  const third = page.locator("table.files tbody tr", { hasText: "third.csv" });
  await Promise.all([page.waitForNavigation(), third.locator("button.danger").click()]);
  assert.equal(await page.textContent("h1"), "Delete a file?");
  assert.equal(await page.isChecked("#erase"), false, "erasure is never the default");
  assert.match(await page.textContent("#erase-choice"), /cannot be undone/);
  await page.check("#erase");
  await Promise.all([page.waitForNavigation(), page.click("text=Yes, delete")]);
  assert.match(await page.textContent("[role=status]"), /erased from every retained commit/);
  assert.equal(await page.textContent("#row-count"), "2");
  await Promise.all([page.waitForNavigation(), page.click("#history-link")]);
  const newest = await page.locator("#commits tbody tr").nth(0).locator("td").allTextContents();
  assert.equal(newest[2], "ERASE");
  assert.match(newest[4], /-third\.csv$/);
  // The schema sets no retention: the settings' (100 commits, or a day) are stated.
  assert.equal(await page.textContent("#keep-commits"), "100");
  assert.equal(await page.textContent("#keep-for"), "1 day");
  assert.deepEqual(page.problems, []);
});
