// New schema from a sample in headless Chromium: generate, edit fields, save; then a new version.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync, mkdtempSync } from "node:fs";
import path from "node:path";
import os from "node:os";
import { BASE, ADMIN_ID, ADMIN_SECRET, launch, newPage, signInClient, shoot } from "./lib.mjs";

let browser, page, dir;
before(async () => {
  browser = await launch();
  dir = mkdtempSync(path.join(os.tmpdir(), "rapid-browser-schema-"));
  page = await newPage(browser);
  await signInClient(page, ADMIN_ID, ADMIN_SECRET);
});
after(async () => { await browser?.close(); });

test("a refused sample keeps what was typed in the form", async () => {
  const bad = path.join(dir, "bad-header.csv");
  writeFileSync(bad, "a,,b\n1,2,3\n");
  await page.goto(`${BASE}/schema/new`);
  await page.selectOption("#sensitivity", "PRIVATE");
  await page.fill("#domain", "shop");
  await page.fill("#dataset", "kept_names");
  await page.setInputFiles("#file", bad);
  await Promise.all([page.waitForNavigation(), page.click("text=Generate the schema")]);
  assert.ok(await page.textContent("[role=alert]"));
  assert.equal(await page.inputValue("#domain"), "shop");
  assert.equal(await page.inputValue("#dataset"), "kept_names");
  assert.equal(await page.inputValue("#sensitivity"), "PRIVATE");
});

test("a schema is generated from a sample, edited and saved, then edited into version 2", async () => {
  const sample = path.join(dir, "orders.csv");
  writeFileSync(sample, "Order Id,Placed On,Amount,Region\n1,2024/12/31,9.5,north\n2,2023/01/02,3.25,south\n");
  await page.goto(`${BASE}/schema/new`);
  await shoot(page, "schema-new");
  await page.fill("#domain", "shop");
  await page.fill("#dataset", "orders");
  await page.setInputFiles("#file", sample);
  await Promise.all([page.waitForNavigation(), page.click("text=Generate the schema")]);
  assert.equal(await page.textContent("h1"), "Edit and save the schema");
  assert.equal(await page.inputValue("[name=c0_name]"), "order_id");
  assert.equal(await page.inputValue("[name=c0_data_type]"), "int");
  assert.equal(await page.inputValue("[name=c1_data_type]"), "date");
  assert.equal(await page.inputValue("[name=c1_format]"), "%Y/%m/%d");
  assert.equal(await page.inputValue("[name=c2_data_type]"), "double");
  // The rules the draft breaks are shown before any save: the generator's change-me owner.
  assert.match(await page.textContent("#schema-rules"), /Before this schema can be saved:.*owner/is);

  // Edit: description, tags, a unique id that may not be null, region as the partition, a check.
  await page.fill("#m_description", "Orders by region");
  await page.fill("#m_tags", "owner=sales");
  await page.fill("#m_owners", "Sales <sales@example.com>");
  await page.uncheck("[name=c0_allow_null]");
  await page.check("[name=c0_unique]");
  await page.fill("[name=c3_partition_index]", "0");
  // A partition column that allows nulls breaks a rule: checked without saving, then fixed.
  await Promise.all([page.waitForNavigation(), page.click("button[value=check]")]);
  assert.match(await page.textContent("#schema-rules"), /region/i);
  assert.doesNotMatch(await page.textContent("#schema-rules"), /owner/i);
  assert.equal(await page.inputValue("#m_description"), "Orders by region");
  await page.uncheck("[name=c3_allow_null]");
  await Promise.all([page.waitForNavigation(), page.click("button[value=check]")]);
  assert.equal(await page.textContent("#schema-rules"), "The schema follows every rule: it can be saved.");
  await shoot(page, "schema-edit");
  // Checks are built from a type list and values in words, never JSON; a bad value is refused
  // in words, and the editor keeps every edit.
  await page.selectOption("[name=c2_k0_type]", "in_range");
  await page.fill("[name=c2_k0_values]", "zero to lots");
  await Promise.all([page.waitForNavigation(), page.click("form.schema button[type=submit]")]);
  assert.match(await page.textContent("[role=alert]"), /Column amount: the check in_range needs its values as min to max, e\.g\. 0 to 100; \[zero to lots\] is not that\./);
  assert.equal(await page.inputValue("#m_description"), "Orders by region");
  assert.equal(await page.inputValue("[name=c2_k0_type]"), "in_range");
  assert.equal(await page.inputValue("[name=c2_k0_values]"), "zero to lots");
  await page.fill("[name=c2_k0_values]", "0 to 1000");
  await page.selectOption("[name=c3_k0_type]", "isin");
  await page.fill("[name=c3_k0_values]", "north, south");
  await Promise.all([page.waitForNavigation(), page.click("form.schema button[type=submit]")]);
  // Saved from a sample: the confirmation (which offers to upload the sample), then the dataset.
  assert.match(page.url(), /\/schema\/saved\//, await page.textContent("main"));
  assert.match(await page.textContent("[role=status]"), /version 1/);
  await Promise.all([page.waitForNavigation(), page.click("text=Open the dataset")]);
  assert.match(page.url(), /\/datasets\/default\/shop\/orders/, await page.textContent("main"));
  assert.match(await page.textContent("table.columns"), /region.*0/s);
  const columns = await page.textContent("table.columns");
  // Checks in words, not their JSON parameters.
  assert.match(columns, /values from 0 to 1000/);
  assert.match(columns, /one of north, south/);
  assert.doesNotMatch(columns, /check_type=|parameters=/);

  await page.click("text=Edit the schema");
  assert.equal(await page.inputValue("#m_description"), "Orders by region");
  // The stored checks come back in the builder's words.
  assert.equal(await page.inputValue("[name=c2_k0_type]"), "in_range");
  assert.equal(await page.inputValue("[name=c2_k0_values]"), "0 to 1000");
  assert.equal(await page.inputValue("[name=c3_k0_values]"), "north, south");
  // Usable at phone width: each column's fields stacked, none wider than the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  const [wide, room] = await page.evaluate(() => {
    const table = document.querySelector("table.editor");
    return [table.scrollWidth, table.parentElement.clientWidth];
  });
  assert.ok(wide <= room, `the editor fits a phone (${wide} px in ${room} px)`);
  assert.ok(await page.locator("[name=c2_k0_values]").isVisible());
  await shoot(page, "schema-edit-checks");
  await page.setViewportSize({ width: 1280, height: 800 });
  // Metadata alone is saved in place: still version 1.
  await page.fill("#m_description", "Orders by region, edited");
  await Promise.all([page.waitForNavigation(), page.click("form.schema button[type=submit]:not([value])")]);
  assert.match(await page.textContent("[role=status]"), /metadata of version 1 has been saved/);
  assert.equal(await page.textContent("nav[aria-label=Versions] strong"), "1");
  // A column change is a new version, made once confirmed.
  await page.click("text=Edit the schema");
  assert.equal(await page.inputValue("#m_description"), "Orders by region, edited");
  await page.selectOption("[name=c2_data_type]", "int");
  await page.fill("[name=c2_k0_values]", "0 to 1000");
  await Promise.all([page.waitForNavigation(), page.click("form.schema button[type=submit]:not([value])")]);
  assert.match(await page.textContent("#confirm-new-version"), /version 2, which starts with no rows/);
  await Promise.all([page.waitForNavigation(), page.click("#confirm-new-version button")]);
  assert.match(await page.textContent("[role=status]"), /version 2/);
  assert.equal(await page.textContent("nav[aria-label=Versions] strong"), "2");
  assert.deepEqual(page.problems, []);
});
