// HTTP side of the container check (.ci/containers/run.sh): requests through the reverse proxy
// and to single replicas, with Node's fetch. Each command prints one JSON line and exits 1 when
// a request does not get the answer it must.
//   node flow.mjs session <proxy>                      sign up, JWT, /api/me, tasks, JWKS
//   node flow.mjs me <jwt> <base>...                   GET /api/me on each base URL
//   node flow.mjs repeat <proxy> <jwt> <n>             n x GET /api/me through the proxy
//   node flow.mjs identity <proxy> <cookie> <n>        n x (get-session, its JWT at /api/me)
//   node flow.mjs traffic <proxy> <jwt> <dir>          GET /api/me from 4 workers until <dir>/stop
// `traffic` writes <dir>/ready after 20 answers. run.sh then kills a replica, writes the time
// `podman kill` returned to <dir>/killed and the time by which the proxy has dropped the replica
// to <dir>/noticed (ms since the epoch). A request that starts before then may fail: its tries
// can all land on the dead replica (docker/Caddyfile). One that starts after must not, and
// there must be enough of those to tell.
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const [command, ...args] = process.argv.slice(2);
const TIMEOUT_MS = 10_000;

function fail(message, detail) {
  console.log(JSON.stringify({ ok: false, command, message, ...detail }));
  process.exit(1);
}

async function call(url, init = {}) {
  const started = Date.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: "manual" });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, started, ended: Date.now() };
  } catch (error) {
    return { status: 0, headers: new Headers(), text: String(error.cause?.code ?? error.message), started, ended: Date.now() };
  }
}

function expectStatus(what, res, status = 200) {
  if (res.status !== status) fail(`${what}: expected ${status}, got ${res.status}`, { body: res.text.slice(0, 300) });
}

const bearer = (jwt) => ({ authorization: `Bearer ${jwt}` });

async function session(proxy) {
  const email = `containers-${randomUUID()}@example.com`;
  const signUp = await call(`${proxy}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: `pw-${randomUUID()}`, name: "Containers" }),
  });
  expectStatus("sign-up", signUp);
  const cookie = signUp.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  if (!cookie) fail("sign-up set no cookie");
  const jwt = await jwtFor(proxy, cookie);
  const me = await call(`${proxy}/api/me`, { headers: bearer(jwt) });
  expectStatus("GET /api/me", me);
  const created = await call(`${proxy}/api/tasks`, {
    method: "POST",
    headers: { ...bearer(jwt), "content-type": "application/json" },
    body: JSON.stringify({ title: "through the proxy" }),
  });
  if (created.status !== 200 && created.status !== 201) expectStatus("POST /api/tasks", created, 201);
  const list = await call(`${proxy}/api/tasks`, { headers: bearer(jwt) });
  expectStatus("GET /api/tasks", list);
  if (!list.text.includes("through the proxy")) fail("GET /api/tasks does not list the new task", { body: list.text.slice(0, 300) });
  const jwks = await call(`${proxy}/api/auth/jwks`);
  expectStatus("GET /api/auth/jwks", jwks);
  if (!(JSON.parse(jwks.text).keys?.length > 0)) fail("the JWKS has no key");
  return { ok: true, checks: 6, jwt, cookie };
}

async function jwtFor(proxy, cookie) {
  const res = await call(`${proxy}/api/auth/get-session`, { method: "POST", headers: { cookie } });
  expectStatus("get-session", res);
  const jwt = res.headers.get("set-auth-jwt");
  if (!jwt) fail("get-session sent no set-auth-jwt header");
  return jwt;
}

async function traffic(proxy, jwt, dir) {
  const results = [];
  let stop = false;
  const worker = async () => {
    while (!stop) {
      const res = await call(`${proxy}/api/me`, { headers: bearer(jwt) });
      results.push({ status: res.status, started: res.started, ended: res.ended, text: res.status === 200 ? "" : res.text.slice(0, 120) });
      if (results.length === 20) fs.writeFileSync(path.join(dir, "ready"), "");
    }
  };
  const poll = setInterval(() => {
    if (fs.existsSync(path.join(dir, "stop"))) stop = true;
  }, 50);
  const deadline = setTimeout(() => {
    stop = true;
  }, 120_000);
  await Promise.all([worker(), worker(), worker(), worker()]);
  clearInterval(poll);
  clearTimeout(deadline);
  const [killedAt, noticedAt] = ["killed", "noticed"].map((f) => Number(fs.readFileSync(path.join(dir, f), "utf8")));
  if (!killedAt || !noticedAt) fail("no kill or notice time");
  const failed = results.filter((r) => r.status !== 200);
  const late = failed.filter((r) => r.started >= noticedAt);
  const summary = {
    requests: results.length,
    afterKill: results.filter((r) => r.started >= killedAt).length,
    afterNotice: results.filter((r) => r.started >= noticedAt).length,
    failed: failed.length,
    failedAfterNotice: late.length,
    noticeMs: noticedAt - killedAt,
    // When each failed request started, in ms after the kill.
    failures: failed.slice(0, 10).map((r) => `${r.status}${r.text ? ` ${r.text}` : ""} at ${r.started - killedAt} ms`),
  };
  if (late.length) fail("requests failed after the proxy dropped the killed replica", summary);
  if (summary.afterNotice < 100) fail("too few requests after the proxy's notice to tell", summary);
  return { ok: true, ...summary };
}

switch (command) {
  case "session": {
    console.log(JSON.stringify(await session(args[0])));
    break;
  }
  case "me": {
    const [jwt, ...bases] = args;
    for (const base of bases) expectStatus(`GET ${base}/api/me`, await call(`${base}/api/me`, { headers: bearer(jwt) }));
    console.log(JSON.stringify({ ok: true, replicas: bases.length }));
    break;
  }
  case "repeat": {
    const [proxy, jwt, n] = args;
    for (let i = 0; i < Number(n); i++) expectStatus("GET /api/me", await call(`${proxy}/api/me`, { headers: bearer(jwt) }));
    console.log(JSON.stringify({ ok: true, requests: Number(n) }));
    break;
  }
  case "identity": {
    const [proxy, cookie, n] = args;
    for (let i = 0; i < Number(n); i++) {
      const jwt = await jwtFor(proxy, cookie);
      expectStatus("GET /api/me with a new JWT", await call(`${proxy}/api/me`, { headers: bearer(jwt) }));
    }
    console.log(JSON.stringify({ ok: true, sessions: Number(n) }));
    break;
  }
  case "traffic": {
    console.log(JSON.stringify(await traffic(args[0], args[1], args[2])));
    break;
  }
  default:
    fail(`unknown command ${command}`);
}
