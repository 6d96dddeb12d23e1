// pbj on CPython 3.14 in WebAssembly (Pyodide, from this folder's node_modules) under Node.js.
//
//   node tests/pyodide/run.mjs WHEELS_DIR [pytest arguments...]
//
// Installs every wheel of WHEELS_DIR (pbj's pure wheel and the pure wheels it and the tests need: see
// README.md here) into Pyodide's site-packages, mounts the repository but its pbj/ at /repo and ../shared (or
// $PBJ_SHARED) at /shared, then runs tests/pyodide/in_pyodide.py there with the remaining arguments: the installed pbj's
// checks (tests/installed_check.py) and pytest on the suite files of tests/pyodide/suite.txt. Its exit status
// is the Python side's. Nothing is fetched from the network: Pyodide loads from node_modules/pyodide.
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadPyodide } from "pyodide";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..", "..");
const shared = resolve(process.env.PBJ_SHARED ?? join(repo, "..", "shared"));
const [wheelsDir, ...pytestArgs] = process.argv.slice(2);
if (!wheelsDir) {
  console.error("usage: node tests/pyodide/run.mjs WHEELS_DIR [pytest arguments...]");
  process.exit(2);
}

if (!existsSync(join(shared, "protos"))) {
  console.error(`run.mjs: the shared test material is not in ${shared} (set PBJ_SHARED)`);
  process.exit(2);
}

const started = performance.now();
const pyodide = await loadPyodide({ indexURL: join(here, "node_modules", "pyodide") });
console.log(`pyodide ${pyodide.version} loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`);

// /repo: the repository without pbj/ (the tests import pbj from the installed wheel) and without what
// a checkout or a build leaves beside it; /shared: the shared test material
const { FS } = pyodide;
const skip = new Set(["pbj", ".git", ".venv", "build", "dist", "node_modules"]);
const mounts = [[shared, "/shared"]];
for (const entry of readdirSync(repo, { withFileTypes: true })) {
  if (skip.has(entry.name) || entry.name.endsWith(".egg-info")) continue;
  if (entry.isDirectory()) mounts.push([join(repo, entry.name), `/repo/${entry.name}`]);
  else if (entry.isFile()) FS.mkdirTree("/repo"), FS.writeFile(`/repo/${entry.name}`, readFileSync(join(repo, entry.name)));
}
for (const [root, at] of mounts) {
  FS.mkdirTree(at);
  FS.mount(FS.filesystems.NODEFS, { root }, at);
}
const wheels = readdirSync(wheelsDir).filter((name) => name.endsWith(".whl")).sort();
FS.mkdirTree("/wheels");
for (const name of wheels) {
  FS.writeFile(`/wheels/${name}`, readFileSync(join(wheelsDir, name)));
}
pyodide.globals.set("pytest_args", pytestArgs);
const status = await pyodide.runPythonAsync(readFileSync(join(here, "in_pyodide.py"), "utf8"));
process.exit(Number(status));
