#!/usr/bin/env node
// Part of `npm test`: the dashboard's browser tests drive Debian's Chromium (`/usr/bin/chromium`)
// through playwright-core, which never downloads a browser. Installs the package when it is missing;
// set CHROMIUM_PATH to use another Chromium binary instead.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const target = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

function run(command, args) {
  console.log(`$ ${command} ${args.join(" ")}`);
  const result = spawnSync(command, args, {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  return result.status === 0;
}

if (existsSync(target)) {
  console.log(`chromium: ${target} is installed`);
  process.exit(0);
}
if (process.env.CHROMIUM_PATH) {
  console.error(`chromium: CHROMIUM_PATH=${target} does not exist`);
  process.exit(1);
}
const asRoot = typeof process.getuid === "function" && process.getuid() === 0;
const prefix = asRoot ? [] : ["sudo", "-n"];
const aptGet = (...args) =>
  asRoot ? run("apt-get", args) : run(prefix[0], [...prefix.slice(1), "apt-get", ...args]);
console.log("chromium: not found; installing Debian's chromium package");
// The package lists may be stale on a fresh machine: update once and retry before giving up.
const installed =
  aptGet("install", "-y", "chromium") || (aptGet("update") && aptGet("install", "-y", "chromium"));
if (!installed || !existsSync(target)) {
  console.error("chromium: could not install it (apt-get needs root or passwordless sudo); see README");
  process.exit(1);
}
console.log(`chromium: installed ${target}`);
