// Shared by the browser tests: Chromium launch, sign-in helpers, screenshots.
import { chromium } from "playwright-core";
import { mkdirSync } from "node:fs";
import path from "node:path";

export const BASE = process.env.RAPID_URL;
export const ADMIN_ID = process.env.RAPID_ADMIN_ID;
export const ADMIN_SECRET = process.env.RAPID_ADMIN_SECRET;
const SHOTS = process.env.RAPID_SCREENSHOTS || "";
if (!BASE || !ADMIN_ID || !ADMIN_SECRET) {
  throw new Error("run through scripts/test-browser.sh (RAPID_URL, RAPID_ADMIN_ID, RAPID_ADMIN_SECRET)");
}

export async function launch() {
  // Playwright starts Chromium with a fresh temporary --user-data-dir of its own and removes it
  // on close (it refuses the flag in `args`).
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
}

/// A fresh context (its own cookies) and page; records CSP violations and page errors.
export async function newPage(browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.problems = [];
  page.on("pageerror", (e) => page.problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    // Expected 4xx answers log "Failed to load resource"; CSP violations and script errors count.
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) page.problems.push(`console: ${m.text()}`);
  });
  return page;
}

export async function signInClient(page, id, secret) {
  await page.goto(`${BASE}/signin`);
  await page.fill("#client_id", id);
  await page.fill("#client_secret", secret);
  await Promise.all([page.waitForNavigation(), page.click("section[aria-labelledby=as-client] button")]);
}

export async function signInUser(page, name, password) {
  await page.goto(`${BASE}/signin`);
  await page.fill("#username", name);
  await page.fill("#password", password);
  await Promise.all([page.waitForNavigation(), page.click("section[aria-labelledby=as-user] button")]);
}

export async function signOut(page) {
  await Promise.all([page.waitForNavigation(), page.click("form.signout button")]);
}

/// The page at desktop and phone width into docs/web/{name}-{desktop,phone}.png (SCREENSHOTS=1).
export async function shoot(page, name) {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  // The whole page, cut at a few screens' height (a long table's end shows nothing new).
  const shot = async (width, height, file) => {
    await page.setViewportSize({ width, height });
    const full = await page.evaluate(() => document.documentElement.scrollHeight);
    const clip = { x: 0, y: 0, width, height: Math.min(full, 3 * height) };
    await page.screenshot({ path: path.join(SHOTS, file), fullPage: true, clip });
  };
  await shot(1280, 800, `${name}-desktop.png`);
  await shot(390, 844, `${name}-phone.png`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

/// A form post from inside the page (same origin, the session cookie sent), as a forger would.
export async function postFrom(page, url, fields) {
  return page.evaluate(async ([url, fields]) => {
    const r = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString(),
      redirect: "manual",
    });
    return { status: r.status, text: await r.text() };
  }, [url, fields]);
}

/// An admin token from the API, for setting up data the pages then show.
export async function adminToken() {
  const r = await fetch(`${BASE}/api/oauth2/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: ADMIN_ID, client_secret: ADMIN_SECRET }),
  });
  if (r.status !== 200) throw new Error(`token: ${r.status}`);
  return (await r.json()).access_token;
}

export async function api(token, method, path, body) {
  const r = await fetch(`${BASE}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json().catch(() => null) };
}
