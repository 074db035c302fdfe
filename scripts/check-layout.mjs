#!/usr/bin/env node
// `node scripts/check-layout.mjs`: fails (exit 1) when the source tree breaks a layout rule:
//   - an import cycle between files, or between folders (folder A imports folder B and B imports A,
//     through any chain), type-only imports included: a cycle is a cycle for the reader as well;
//   - a source file over MAX_LINES lines;
//   - a router (a module that builds Hono routes) imported by anything but another router or the app
//     entry: domain code, schemas and Durable Objects never depend on HTTP handlers;
//   - a folder of workers/ that has an index.ts entered from outside other than through that index
//     (routers excepted: the router that mounts them imports them directly).
// Tests, scripts and benchmarks may import anything.
// Run by `npm test` before the suites. `--graph` prints the folder graph (who imports whom).
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SOURCE_ROOTS = ["workers", "durable-objects", "bridge/src", "test", "scripts", "bench"];
const EXTENSIONS = [".ts", ".tsx", ".mts", ".mjs", ".js"];
const MAX_LINES = 400;

/** Every source file under the roots, as paths relative to ROOT with forward slashes. */
function sourceFiles() {
  const files = [];
  const walk = (dir) => {
    for (const name of readdirSync(path.join(ROOT, dir))) {
      if (name === "node_modules" || name.startsWith(".")) continue;
      const relative = `${dir}/${name}`;
      if (statSync(path.join(ROOT, relative)).isDirectory()) walk(relative);
      else if (EXTENSIONS.some((extension) => name.endsWith(extension)) && !name.endsWith(".d.ts"))
        files.push(relative);
    }
  };
  for (const root of SOURCE_ROOTS) walk(root);
  return files.sort();
}

/** The file a relative specifier names, trying the extensions and index files the bundler would. */
function resolveSpecifier(fromFile, specifier, known) {
  if (!specifier.startsWith(".")) return undefined;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), specifier));
  const candidates = [
    base,
    ...EXTENSIONS.map((e) => base + e),
    ...EXTENSIONS.map((e) => `${base}/index${e}`),
  ];
  return candidates.find((candidate) => known.has(candidate));
}

function importsOf(file, known) {
  const text = readFileSync(path.join(ROOT, file), "utf8");
  const { importedFiles } = ts.preProcessFile(text, true, true);
  const targets = new Set();
  for (const { fileName } of importedFiles) {
    const target = resolveSpecifier(file, fileName, known);
    if (target && target !== file) targets.add(target);
  }
  return {
    targets,
    lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0),
    isRouter: ROUTER.test(text),
  };
}

/** A module that builds routes: `createRouter()` (http/openapi.ts) or a Hono app of its own. */
const ROUTER = /=\s*(createRouter\(\)|new (OpenAPI)?Hono\b)/;
const TOOLING = ["test/", "scripts/", "bench/"];
/** May import routers: the Worker's entry point, which serves the app. */
const ENTRY = "workers/index.ts";

function routerImportProblems(fileGraph, routers) {
  const problems = [];
  for (const [file, targets] of fileGraph) {
    if (routers.has(file) || file === ENTRY || TOOLING.some((prefix) => file.startsWith(prefix))) continue;
    for (const target of targets)
      if (routers.has(target)) problems.push(`${file} imports the router ${target} (only routers may)`);
  }
  return problems;
}

/** The innermost folder with an index.ts that holds `file`, if any (workers/ only). */
function boundaryOf(file, indexFolders) {
  let folder = path.posix.dirname(file);
  while (folder.startsWith("workers/")) {
    if (indexFolders.has(folder)) return folder;
    folder = path.posix.dirname(folder);
  }
  return undefined;
}

function boundaryProblems(fileGraph, routers) {
  const indexFolders = new Set(
    [...fileGraph.keys()]
      .filter((f) => f.startsWith("workers/") && /\/index\.tsx?$/.test(f))
      .map(path.posix.dirname),
  );
  const problems = [];
  for (const [file, targets] of fileGraph) {
    if (TOOLING.some((prefix) => file.startsWith(prefix))) continue;
    for (const target of targets) {
      const boundary = boundaryOf(target, indexFolders);
      if (!boundary || file.startsWith(`${boundary}/`) || routers.has(target)) continue;
      if (path.posix.dirname(target) === boundary && /\/index\.tsx?$/.test(target)) continue;
      problems.push(`${file} reaches into ${boundary}/ past its index.ts (${target})`);
    }
  }
  return problems;
}

/** Tarjan's strongly connected components; returns those with more than one member. */
function cycles(graph) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (node) => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), index.get(next)));
    }
    if (low.get(node) === index.get(node)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** One example path around a component, so the message says which imports to look at. */
function exampleCycle(graph, component) {
  const members = new Set(component);
  const start = component[0];
  const previous = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const next of graph.get(node) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const cycle = [start];
        for (let at = node; at !== start; at = previous.get(at)) cycle.splice(1, 0, at);
        return [...cycle, start];
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return component;
}

function folderGraph(fileGraph) {
  const graph = new Map();
  for (const [file, targets] of fileGraph) {
    const from = path.posix.dirname(file);
    if (!graph.has(from)) graph.set(from, new Set());
    for (const target of targets) {
      const to = path.posix.dirname(target);
      if (to !== from) graph.get(from).add(to);
    }
  }
  return graph;
}

function main() {
  const files = sourceFiles();
  const known = new Set(files);
  const fileGraph = new Map();
  const routers = new Set();
  const problems = [];
  for (const file of files) {
    const { targets, lines, isRouter } = importsOf(file, known);
    fileGraph.set(file, targets);
    if (isRouter) routers.add(file);
    if (lines > MAX_LINES) problems.push(`${file}: ${lines} lines (at most ${MAX_LINES})`);
  }
  problems.push(...routerImportProblems(fileGraph, routers), ...boundaryProblems(fileGraph, routers));
  const folders = folderGraph(fileGraph);
  for (const component of cycles(fileGraph))
    problems.push(`import cycle between files: ${exampleCycle(fileGraph, component).join(" → ")}`);
  for (const component of cycles(folders))
    problems.push(
      `import cycle between folders: ${exampleCycle(folders, component).join(" → ")} (${component.length} folders involved)`,
    );
  if (process.argv.includes("--graph")) {
    for (const [folder, targets] of [...folders].sort())
      console.log(`${folder} → ${[...targets].sort().join(", ")}`);
  }
  if (problems.length > 0) {
    for (const problem of problems) console.error(problem);
    console.error(`layout: ${problems.length} problem(s) in ${files.length} files`);
    process.exitCode = 1;
    return;
  }
  console.log(
    `layout: ${files.length} files; no import cycle between files or folders; none over ${MAX_LINES} lines; ` +
      `${routers.size} routers imported only by routers; folders with an index.ts entered only through it`,
  );
}

main();
