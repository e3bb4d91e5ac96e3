// Issue 55 on the pages: a reader under a dataset policy sees that it applies (the row filter's
// name, the masked column; not the filter's text), no row count, and only its rows, masked, in
// the query page; a DATA_ADMIN sees the policy's rules on the dataset page.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { BASE, ADMIN_ID, ADMIN_SECRET, launch, newPage, signInClient, shoot, adminToken, api } from "./lib.mjs";

const DS = `${BASE}/datasets/default/hr/crew`;
let browser, token, reader;

before(async () => {
  browser = await launch();
  token = await adminToken();
  const created = await api(token, "POST", "/api/schema", {
    metadata: {
      layer: "default", domain: "hr", dataset: "crew", sensitivity: "PUBLIC",
      owners: [{ name: "Owner", email: "owner@example.com" }],
    },
    columns: [
      { name: "region", data_type: "string", allow_null: false },
      { name: "name", data_type: "string", allow_null: false },
    ],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const body = new FormData();
  body.append("file", new Blob(["region,name\nnorth,ann\nnorth,bob\nsouth,cid\n"], { type: "text/csv" }), "crew.csv");
  const r = await fetch(`${BASE}/api/datasets/default/hr/crew`, {
    method: "POST", headers: { Authorization: `Bearer ${token}` }, body,
  });
  const answer = await r.json();
  assert.equal(r.status, 202, JSON.stringify(answer));
  for (let i = 0; i < 100; i++) {
    const job = await api(token, "GET", `/api/jobs/${answer.details.job_id}`);
    if (job.body.status === "SUCCESS") break;
    assert.equal(job.body.status, "IN PROGRESS", JSON.stringify(job.body));
    await new Promise((r) => setTimeout(r, 100));
  }
  const client = await api(token, "POST", "/api/client", { client_name: "crew_reader", permissions: ["READ_ALL"] });
  assert.equal(client.status, 201, JSON.stringify(client.body));
  reader = client.body;
  const attrs = await api(token, "PUT", `/api/subjects/${reader.client_id}/attributes`, { region: "north" });
  assert.equal(attrs.status, 200, JSON.stringify(attrs.body));
  const policy = await api(token, "PUT", "/api/datasets/default/hr/crew/policy", {
    row_filters: [{ name: "own_region", filter: "region = subject_attr('region')", applies_to: ["crew_reader"] }],
    column_masks: [{ column: "name", mask: "redact", applies_to: ["crew_reader"] }],
  });
  assert.equal(policy.status, 200, JSON.stringify(policy.body));
});
after(async () => { await browser?.close(); });

test("a reader under a policy is told so and sees only its rows, masked", async () => {
  const page = await newPage(browser);
  await signInClient(page, reader.client_id, reader.client_secret);
  await page.goto(DS);
  const notice = await page.textContent("#policy-applies");
  assert.match(notice, /A policy applies to you/);
  assert.match(notice, /own_region/);
  assert.match(notice, /name \(redact\)/);
  assert.doesNotMatch(await page.content(), /subject_attr|cid|south/);
  assert.equal(await page.locator("#row-count").count(), 0);
  await shoot(page, "dataset-under-policy");
  await page.goto(`${DS}/query?action=preview`);
  const cells = await page.locator("table tbody td").allTextContents();
  assert.ok(cells.includes("north") && cells.includes("REDACTED"), cells.join(","));
  assert.ok(!cells.includes("south") && !cells.includes("ann"), cells.join(","));
  await page.close();
});

test("a DATA_ADMIN sees the policy's rules on the dataset page", async () => {
  const page = await newPage(browser);
  await signInClient(page, ADMIN_ID, ADMIN_SECRET);
  await page.goto(DS);
  const filters = await page.locator("#policy-filters tbody td").allTextContents();
  assert.deepEqual(filters, ["own_region", "region = subject_attr('region')", "crew_reader", "—"]);
  const masks = await page.locator("#policy-masks tbody td").allTextContents();
  assert.deepEqual(masks, ["name", "redact", "crew_reader", "—"]);
  assert.match(await page.textContent("#policy-yours"), /None of it applies to you/);
  assert.equal(await page.textContent("#row-count"), "3");
  await shoot(page, "dataset-policy-admin");
  await page.close();
});
