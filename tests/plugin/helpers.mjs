// Shared set-up for the plugin tests: a project folder with the plugin installed the way
// `deepmem init` installs it, the real engine behind it, and reference outputs from the CLI.

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const PLUGIN_SOURCE = join(REPO, "deepmem", "plugin", "deepmem.js");
export const SESSION_FIXTURE = join(REPO, "fixtures", "sessions", "django-15499.json");
const PLUGIN_PACKAGES = join(REPO, ".cache", "opencode", "node_modules");

export const PYTHON =
  process.env.DEEPMEM_PYTHON ?? (existsSync(join(REPO, ".venv", "bin", "python")) ? join(REPO, ".venv", "bin", "python") : "python3");

export const HAS_PLUGIN_PACKAGE = existsSync(join(PLUGIN_PACKAGES, "@opencode-ai", "plugin"));

// Small batches so that the fixture session has plenty of old content.
export const ENGINE_ENV = { DEEPMEM_TAIL_STEPS: "2", DEEPMEM_BATCH_STEPS: "3" };

export function loadMessages() {
  const data = JSON.parse(readFileSync(SESSION_FIXTURE, "utf8"));
  return data.messages ?? data;
}

// A fresh project with the plugin at .opencode/plugin/deepmem.js (and @opencode-ai/plugin
// linked in when the npm packages are installed), ready to import.
export function makeProject({ python = PYTHON, linkPackages = true } = {}) {
  const project = mkdtempSync(join(tmpdir(), "deepmem-plugin-"));
  const pluginDir = join(project, ".opencode", "plugin");
  mkdirSync(pluginDir, { recursive: true });
  const file = join(pluginDir, "deepmem.js");
  copyFileSync(PLUGIN_SOURCE, file);
  writeFileSync(join(pluginDir, "deepmem.json"), JSON.stringify({ python }));
  if (linkPackages && HAS_PLUGIN_PACKAGE) symlinkSync(PLUGIN_PACKAGES, join(project, ".opencode", "node_modules"));
  return { project, file };
}

// A clock that moves only when told: deadlines and backoff fire at `advance`, never on their
// own, so a test waits for the engine's real answer, or moves time past a deadline, exactly.
// Like real timers, pending ones keep the process alive (the engine's pipes do not: the
// plugin unrefs them).
export function fakeClock() {
  let now = 0;
  const timers = new Set();
  const alive = setInterval(() => {}, 1 << 30);
  alive.unref();
  const forget = (timer) => {
    timers.delete(timer);
    if (!timers.size) alive.unref();
  };
  const clock = {
    now: () => now,
    setTimeout(callback, ms) {
      const timer = { at: now + ms, callback };
      timers.add(timer);
      alive.ref();
      return timer;
    },
    clearTimeout: forget,
    // Let work already under way reach a timer due within `ms` (turns of the event loop, a
    // bounded number), then move time and fire what is due.
    async advance(ms) {
      const due = () => [...timers].some((timer) => timer.at <= now + ms);
      for (let turn = 0; turn < SETTLE_TURNS && !due(); turn++) await settle();
      now += ms;
      for (const timer of [...timers].sort((a, b) => a.at - b.at)) {
        if (timer.at > now) break;
        forget(timer);
        timer.callback();
      }
      await settle();
    },
  };
  return clock;
}

// One turn of the event loop: promises waiting on no timer run on, I/O callbacks come in.
const settle = () => new Promise((done) => setImmediate(done));
const SETTLE_TURNS = 20000;

// Start the plugin in a fresh project, on a fake clock. `env` applies while the plugin starts
// (its engine keeps those settings), then the previous environment comes back.
export async function startPlugin(env = {}, options = {}) {
  const { project, file } = makeProject(options);
  const settings = { ...ENGINE_ENV, DEEPMEM_PYTHON: options.python ?? PYTHON, ...env };
  const saved = Object.fromEntries(Object.keys(settings).map((name) => [name, process.env[name]]));
  Object.assign(process.env, settings);
  try {
    const module = await import(pathToFileURL(file).href);
    const toasts = [];
    const client = { tui: { showToast: async ({ body }) => toasts.push(body.message) } };
    const clock = options.clock ?? fakeClock();
    const hooks = await module.DeepmemPlugin({ directory: project, client }, { clock });
    return { project, module, hooks, toasts, clock };
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

// What `deepmem compress` makes of the same messages (the CLI and the bridge agree).
export function cliCompressed(messages, project) {
  const input = join(project, "input.json");
  writeFileSync(input, JSON.stringify(messages));
  const output = execFileSync(PYTHON, ["-m", "deepmem", "compress", input, "--root", project], {
    env: { ...process.env, ...ENGINE_ENV },
    maxBuffer: 1 << 28,
  });
  return JSON.parse(output.toString("utf8"));
}

// A rule stored through the CLI: what the memory block of a new session shows.
export function cliRemember(project, text) {
  execFileSync(PYTHON, ["-m", "deepmem", "memory", "add", "--type", "constraint", text, "--root", project], { env: { ...process.env, ...ENGINE_ENV } });
}

export async function transform(hooks, messages) {
  const copy = structuredClone(messages);
  await hooks["experimental.chat.messages.transform"]({}, { messages: copy });
  return copy;
}

// The pid of the engine serving a project (the plugin does not expose it).
export function enginePid(project) {
  const found = spawnSync("pgrep", ["-f", `deepmem bridge --root ${project}$`], { encoding: "utf8" });
  const pids = found.stdout.split("\n").filter(Boolean).map(Number);
  return pids.length ? pids[0] : null;
}

// The hello reply of a real engine, asked directly on its stdio (what the plugin builds on).
export async function engineHello(project) {
  const child = spawn(PYTHON, ["-m", "deepmem", "bridge", "--root", project], { stdio: ["pipe", "pipe", "ignore"] });
  child.stdin.end(JSON.stringify({ id: 1, op: "hello", version: pluginVersion(), protocol: pluginProtocol() }) + "\n");
  let output = "";
  for await (const chunk of child.stdout) output += chunk;
  return JSON.parse(output.split("\n")[0]);
}

const pluginConstant = (name) => readFileSync(PLUGIN_SOURCE, "utf8").match(new RegExp(`const ${name} = "?([^";]+)"?;`))[1];
const pluginVersion = () => pluginConstant("VERSION");
const pluginProtocol = () => Number(pluginConstant("PROTOCOL"));
