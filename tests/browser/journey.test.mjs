// The journey through the web pages in headless Chromium: sign in both ways (with the
// forced replacement of a temporary password), subjects and permissions, a READ-only subject's
// view and its forged posts, CSRF, sign out.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { BASE, ADMIN_ID, ADMIN_SECRET, launch, newPage, signInClient, signInUser, signOut, shoot, postFrom, adminToken, api } from "./lib.mjs";

let browser;
before(async () => {
  browser = await launch();
  // A PUBLIC dataset the READ-only user may read but not change.
  const created = await api(await adminToken(), "POST", "/api/schema", {
    metadata: { domain: "journey", dataset: "readable", sensitivity: "PUBLIC", owners: [{ name: "O", email: "o@example.com" }] },
    columns: [{ name: "n", data_type: "int", allow_null: false }],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
});
after(async () => { await browser?.close(); });

const shared = {};

test("the admin client signs in and sees every admin control", async () => {
  const page = await newPage(browser);
  await page.goto(`${BASE}/`);
  assert.match(page.url(), /\/signin$/, "a page without a session redirects to sign-in");
  await shoot(page, "signin");
  const res = await page.goto(`${BASE}/signin`);
  const csp = res.headers()["content-security-policy"];
  assert.match(csp, /script-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline/);

  // A wrong secret is shown in words, and the form stays usable.
  await page.fill("#client_id", ADMIN_ID);
  await page.fill("#client_secret", "not-the-secret");
  await Promise.all([page.waitForNavigation(), page.click("section[aria-labelledby=as-client] button")]);
  assert.equal(await page.textContent("[role=alert]"), "Invalid client credentials");

  await signInClient(page, ADMIN_ID, ADMIN_SECRET);
  assert.equal(new URL(page.url()).pathname, "/");
  assert.equal(await page.textContent("h1"), "Catalogue");
  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name === "rapid_session");
  assert.ok(session.httpOnly, "session cookie is HttpOnly");
  assert.equal(session.sameSite, "Strict");
  for (const link of ["Subjects", "Protected domains", "Jobs"]) {
    assert.equal(await page.locator("nav a", { hasText: link }).count(), 1, `nav has ${link}`);
  }
  await shoot(page, "catalogue");
  shared.admin = page;
});

test("the admin creates a READ-only user and a client, and changes the client's permissions", async () => {
  const page = shared.admin;
  await page.goto(`${BASE}/subjects`);
  await page.fill("#user-name", "reader.one");
  await page.fill("#user-email", "reader.one@example.com");
  await Promise.all([page.waitForNavigation(), page.click("section[aria-labelledby=new-user] button")]);
  assert.equal(await page.textContent("h1"), "Subject created");
  shared.readerPassword = (await page.textContent("#new-secret")).trim();
  assert.equal(shared.readerPassword.length, 24);
  // The page names what signs in: the user's name, not its id.
  assert.equal((await page.textContent("#new-name")).trim(), "reader.one");
  assert.match(await page.textContent("dl.secret"), /User id \(for the API's permission routes; not for signing in\)/);
  await shoot(page, "subject-created");

  await page.goto(`${BASE}/subjects`);
  await page.fill("#client-name", "web-client");
  await page.check("#client-WRITE_PUBLIC");
  await Promise.all([page.waitForNavigation(), page.click("section[aria-labelledby=new-client] button")]);
  const clientId = (await page.textContent("#new-id")).trim();
  shared.clientSecret = (await page.textContent("#new-secret")).trim();
  shared.clientId = clientId;
  await page.goto(`${BASE}/subjects`);
  await shoot(page, "subjects");

  await page.goto(`${BASE}/subjects/${clientId}`);
  assert.ok(await page.isChecked("#perm-READ_PUBLIC"));
  assert.ok(await page.isChecked("#perm-WRITE_PUBLIC"));
  await page.uncheck("#perm-WRITE_PUBLIC");
  await page.check("#perm-READ_PRIVATE");
  await Promise.all([page.waitForNavigation(), page.click("text=Save permissions")]);
  assert.match(await page.textContent("[role=status]"), /Permissions saved: READ_PRIVATE, READ_PUBLIC|Permissions saved: READ_PUBLIC, READ_PRIVATE/);
  assert.ok(!(await page.isChecked("#perm-WRITE_PUBLIC")));
  assert.ok(await page.isChecked("#perm-READ_PRIVATE"));
  await shoot(page, "subject-permissions");
});

test("the admin manages protected domains and sees the jobs page", async () => {
  const page = shared.admin;
  await page.goto(`${BASE}/protected-domains`);
  await page.fill("#domain", "secret");
  await Promise.all([page.waitForNavigation(), page.click("form.narrow button")]);
  assert.match(await page.textContent("[role=status]"), /secret created/);
  await shoot(page, "protected-domains");
  // Added again: refused in words on the same page, the navigation and the typed name kept.
  await page.fill("#domain", "secret");
  const [again] = await Promise.all([page.waitForNavigation(), page.click("form.narrow button")]);
  assert.equal(again.status(), 409);
  assert.match(await page.textContent("[role=alert]"), /\[SECRET\] already exists/);
  assert.equal(await page.inputValue("#domain"), "secret");
  assert.equal(await page.locator("nav[aria-label=Main] a", { hasText: "Protected domains" }).count(), 1);
  await page.goto(`${BASE}/jobs`);
  assert.equal(await page.textContent("h1"), "Jobs");
  await shoot(page, "jobs");
});

test("a post without the CSRF token is refused", async () => {
  const page = shared.admin;
  await page.goto(`${BASE}/subjects`);
  const r = await postFrom(page, "/subjects/new", { kind: "client", name: "no-csrf-client" });
  assert.equal(r.status, 403);
  assert.match(r.text, /security token is missing/);
  const wrong = await postFrom(page, "/subjects/new", { kind: "client", name: "no-csrf-client", csrf: "0".repeat(64) });
  assert.equal(wrong.status, 403);
  await page.goto(`${BASE}/subjects`);
  assert.equal(await page.locator("text=no-csrf-client").count(), 0, "nothing was created");
});

test("a user's first sign-in replaces the temporary password; a READ-only user sees no admin controls and its forged posts get 403", async () => {
  const page = await newPage(browser);
  await signInUser(page, "reader.one", shared.readerPassword);
  assert.equal(new URL(page.url()).pathname, "/password", "first sign-in must replace the password");
  await page.goto(`${BASE}/`);
  assert.equal(new URL(page.url()).pathname, "/password", "no page before the password is replaced");
  await shoot(page, "password");
  await page.fill("#current_password", shared.readerPassword);
  await page.fill("#new_password", "a-new-long-password-1");
  await page.fill("#confirm_password", "a-new-long-password-1");
  await Promise.all([page.waitForNavigation(), page.click("text=Save password")]);
  assert.equal(new URL(page.url()).pathname, "/");
  assert.match(await page.textContent("[role=status]"), /password has been changed/);

  for (const link of ["Subjects", "Protected domains", "Upload", "New schema"]) {
    assert.equal(await page.locator("nav a", { hasText: link }).count(), 0, `no ${link} link`);
  }
  const denied = await page.goto(`${BASE}/subjects`);
  assert.equal(denied.status(), 403);
  assert.match(await page.textContent("[role=alert]"), /USER_ADMIN/);

  // The dataset page offers a reader no upload, schema edit or delete.
  await page.goto(`${BASE}/datasets/default/journey/readable`);
  assert.equal(await page.textContent("h1"), "default / journey / readable");
  for (const text of ["Upload data", "Edit the schema", "Delete"]) {
    assert.equal(await page.locator(`main >> text=${text}`).count(), 0, `no ${text}`);
  }
  assert.equal(await page.locator("main a", { hasText: "Query this dataset" }).count(), 1);

  // Forged posts with the user's own valid CSRF token: refused by the permission check.
  await page.goto(`${BASE}/jobs`);
  const csrf = await page.getAttribute("form.signout input[name=csrf]", "value");
  const forged = await postFrom(page, "/subjects/new", { csrf, kind: "client", name: "forged", permissions: "USER_ADMIN" });
  assert.equal(forged.status, 403);
  const perms = await postFrom(page, `/subjects/${shared.clientId}/permissions`, { csrf, permissions: "DATA_ADMIN" });
  assert.equal(perms.status, 403);
  const domain = await postFrom(page, "/protected-domains", { csrf, domain: "forged" });
  assert.equal(domain.status, 403);
  const drop = await postFrom(page, "/datasets/default/journey/readable/delete", { csrf, confirm: "yes" });
  assert.equal(drop.status, 403);
  const up = await page.evaluate(async (csrf) => {
    const body = new FormData();
    body.append("file", new Blob(["n\n1\n"]), "n.csv");
    const r = await fetch("/datasets/default/journey/readable/upload", { method: "POST", body, headers: { "X-CSRF-Token": csrf } });
    return r.status;
  }, csrf);
  assert.equal(up, 403, "a forged upload");

  await signOut(page);
  assert.match(page.url(), /\/signin$/);
  await page.goto(`${BASE}/jobs`);
  assert.match(page.url(), /\/signin$/, "signed out: the session is gone");

  // The new password works, the temporary one no longer does.
  await signInUser(page, "reader.one", shared.readerPassword);
  assert.equal(await page.textContent("[role=alert]"), "Invalid username or password");
  await signInUser(page, "reader.one", "a-new-long-password-1");
  assert.equal(new URL(page.url()).pathname, "/");
  assert.deepEqual(page.problems, []);
});

test("the created client signs in with its secret, and the admin signs out", async () => {
  const page = await newPage(browser);
  await signInClient(page, shared.clientId, shared.clientSecret);
  assert.equal(new URL(page.url()).pathname, "/");
  assert.equal(await page.textContent("form.signout .who"), "web-client");
  await signOut(page);
  const admin = shared.admin;
  await signOut(admin);
  assert.match(admin.url(), /\/signin$/);
  assert.deepEqual(admin.problems, []);
});
