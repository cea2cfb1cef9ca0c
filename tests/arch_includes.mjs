// docs/ARCHITECTURE.md's folder table says, per folder, which other folders its sources include
// from. This recomputes that from every quoted #include in the tree and fails, naming the folder
// and the difference, where the two disagree. Usage: node tests/arch_includes.mjs [REPO_ROOT]
import fs from "node:fs";
import path from "node:path";

const root = path.resolve(process.argv[2] ?? path.join(path.dirname(new URL(import.meta.url).pathname), ".."));
const doc = fs.readFileSync(path.join(root, "docs/ARCHITECTURE.md"), "utf8");
const lines = doc.split("\n");
const head = lines.findIndex((l) => /^\| folder \| holds \| .* \| includes from \|$/.test(l));
if (head < 0) {
  console.error("docs/ARCHITECTURE.md: no folder table with an 'includes from' column");
  process.exit(1);
}
const rows = [];
for (let i = head + 2; i < lines.length && lines[i].startsWith("|"); i++) {
  const cells = lines[i].split(" | ");
  const folder = /^\| `([^`]+)\/`/.exec(cells[0])?.[1];
  if (folder) rows.push({ folder, cell: cells[cells.length - 1].replace(/ \|$/, "") });
}
const folders = new Set(rows.map((r) => r.folder).filter((f) => !f.includes("/")));

// The folders a folder's C++ and CUDA sources include from (quoted includes, first path part).
function includes(folder) {
  const out = new Set();
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(cpp|hpp|cu|cuh|h)$/.test(e.name))
        for (const m of fs.readFileSync(p, "utf8").matchAll(/^\s*#include\s+"([^"/]+)\//gm))
          if (folders.has(m[1]) && m[1] !== folder) out.add(m[1]);
    }
  };
  walk(path.join(root, folder));
  return out;
}

let bad = 0;
for (const { folder, cell } of rows) {
  // The listed part: up to the first ';' or '('. Words that are not folders ("nothing", "anything",
  // "the HTTP API only") list none; "anything" and rows with no sources are not checked.
  if (/^(anything|—|none)/.test(cell) || !fs.existsSync(path.join(root, folder))) continue;
  const listed = new Set(cell.split(/[;(]/)[0].split(/[ ,]+/).filter((w) => folders.has(w)));
  const actual = includes(folder);
  const missing = [...actual].filter((f) => !listed.has(f)).sort();
  const extra = [...listed].filter((f) => !actual.has(f)).sort();
  if (missing.length || extra.length) {
    bad++;
    console.error(`${folder}/: includes from ${[...actual].sort().join(", ") || "nothing"}; the table says ` +
                  `"${cell}"` + (missing.length ? `; not listed: ${missing.join(", ")}` : "") +
                  (extra.length ? `; listed but not included: ${extra.join(", ")}` : ""));
  }
}
if (bad) process.exit(1);
console.log(`docs/ARCHITECTURE.md: the includes of ${rows.length} folders agree with the code`);
