// A long-lived genlayer-js process for geist's differential Calldata checks.
//
// Usage: node calldata-peer.mjs <dir holding node_modules/genlayer-js>
// Reads one JSON request per line on stdin, writes one JSON answer per line:
//   {"op":"hello"}                      -> {"ok":{"version":"1.2.0"}}
//   {"op":"encode","value":V}           -> {"ok":"<hex>"} | {"error":"..."}
//   {"op":"decode","hex":"..."}         -> {"ok":V}       | {"error":"..."}
//   {"op":"accepts","hex":"..."}        -> {"ok":null}    | {"error":"..."}  (no value: any depth)
//   {"op":"bench","inputs":["hex",...],"seconds":S}
//                                       -> {"ok":{"encode_mb_per_s":x,"decode_mb_per_s":y}} (per CPU-second)
// V is a tagged array: ["null"], ["bool",b], ["int","<decimal>"], ["bytes","<hex>"],
// ["str",s], ["address","<hex>"], ["array",[V...]], ["map",[[key,V]...]] (pairs in the
// order the SDK's Map holds them: wire order, a repeated key keeping its first place
// and its last value).
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { readFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { pathToFileURL } from "node:url";

const base = process.argv[2];
if (!base) {
  console.error("usage: node calldata-peer.mjs <dir holding node_modules/genlayer-js>");
  process.exit(2);
}
const require = createRequire(join(base, "package.json"));
const entry = require.resolve("genlayer-js");
const { abi } = await import(pathToFileURL(entry).href);
const { CalldataAddress } = await import(pathToFileURL(require.resolve("genlayer-js/types")).href);
const pkg = JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8"));
const { encode, decode } = abi.calldata;

const toHex = (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("hex");
const fromHex = (text) => {
  if (text.length % 2 !== 0 || /[^0-9a-fA-F]/.test(text)) throw new Error(`bad hex ${text}`);
  return new Uint8Array(Buffer.from(text, "hex"));
};

function toJs(v) {
  const [tag, inner] = v;
  switch (tag) {
    case "null": return null;
    case "bool": return inner;
    case "int": return BigInt(inner);
    case "bytes": return fromHex(inner);
    case "str": return inner;
    case "address": return new CalldataAddress(fromHex(inner));
    case "array": return inner.map(toJs);
    case "map": return new Map(inner.map(([k, x]) => [k, toJs(x)]));
    default: throw new Error(`unknown tag ${tag}`);
  }
}

function fromJs(x) {
  if (x === null || x === undefined) return ["null"];
  if (x === true || x === false) return ["bool", x];
  if (typeof x === "bigint" || typeof x === "number") return ["int", x.toString()];
  if (typeof x === "string") return ["str", x];
  if (x instanceof Uint8Array) return ["bytes", toHex(x)];
  if (x instanceof CalldataAddress) return ["address", toHex(x.bytes)];
  if (Array.isArray(x)) return ["array", x.map(fromJs)];
  if (x instanceof Map) return ["map", Array.from(x.entries(), ([k, v]) => [k, fromJs(v)])];
  throw new Error(`unexpected decoded value ${Object.prototype.toString.call(x)}`);
}

function bench(inputs, seconds) {
  const bytes = inputs.map(fromHex);
  const values = bytes.map((b) => decode(b));
  const total = bytes.reduce((n, b) => n + b.length, 0);
  // Rates per CPU-second (user + system), like geist's benchmark: the machine
  // may be shared, and wall time would count other processes' turns.
  const rate = (work) => {
    let rounds = 0;
    const start = process.hrtime.bigint();
    const cpuStart = process.cpuUsage();
    do {
      work();
      rounds++;
    } while (Number(process.hrtime.bigint() - start) / 1e9 < seconds);
    const cpu = process.cpuUsage(cpuStart);
    return (total * rounds) / ((cpu.user + cpu.system) / 1e6) / 1e6;
  };
  const decodeRate = rate(() => { for (const b of bytes) decode(b); });
  const encodeRate = rate(() => { for (const v of values) encode(v); });
  return { encode_mb_per_s: encodeRate, decode_mb_per_s: decodeRate };
}

function handle(request) {
  switch (request.op) {
    case "hello": return { version: pkg.version };
    case "encode": return toHex(encode(toJs(request.value)));
    case "decode": return fromJs(decode(fromHex(request.hex)));
    case "accepts": decode(fromHex(request.hex)); return null;
    case "bench": return bench(request.inputs, request.seconds);
    default: throw new Error(`unknown op ${request.op}`);
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (line.trim() === "") continue;
  let answer;
  try {
    answer = { ok: handle(JSON.parse(line)) };
  } catch (error) {
    answer = { error: String(error && error.message ? error.message : error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
