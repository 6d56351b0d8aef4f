// The receiver a Node user would write with the ecosystem's own pieces: @octokit/webhooks to
// verify the signature, better-sqlite3 in WAL with synchronous=FULL, and the delivery and its
// job inserted in one transaction before the 202 — what `forgeward serve` does, for
// `cargo bench --bench serve` to compare against. Settings from the environment: PORT (0: any),
// DB (the SQLite file), SECRET (the webhook secret). Prints "listening on http://…" on stderr.
import http from "node:http";
import { Webhooks } from "@octokit/webhooks";
import Database from "better-sqlite3";

const MAX_BODY = 25 * 1024 * 1024;
const db = new Database(process.env.DB);
db.pragma("journal_mode = WAL");
db.pragma("synchronous = FULL");
db.exec(`
  CREATE TABLE IF NOT EXISTS deliveries (
    id TEXT PRIMARY KEY, event TEXT NOT NULL, body BLOB NOT NULL, received_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, delivery_id TEXT NOT NULL UNIQUE,
    event TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'queued');
`);
const addDelivery = db.prepare(
  "INSERT OR IGNORE INTO deliveries (id, event, body, received_at) VALUES (?, ?, ?, ?)",
);
const addJob = db.prepare("INSERT INTO jobs (delivery_id, event) VALUES (?, ?)");
const record = db.transaction((id, event, body) => {
  if (addDelivery.run(id, event, body, Date.now()).changes === 0) return null;
  return Number(addJob.run(id, event).lastInsertRowid);
});
const webhooks = new Webhooks({ secret: process.env.SECRET });

function answer(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

const server = http.createServer((req, res) => {
  if (req.method !== "POST" || req.url !== "/webhooks/github") {
    answer(res, 404, { error: "not found" });
    return;
  }
  const chunks = [];
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY) {
      answer(res, 413, { error: "too large" });
      req.destroy();
    } else {
      chunks.push(chunk);
    }
  });
  req.on("end", async () => {
    const body = Buffer.concat(chunks).toString("utf8");
    const signature = req.headers["x-hub-signature-256"];
    if (!signature || !(await webhooks.verify(body, signature))) {
      answer(res, 401, { error: "bad signature" });
      return;
    }
    try {
      JSON.parse(body);
    } catch {
      answer(res, 400, { error: "malformed payload" });
      return;
    }
    const job = record(req.headers["x-github-delivery"], req.headers["x-github-event"], body);
    if (job === null) answer(res, 200, { duplicate: true });
    else answer(res, 202, { job });
  });
});
server.listen(Number(process.env.PORT || 0), "127.0.0.1", () => {
  console.error(`listening on http://127.0.0.1:${server.address().port}`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
