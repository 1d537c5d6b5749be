// deepmem for OpenCode: a thin shim that forwards hooks to the deepmem engine, a Python
// process speaking newline-delimited JSON on stdio. Runs under Bun (the CLI) and Node (the
// desktop app). It fails open: a late, failed or missing answer leaves OpenCode's data as
// it was, so a session never breaks because of deepmem.
//
// Only plugin functions may be exported from this file (OpenCode skips a plugin file that
// exports anything else).
//
// This file holds transport only. What deepmem offers inside OpenCode (its tools with their
// descriptions and argument schemas, the slash commands it answers) comes from the engine's
// `hello` reply. OpenCode reads a plugin's tools once, from the hooks its init returns, so
// init waits for the handshake, at most `start_deadline_ms` (10 s; an engine that cannot
// start fails at once). Without a handshake by then (no Python, no deepmem, a version
// mismatch, an engine too slow to start) the plugin registers nothing for this OpenCode
// process: compressing without `deep_expand` would leave markers the model cannot follow,
// and an empty plugin cannot break a session.

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const VERSION = "0.1.0";
const PROTOCOL = 2;
const FORWARDED_EVENTS = new Set(["session.created", "session.idle", "session.compacted", "session.deleted"]);
const ENGINES = Symbol.for("deepmem.engines");
const DIGEST_CACHE_LIMIT = 200000;
const FIRST_SYSTEM_DEADLINE_MS = 3000;
const SYSTEM_SEPARATOR = "\n\n";

// ---------------------------------------------------------------------------------------
// Settings: environment first, then the sidecar `deepmem.json` written by `deepmem init`.

function readSidecar() {
  try {
    const here = dirname(fileURLToPath(import.meta.url));
    return JSON.parse(readFileSync(join(here, "deepmem.json"), "utf8"));
  } catch {
    return {};
  }
}

function number(value, fallback) {
  const parsed = Number(value);
  return Number.isFinite(parsed) && parsed > 0 ? parsed : fallback;
}

function loadSettings() {
  const env = process.env;
  const sidecar = readSidecar();
  return {
    python: env.DEEPMEM_PYTHON || sidecar.python || "python3",
    deadlineMs: number(env.DEEPMEM_DEADLINE_MS ?? sidecar.deadline_ms, 300),
    slowDeadlineMs: number(env.DEEPMEM_SLOW_DEADLINE_MS ?? sidecar.slow_deadline_ms, 15000),
    unresponsiveMs: number(env.DEEPMEM_UNRESPONSIVE_MS ?? sidecar.unresponsive_ms, 30000),
    startDeadlineMs: number(env.DEEPMEM_START_DEADLINE_MS ?? sidecar.start_deadline_ms, 10000),
    env: { ...env }, // a restarted engine gets the environment the first one had
  };
}

// Time as the plugin sees it: deadlines, backoff and the unresponsive check all go through
// one clock, which the tests replace with one they move by hand.
const SYSTEM_CLOCK = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (timer) => clearTimeout(timer),
};

// ---------------------------------------------------------------------------------------
// The child process: Bun.spawn under Bun, child_process.spawn under Node.

async function pumpLines(stream, onLine) {
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for await (const chunk of stream) {
      buffer += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
      let newline;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        onLine(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
      }
    }
  } catch {
    // The stream broke: the exit handler restarts the engine.
  }
}

function spawnProcess(cmd, cwd, env, onLine, onExit) {
  if (typeof globalThis.Bun !== "undefined") {
    const proc = globalThis.Bun.spawn({ cmd, cwd, env, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
    pumpLines(proc.stdout, onLine);
    proc.exited.then(onExit, onExit);
    proc.unref();
    return {
      pid: proc.pid,
      write(line) {
        proc.stdin.write(line);
        proc.stdin.flush();
      },
      kill: () => proc.kill(),
    };
  }
  const child = spawn(cmd[0], cmd.slice(1), { cwd, env, stdio: ["pipe", "pipe", "ignore"] });
  child.on("error", () => onExit(-1));
  child.on("exit", onExit);
  child.stdin.on("error", () => {});
  pumpLines(child.stdout, onLine);
  child.unref();
  child.stdin.unref?.();
  child.stdout.unref?.();
  return { pid: child.pid, write: (line) => child.stdin.write(line), kill: () => child.kill() };
}

// ---------------------------------------------------------------------------------------
// The engine connection: requests with deadlines, late replies still delivered to their
// callback, restart with backoff when the process dies or stops answering.

function createEngine(directory, settings, clock) {
  const engine = {
    directory,
    settings,
    manifest: null, // what the engine offers (tools, commands), from its hello reply
    proc: null,
    status: "stopped", // starting | ready | mismatch | stopped
    pending: new Map(),
    nextId: 1,
    ready: null,
    backoffMs: 500,
    nextStartAt: 0,
    warned: false,
    sessions: new Map(),
    digestCache: new Map(),
  };

  engine.start = () => {
    engine.sessions.clear();
    engine.digestCache.clear();
    engine.status = "starting";
    const cmd = [settings.python, "-m", "deepmem", "bridge", "--root", directory];
    let proc;
    const exited = () => {
      if (engine.proc !== proc) return;
      if (engine.status === "starting") engine.warnOnce(`the engine did not start (${cmd.join(" ")}): run \`deepmem doctor\``);
      engine.stop();
    };
    try {
      proc = spawnProcess(cmd, directory, settings.env, (line) => engine.receive(line), exited);
    } catch {
      proc = null;
    }
    engine.proc = proc;
    if (!proc) {
      exited();
      return;
    }
    engine.ready = engine.send({ op: "hello", version: VERSION, protocol: PROTOCOL }, settings.slowDeadlineMs).then((reply) => {
      if (reply?.ok) {
        engine.status = "ready";
        engine.backoffMs = 500;
        engine.manifest = { tools: reply.tools ?? [], commands: reply.commands ?? [], rules: reply.rules };
        if (reply.warning) engine.warnOnce(reply.warning);
      } else if (reply?.error?.code === "version_mismatch") {
        engine.status = "mismatch";
        engine.warnOnce(reply.error.message);
        engine.stop();
      }
      return engine.status === "ready";
    });
  };

  engine.warnOnce = (message) => {
    if (engine.warned) return;
    engine.warned = true;
    console.error(`deepmem: ${message}`);
  };

  // Forget the process (killing it if it still runs); the next start waits out a backoff
  // that doubles up to 30 s and resets once an engine answers the handshake.
  engine.stop = () => {
    const proc = engine.proc;
    engine.proc = null;
    if (engine.status !== "mismatch") engine.status = "stopped";
    engine.nextStartAt = clock.now() + engine.backoffMs;
    engine.backoffMs = Math.min(engine.backoffMs * 2, 30000);
    for (const entry of engine.pending.values()) entry.finish(null);
    engine.pending.clear();
    if (proc) {
      try {
        proc.kill();
      } catch {
        // already gone
      }
    }
  };

  engine.receive = (line) => {
    let reply;
    try {
      reply = JSON.parse(line);
    } catch {
      return;
    }
    const entry = engine.pending.get(reply.id);
    if (!entry) return;
    engine.pending.delete(reply.id);
    entry.finish(reply);
  };

  // Send one request; resolves with the reply, or null past the deadline. `onReply` runs
  // whenever the reply arrives, even late (that is how late work reaches the next step).
  engine.send = (body, deadlineMs, onReply) =>
    new Promise((resolve) => {
      if (!engine.proc) return resolve(null);
      const id = engine.nextId++;
      let settled = false;
      const timer = clock.setTimeout(() => {
        settled = true;
        resolve(null);
      }, deadlineMs);
      const entry = {
        sentAt: clock.now(),
        finish(reply) {
          clock.clearTimeout(timer);
          if (reply && onReply) {
            try {
              onReply(reply);
            } catch {
              // a bad reply changes nothing
            }
          }
          if (!settled) {
            settled = true;
            resolve(reply);
          }
        },
      };
      engine.pending.set(id, entry);
      try {
        engine.proc.write(JSON.stringify({ ...body, id }) + "\n");
      } catch {
        engine.pending.delete(id);
        entry.finish(null);
      }
    });

  // A usable engine, started or restarted when needed (waiting for its handshake at most
  // `waitMs`); false means "stay out of the way".
  engine.usable = async (waitMs = settings.deadlineMs) => {
    if (engine.status === "mismatch") return false;
    const oldest = Math.min(...[...engine.pending.values()].map((entry) => entry.sentAt));
    if (engine.proc && clock.now() - oldest > settings.unresponsiveMs) engine.stop();
    if (!engine.proc) {
      if (clock.now() < engine.nextStartAt) return false;
      engine.start();
    }
    return engine.status === "ready" || (await withDeadline(clock, engine.ready, waitMs)) === true;
  };

  engine.request = async (body, deadlineMs, onReply) => {
    if (!(await engine.usable())) return null;
    return engine.send(body, deadlineMs, onReply);
  };

  engine.session = (id) => {
    let state = engine.sessions.get(id);
    if (!state) {
      state = { sent: [], chain: [], partDigests: new Map(), edits: new Map() };
      engine.sessions.set(id, state);
    }
    return state;
  };

  engine.start();
  return engine;
}

function withDeadline(clock, promise, ms) {
  return new Promise((resolve) => {
    const timer = clock.setTimeout(() => resolve(null), ms);
    Promise.resolve(promise).then(
      (value) => {
        clock.clearTimeout(timer);
        resolve(value);
      },
      () => resolve(null),
    );
  });
}

function engineFor(directory, clock) {
  globalThis[ENGINES] ??= new Map();
  let engine = globalThis[ENGINES].get(directory);
  if (!engine) {
    engine = createEngine(directory, loadSettings(), clock);
    globalThis[ENGINES].set(directory, engine);
  }
  return engine;
}

// ---------------------------------------------------------------------------------------
// Incremental transform: digests, the wire form, and re-applying cached edits.

const sha1 = (text) => createHash("sha1").update(text).digest("hex");

// Digests are what makes a step cheap: a settled part is never rewritten by OpenCode
// (a finished tool call may only be marked compacted, which its fingerprint includes), so
// its full digest is computed once and then recognised by a cheap fingerprint. Parts still
// being written (running tools, streaming text) are hashed every step. A step's CPU cost is
// thus proportional to the new parts, not to the whole history.
const WRITTEN_ONCE = new Set(["step-start", "step-finish", "snapshot", "patch", "file", "agent", "compaction", "subtask"]);

function settledFingerprint(part) {
  const state = part.state;
  if (state) {
    if (state.status !== "completed" && state.status !== "error") return null;
    const lengths = `${state.output?.length ?? -1}/${state.error?.length ?? -1}`;
    return `${part.type}|${state.status}|${state.time?.end}|${state.time?.compacted}|${lengths}`;
  }
  if (WRITTEN_ONCE.has(part.type)) return part.type;
  if (part.type !== "text" && part.type !== "reasoning") return null;
  if (part.time && part.time.end === undefined) return null; // still streaming
  return `${part.type}|${part.time?.end}|${part.text?.length ?? -1}|${part.synthetic ?? ""}|${part.ignored ?? ""}`;
}

function partDigest(cache, part) {
  const fingerprint = settledFingerprint(part);
  const known = cache.get(part.id);
  if (fingerprint !== null && known?.fingerprint === fingerprint) return known.d;
  const d = sha1(JSON.stringify(part));
  if (fingerprint === null) return d;
  remember(cache, part.id, { fingerprint, d });
  return d;
}

function remember(cache, key, value) {
  if (cache.size >= DIGEST_CACHE_LIMIT) cache.clear();
  cache.set(key, value);
}

// An assistant message with time.completed keeps its info for good (a user message's info
// gains a `summary` later, so it is hashed every step; there are few of them).
function messageDigest(cache, message, parts) {
  const info = message.info;
  const settled = info.role === "assistant" && info.time?.completed !== undefined;
  const joined = parts.join(",");
  const known = settled ? cache.get(info.id) : undefined;
  if (known?.fingerprint === joined) return known.d;
  const d = sha1(JSON.stringify(info) + "|" + joined);
  if (settled) remember(cache, info.id, { fingerprint: joined, d });
  return d;
}

function digestMessages(cache, messages) {
  return messages.map((message) => {
    const parts = message.parts.map((part) => partDigest(cache, part));
    return { id: message.info.id, d: messageDigest(cache, message, parts), parts };
  });
}

function buildTransform(state, sessionID, messages, digests, compaction) {
  let keep = 0;
  while (keep < digests.length && keep < state.sent.length && state.sent[keep].d === digests[keep].d) keep++;
  const wire = [];
  for (let i = keep; i < messages.length; i++) {
    const parts = messages[i].parts.map((part, j) => {
      const d = digests[i].parts[j];
      return state.partDigests.get(part.id) === d ? { id: part.id, d } : { id: part.id, d, part };
    });
    wire.push({ d: digests[i].d, info: messages[i].info, parts });
  }
  const body = {
    op: "transform",
    session: sessionID,
    keep,
    keep_digest: keep ? state.chain[keep - 1] : "",
    compaction,
    messages: wire,
  };
  // Record what the engine will hold once it reads this request.
  state.sent = state.sent.slice(0, keep).concat(digests.slice(keep).map(({ id, d }) => ({ id, d })));
  state.chain = state.chain.slice(0, keep);
  for (let i = keep; i < digests.length; i++) {
    state.chain.push(sha1((i ? state.chain[i - 1] : "") + digests[i].d));
    messages[i].parts.forEach((part, j) => state.partDigests.set(part.id, digests[i].parts[j]));
  }
  return body;
}

function mergeEdits(state, reply) {
  if (!reply.ok) return;
  for (const key of reply.drop ?? []) state.edits.delete(key);
  for (const edit of reply.edits ?? []) state.edits.set(edit.key, edit);
}

// A synthetic user message after the last one, holding a part meant for the very end of the
// context (a nudge), made by the rules the engine's hello gives (deepmem.transform.plan.trailing_message):
// OpenCode sends an assistant message's text before its tool results, so a nudge appended to
// it would sit before them and break the cached prefix when it moves on.
function trailingMessage(rules, last, part) {
  const user = { id: `${rules.trailing_prefix}${part.id}`, sessionID: last.info.sessionID ?? "", role: "user" };
  for (const key of rules.trailing_info) if (last.info[key] !== undefined) user[key] = last.info[key];
  return { info: user, parts: [{ ...part, messageID: user.id }] };
}

function applyEdits(rules, state, messages, digests, withAppends) {
  if (!state.edits.size) return;
  const where = new Map();
  const byMessage = new Map();
  messages.forEach((message, i) => {
    byMessage.set(message.info.id, message);
    message.parts.forEach((part, j) => where.set(part.id, [i, j]));
  });
  for (const edit of state.edits.values()) {
    if (edit.part) {
      const hit = where.get(edit.key);
      if (!hit) continue;
      const [i, j] = hit;
      if (messages[i].info.id !== edit.message || digests[i].parts[j] !== edit.d) continue;
      messages[i].parts[j] = edit.part;
    } else if (edit.append && withAppends && edit.trailing) {
      const last = messages[messages.length - 1];
      if (last?.info.id === edit.message) messages.push(trailingMessage(rules, last, edit.append));
    } else if (edit.append && withAppends) {
      const message = byMessage.get(edit.message);
      if (message && !message.parts.some((part) => part.id === edit.append.id)) message.parts.push(edit.append);
    }
  }
}

// The key of a session's state; OpenCode's compaction copy of a history is kept apart, under
// the suffix the engine's hello gives.
function stateKey(rules, sessionID, compaction) {
  return compaction ? `${sessionID}${rules.compaction_suffix}` : sessionID;
}

async function transformMessages(engine, messages, compaction, deadlineMs = engine.settings.deadlineMs) {
  const sessionID = messages.find((message) => message.info?.sessionID)?.info.sessionID;
  if (!sessionID) return;
  if (!engine.manifest) await engine.usable(); // the first handshake gives the rules
  const rules = engine.manifest?.rules;
  if (!rules) return;
  const key = stateKey(rules, sessionID, compaction);
  const digests = digestMessages(engine.digestCache, messages);
  const send = () => {
    const state = engine.session(key);
    const body = buildTransform(state, sessionID, messages, digests, compaction);
    return engine.request(body, deadlineMs, (reply) => {
      if (reply.error?.code === "resync") engine.sessions.delete(key);
      else mergeEdits(state, reply);
    });
  };
  const reply = await send();
  if (reply?.error?.code === "resync") await send();
  const state = engine.sessions.get(key);
  if (state) applyEdits(rules, state, messages, digests, !compaction);
}

// Commands and compaction need the session's history in the engine. A session continued
// in a new OpenCode process reaches them before any transform: fetch it from OpenCode.
// `fresh` asks for the stored messages even when the engine has seen the session: at a
// compaction, the tool results of the newest step came after the last transform.
async function ensureHistory(engine, client, sessionID, fresh = false) {
  if (!sessionID || (!fresh && engine.sessions.has(sessionID)) || !client?.session?.messages) return;
  const response = await client.session.messages({ path: { id: sessionID } });
  const messages = Array.isArray(response) ? response : response?.data;
  if (Array.isArray(messages) && messages.length) {
    await transformMessages(engine, messages, false, engine.settings.slowDeadlineMs);
  }
}

// ---------------------------------------------------------------------------------------
// Hooks. Every one is wrapped: an exception inside never reaches OpenCode.

function guarded(hook) {
  return async (...args) => {
    try {
      await hook(...args);
    } catch {
      // fail open
    }
  };
}

function eventSession(event) {
  const props = event?.properties ?? {};
  return props.sessionID ?? props.info?.id ?? "";
}

function oneLine(reply, what) {
  if (reply?.ok) return null;
  return `deepmem: ${what} failed: ${reply?.error?.message ?? "the engine did not answer in time"}`;
}

// A zod type for one argument of a tool, from the JSON Schema the engine sent.
function zodType(z, schema) {
  let type;
  if (Array.isArray(schema.enum)) type = z.enum(schema.enum);
  else if (schema.type === "integer") type = z.number().int();
  else if (schema.type === "number") type = z.number();
  else if (schema.type === "boolean") type = z.boolean();
  else type = z.string();
  if (schema.minimum !== undefined) type = type.min(schema.minimum);
  if (schema.maximum !== undefined) type = type.max(schema.maximum);
  return type;
}

function zodArgs(z, parameters) {
  const required = new Set(parameters?.required ?? []);
  const args = {};
  for (const [name, schema] of Object.entries(parameters?.properties ?? {})) {
    let type = zodType(z, schema);
    if (!required.has(name)) type = type.optional();
    args[name] = schema.description ? type.describe(schema.description) : type;
  }
  return args;
}

// The engine's tools, registered as it describes them; each call is one `tool` request.
function makeTools(engine, toolApi, schemas) {
  if (!toolApi || !schemas.length) return undefined;
  const call = async (name, args, context) => {
    const reply = await engine.request(
      { op: "tool", name, args, session: context?.sessionID ?? "" },
      engine.settings.slowDeadlineMs,
    );
    return oneLine(reply, name) ?? String(reply.output);
  };
  const tools = {};
  for (const { name, description, parameters } of schemas) {
    tools[name] = toolApi({
      description,
      args: zodArgs(toolApi.schema, parameters),
      execute: (args, context) => call(name, args, context),
    });
  }
  return tools;
}

async function loadToolApi() {
  try {
    return (await import("@opencode-ai/plugin")).tool;
  } catch {
    return null; // without the package OpenCode could not load tools anyway
  }
}

// The model's context window (OpenCode's `model.limit.context`), so pressure tiers mean the
// same share of the window for every model; 0 when OpenCode does not say.
function contextWindow(model) {
  const context = model?.limit?.context;
  return Number.isInteger(context) && context > 0 ? context : 0;
}

// What the engine prices a session's jumps with: the model's id, provider, prices (OpenCode's
// `model.cost`, dollars per million tokens) and AI SDK package (`model.api.npm`: whether
// OpenCode sends a cache key); and its limits (`model.limit`: context, input, output, with the
// reserve the user's config keeps below an input limit), from which the engine knows where
// OpenCode would compact; {} when OpenCode passes no model.
function modelFacts(model, reserved) {
  if (!model || typeof model !== "object") return {};
  const { id, providerID, cost } = model;
  return {
    id: String(id ?? ""),
    providerID: String(providerID ?? ""),
    cost: cost && typeof cost === "object" ? cost : {},
    npm: String(model.api?.npm ?? ""),
    limit: modelLimits(model.limit, reserved),
  };
}

// The model's limits in tokens, each a whole number (0 when OpenCode gives none), and the
// configured reserve when there is one.
function modelLimits(limit, reserved) {
  const count = (value) => (Number.isInteger(value) && value > 0 ? value : 0);
  const limits = { context: count(limit?.context), input: count(limit?.input), output: count(limit?.output) };
  return reserved === null ? limits : { ...limits, reserved };
}

// The reserve OpenCode keeps below a model's input limit when the user configured one
// (`compaction.reserved`, in tokens); null for OpenCode's own.
function configuredReserve(cfg) {
  const reserved = cfg?.compaction?.reserved;
  return Number.isInteger(reserved) && reserved >= 0 ? reserved : null;
}

// `options.clock` replaces the system clock (tests); OpenCode passes no such option.
export const DeepmemPlugin = async (input, options) => {
  if (process.env.DEEPMEM_DISABLE === "1") return {};
  const directory = input?.directory ?? process.cwd();
  const engine = engineFor(directory, options?.clock ?? SYSTEM_CLOCK);
  if (!(await engine.usable(engine.settings.startDeadlineMs))) {
    if (engine.status === "starting") {
      engine.warnOnce(`the engine did not answer within ${engine.settings.startDeadlineMs} ms: off for this OpenCode process, run \`deepmem doctor\``);
      engine.stop();
    }
    return {};
  }
  const commands = new Set(engine.manifest.commands);
  const compacting = new Set();
  const toasted = new Set();
  const answeredSystem = new Set();
  let reserved = null;
  const hooks = {
    config: guarded(async (cfg) => {
      reserved = configuredReserve(cfg);
    }),
    "experimental.chat.messages.transform": guarded(async (_input, output) => {
      const messages = output?.messages;
      if (!Array.isArray(messages) || !messages.length) return;
      const sessionID = messages.find((message) => message.info?.sessionID)?.info.sessionID;
      const compaction = compacting.delete(sessionID);
      await transformMessages(engine, messages, compaction);
    }),
    "experimental.chat.system.transform": guarded(async (hookInput, output) => {
      if (!hookInput?.sessionID || !Array.isArray(output?.system)) return;
      // The block is frozen at the session's first step, so that step may wait a little
      // longer for it: a block missing only from the first request would change the
      // system prompt at the second one.
      const first = !answeredSystem.has(hookInput.sessionID);
      const reply = await engine.request(
        {
          op: "system",
          session: hookInput.sessionID,
          system: output.system,
          context: contextWindow(hookInput.model),
          model: modelFacts(hookInput.model, reserved),
        },
        first ? Math.max(engine.settings.deadlineMs, FIRST_SYSTEM_DEADLINE_MS) : engine.settings.deadlineMs,
      );
      if (!reply?.ok) return;
      if (!reply.append.length) return;
      answeredSystem.add(hookInput.sessionID);
      // Joined to the first system string, not pushed as a second one: OpenCode marks the
      // first two system blocks for the cache, and a request keeps only 4 marks (a second
      // block would push out the newest of OpenCode's two marks on the last messages).
      if (output.system.length) output.system[0] = [output.system[0], ...reply.append].join(SYSTEM_SEPARATOR);
      else output.system.push(...reply.append);
    }),
    "experimental.session.compacting": guarded(async (hookInput, output) => {
      compacting.add(hookInput.sessionID);
      await ensureHistory(engine, input?.client, hookInput.sessionID, true);
      const reply = await engine.request(
        { op: "compacting", session: hookInput.sessionID },
        engine.settings.slowDeadlineMs,
      );
      if (!reply?.ok) return;
      if (reply.prompt) output.prompt = reply.prompt;
      if (Array.isArray(output.context)) output.context.push(...reply.context);
    }),
    "command.execute.before": guarded(async (hookInput, output) => {
      if (!commands.has(hookInput?.command) || !Array.isArray(output?.parts)) return;
      await ensureHistory(engine, input?.client, hookInput.sessionID);
      const reply = await engine.request(
        { op: "command", command: hookInput.command, arguments: hookInput.arguments ?? "", session: hookInput.sessionID },
        engine.settings.slowDeadlineMs,
      );
      const result = oneLine(reply, `/${hookInput.command}`) ?? `deepmem /${hookInput.command}: ${reply.result}`;
      output.parts.splice(0, output.parts.length, {
        type: "text",
        text: `${result}\n\nThe command already ran. Reply with one short line that tells the user this result.`,
      });
    }),
    event: guarded(async ({ event }) => {
      if (!FORWARDED_EVENTS.has(event?.type)) return;
      const session = eventSession(event);
      if (event.type === "session.deleted") {
        const rules = engine.manifest?.rules;
        if (rules) for (const compaction of [false, true]) engine.sessions.delete(stateKey(rules, session, compaction));
      }
      const reply = await engine.request({ op: "event", type: event.type, session }, engine.settings.slowDeadlineMs);
      if (reply?.toast && !toasted.has(session)) {
        toasted.add(session);
        await input?.client?.tui?.showToast?.({ body: { message: reply.toast, variant: "info" } });
      }
    }),
  };
  const tools = makeTools(engine, await loadToolApi(), engine.manifest.tools);
  if (tools) hooks.tool = tools;
  return hooks;
};
