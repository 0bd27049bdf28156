import { encodeCanonical, runCatalogue, eventId, chainHash, GENESIS_HASH } from "../../events/mod.ts";
import { seeded, turnEvent } from "./sample-events.ts";
import { DatabaseSync } from "node:sqlite";
const rand = seeded(1);
const evs = Array.from({ length: 1000 }, (_, i) => turnEvent({ step: 0, prompt: i, sample: 0, turn: 0 }, rand));
const parsed = evs.map((e) => runCatalogue.validate(e.type, e.data) as any);
const enc = parsed.map((d) => encodeCanonical(d));
const db = new DatabaseSync(Deno.makeTempDirSync() + "/x.sqlite");
db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL");
db.exec("CREATE TABLE events (position integer PRIMARY KEY, id text NOT NULL UNIQUE, stream text NOT NULL, version integer NOT NULL, type text NOT NULL, schema_version integer NOT NULL, data text NOT NULL, tensors blob NOT NULL, hash text NOT NULL, recorded_at integer NOT NULL, UNIQUE (stream, version))");
const ins = db.prepare("INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?)");
let pos = 0;
const stages: Record<string, () => void> = {
  validate: () => evs.forEach((e) => runCatalogue.validate(e.type, e.data)),
  encode: () => parsed.forEach((d) => encodeCanonical(d)),
  id: () => parsed.forEach((d) => eventId("bench", "turn.generated", { step: d.step, phase: d.phase, agent: d.agent, prompt: d.prompt, sample: d.sample, turn: d.turn })),
  hash: () => enc.forEach((e, i) => chainHash(GENESIS_HASH, { id: "0123456789abcdef0123456789abcdef", stream: "bench", version: i, type: "turn.generated", schemaVersion: 1, data: e.json, tensors: e.tensors })),
  insert: () => { for (let b = 0; b < 10; b++) { db.exec("BEGIN IMMEDIATE"); for (let j = 0; j < 100; j++) { const e = enc[b * 100 + j]; pos++; ins.run(pos, "id" + pos, "s", pos, "turn.generated", 1, e.json, e.tensors, "ab".repeat(32), 0); } db.exec("COMMIT"); } },
};
const best: Record<string, number> = {};
for (let r = 0; r < 9; r++) for (const [k, f] of Object.entries(stages)) { const s = performance.now(); f(); const us = (performance.now() - s) / evs.length * 1000; best[k] = Math.min(best[k] ?? Infinity, us); }
console.log(Object.entries(best).map(([k, v]) => `${k} ${v.toFixed(1)}`).join("  "), "us/event (min of 9)");
