// .dev.vars: the local development secrets `npm start` creates from .dev.vars.example and reads.
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

function log(message) {
  console.log(`[start] ${message}`);
}

export function ensureDevVars() {
  const devVars = path.join(ROOT, ".dev.vars");
  const example = path.join(ROOT, ".dev.vars.example");
  if (!existsSync(devVars)) {
    copyFileSync(example, devVars);
    log("created .dev.vars from .dev.vars.example (local development values)");
    return;
  }
  addMissingDevVars(devVars, example);
}

/** A .dev.vars made before a new variable existed gets that variable's example value appended. */
function addMissingDevVars(devVars, example) {
  const present = new Set(Object.keys(parseDevVars(readFileSync(devVars, "utf8"))));
  const missing = Object.entries(parseDevVars(readFileSync(example, "utf8"))).filter(
    ([name]) => !present.has(name),
  );
  if (missing.length === 0) return;
  const lines = missing.map(([name, value]) => `${name}=${value}`).join("\n");
  const current = readFileSync(devVars, "utf8");
  writeFileSync(devVars, `${current}${current.endsWith("\n") ? "" : "\n"}${lines}\n`);
  log(`added ${missing.map(([name]) => name).join(", ")} to .dev.vars from .dev.vars.example`);
}

/** @returns {Record<string, string>} */
export function readDevVars() {
  return parseDevVars(readFileSync(path.join(ROOT, ".dev.vars"), "utf8"));
}

/** @returns {Record<string, string>} */
function parseDevVars(text) {
  const vars = {};
  for (const line of text.split("\n")) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (match) vars[match[1]] = match[2].replace(/^(["'])(.*)\1$/, "$2");
  }
  return vars;
}
