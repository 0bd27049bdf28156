import { runCatalogue, encodeCanonical, eventId, chainHash, GENESIS_HASH } from "../../events/mod.ts";
import { seeded, turnEvent } from "./sample-events.ts";
import { DatabaseSync } from "node:sqlite";
const rand = seeded(1);
const evs = Array.from({ length: 2000 }, (_, i) => turnEvent({ step: 0, prompt: i, sample: 0, turn: 0 }, rand));
const db = new DatabaseSync(":memory:");
db.exec("create table t(id text primary key, data text, tensors blob)");
const sel = db.prepare("select * from t where id = ?");
const res: Record<string, number[]> = {};
const t = (name: string, f: () => void) => { const s = performance.now(); f(); (res[name] ??= []).push((performance.now() - s) / evs.length * 1000); };
for (let round = 0; round < 4; round++) {
  let parsed: any[] = [];
  t("validate", () => { parsed = evs.map((e) => runCatalogue.validate(e.type, e.data)); });
  let enc: any[] = [];
  t("encode", () => { enc = parsed.map((d) => encodeCanonical(d)); });
  t("id", () => { parsed.forEach((d) => eventId("bench", "turn.generated", runCatalogue.definition("turn.generated").coordinates(d as never))); });
  t("hash", () => { enc.forEach((e, i) => chainHash(GENESIS_HASH, { id: "x", stream: "bench", version: i, type: "turn.generated", schemaVersion: 1, data: e.json, tensors: e.tensors })); });
  t("select", () => { parsed.forEach((d, i) => sel.get("abc" + i)); });
  t("json.parse", () => { enc.forEach((e) => JSON.parse(e.json)); });
}
for (const [k, v] of Object.entries(res)) console.log(k.padEnd(12), v.map((x) => x.toFixed(1)).join(" "), "us/event");
