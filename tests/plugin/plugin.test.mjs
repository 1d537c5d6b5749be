// The plugin under Node against the real engine: hooks mutate in place, edits are re-applied
// every step, tools and commands are the ones the engine names, and every failure leaves
// OpenCode's data untouched. The plugin runs on a fake clock: a deadline passes only when a
// test moves time, so nothing here sleeps or races a timer.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import {
  HAS_PLUGIN_PACKAGE,
  PYTHON,
  cliCompressed,
  cliRemember,
  engineHello,
  enginePid,
  fakeClock,
  loadMessages,
  makeProject,
  startPlugin,
  transform,
} from "./helpers.mjs";

const messages = loadMessages();
const sessionID = messages[0].info.sessionID;
const history = (length) => messages.slice(0, length);

test("the module exports only plugin functions", async () => {
  const { module } = await startPlugin();
  for (const [name, value] of Object.entries(module)) assert.equal(typeof value, "function", name);
});

test("DEEPMEM_DISABLE=1 registers nothing", async () => {
  const { hooks } = await startPlugin({ DEEPMEM_DISABLE: "1" });
  assert.deepEqual(hooks, {});
});

test("transform gives the CLI's output, re-applied on every reloaded step", async () => {
  const { hooks, project } = await startPlugin();
  const expected = cliCompressed(messages, project);
  assert.notDeepEqual(expected, messages, "the fixture must compress");
  // Grow the session step by step as OpenCode does; the last step must equal the CLI.
  for (const length of [5, 20, 40]) await transform(hooks, history(length));
  const last = await transform(hooks, messages);
  assert.deepEqual(last, expected);
  // OpenCode reloads messages from storage each step: the same edits come back from the cache.
  const reloaded = await transform(hooks, messages);
  assert.deepEqual(reloaded, expected);
});

test("a nudge arrives in one trailing user message, as the CLI puts it, and moves on", async () => {
  const { hooks, project } = await startPlugin();
  const nudged = history(12);
  const expected = cliCompressed(nudged, project);
  assert.match(expected.at(-1).info.id, /^msg_deepmem_prt_deepmem_nudge_/, "the fixture must nudge at this step");
  await transform(hooks, history(5));
  assert.deepEqual(await transform(hooks, nudged), expected);
  assert.deepEqual(await transform(hooks, nudged), expected, "re-applied once, not twice");
  const next = await transform(hooks, history(13));
  assert.equal(next.filter((message) => message.info.id.startsWith("msg_deepmem_")).length, 0);
});

test("hook outputs are mutated in place, the array identity is kept", async () => {
  const { hooks } = await startPlugin();
  const output = { messages: structuredClone(messages) };
  const array = output.messages;
  await hooks["experimental.chat.messages.transform"]({}, output);
  assert.equal(output.messages, array);
  assert.notDeepEqual(array, messages);
});

test("a part OpenCode changed since is never overwritten by an edit planned for its old content", async () => {
  const { hooks } = await startPlugin();
  const first = await transform(hooks, messages);
  const [i, j] = first.flatMap((m, i) => m.parts.map((part, j) => [i, j, part])).find(([, , part]) => part.type === "tool" && part.metadata?.deepmem);
  const changed = structuredClone(messages);
  changed[i].parts[j].state.time.compacted = 1;  // OpenCode's own prune marks it
  const seen = await transform(hooks, changed);
  assert.equal(seen[i].parts[j].state.time.compacted, 1);
  assert.deepEqual(seen.slice(0, i), first.slice(0, i));
});

test("system: nothing added from an empty memory", async () => {
  const { hooks } = await startPlugin();
  await transform(hooks, history(1));
  const main = { system: ["You are opencode, an interactive CLI tool."] };
  await hooks["experimental.chat.system.transform"]({ sessionID, model: {} }, main);
  assert.deepEqual(main.system, ["You are opencode, an interactive CLI tool."]);
});

test("system: a frozen block for the main request, nothing for title or summary requests", async () => {
  const { hooks, project } = await startPlugin();
  cliRemember(project, "Releases are cut from the main branch only.");
  const system = hooks["experimental.chat.system.transform"];
  await transform(hooks, history(1));
  const main = { system: ["You are opencode, an interactive CLI tool."] };
  await system({ sessionID, model: {} }, main);
  const again = { system: ["You are opencode, an interactive CLI tool."] };
  await system({ sessionID, model: {} }, again);
  assert.deepEqual(again.system, main.system);
  assert.equal(main.system.length, 1); // the block joins the first system string
  assert.ok(main.system[0].startsWith("You are opencode, an interactive CLI tool.\n\n"));
  assert.ok(main.system[0].length > "You are opencode, an interactive CLI tool.".length + 2);
  const title = { system: ["You are a title generator. You output ONLY a thread title."] };
  await system({ sessionID, model: {} }, title);
  assert.equal(title.system.length, 1);
  const summary = { system: ["You are a context summarization agent."] };
  await system({ sessionID, model: {} }, summary);
  assert.equal(summary.system.length, 1);
});

// The request state the engine saved for the session, unsealed.
function requestState(project) {
  const saved = join(project, ".deep-memory", "sessions", sessionID, "request-state.json");
  const unseal = "import sys; from pathlib import Path; from deepmem.vault.sealed import read_sealed; "
    + "sys.stdout.buffer.write(read_sealed(Path(sys.argv[1])))";
  return JSON.parse(execFileSync(PYTHON, ["-c", unseal, saved], { encoding: "utf8" }));
}

test("system: the model's limits reach the engine, each a whole number or 0", async () => {
  const { hooks, project } = await startPlugin();
  await transform(hooks, history(1));
  const limit = { context: 200000, input: "lots", output: 64000.5 };
  const model = { id: "claude-sonnet-4-5", providerID: "anthropic", cost: {}, limit };
  await hooks["experimental.chat.system.transform"]({ sessionID, model }, { system: ["You are opencode"] });
  const state = requestState(project);
  assert.deepEqual(state.model.limit, { context: 200000, input: 0, output: 0 });
  assert.equal(state.context_window, 200000);
});

test("system: a reserve configured for compaction reaches the engine with the limits", async () => {
  const { hooks, project } = await startPlugin();
  await hooks.config({ compaction: { reserved: 30000 } });
  await transform(hooks, history(1));
  const model = { id: "gpt-5", providerID: "openai", cost: {}, limit: { context: 400000, input: 272000, output: 128000 } };
  await hooks["experimental.chat.system.transform"]({ sessionID, model }, { system: ["You are opencode"] });
  const state = requestState(project);
  assert.deepEqual(state.model.limit, { context: 400000, input: 272000, output: 128000, reserved: 30000 });
});

test("slash commands hand the model a single one-line result", async () => {
  const { hooks, project } = await startPlugin();
  const { commands } = await engineHello(project);
  assert.ok(commands.includes("checkpoint"), "the engine names its slash commands");
  await transform(hooks, messages);
  const output = { parts: [{ type: "text", text: "deepmem /checkpoint " }, { type: "file", url: "file:///x" }] };
  await hooks["command.execute.before"]({ command: "checkpoint", sessionID, arguments: "" }, output);
  assert.equal(output.parts.length, 1);
  assert.match(output.parts[0].text, /^deepmem(:|) ?\/checkpoint/);
  const other = { parts: [{ type: "text", text: "untouched" }] };
  await hooks["command.execute.before"]({ command: "review", sessionID, arguments: "" }, other);
  assert.deepEqual(other.parts, [{ type: "text", text: "untouched" }]);
});

test("the idle event shows one toast per session with what was saved", async () => {
  const { hooks, toasts } = await startPlugin();
  await transform(hooks, messages);
  const idle = { event: { type: "session.idle", properties: { sessionID } } };
  await hooks.event(idle);
  await hooks.event(idle);
  assert.equal(toasts.length, 1);
  assert.match(toasts[0], /tokens saved/);
});

test("a deleted session is forgotten: its next history is sent in full and compressed again", async () => {
  const { hooks, project } = await startPlugin();
  const expected = cliCompressed(messages, project);
  assert.deepEqual(await transform(hooks, messages), expected);
  await hooks.event({ event: { type: "session.deleted", properties: { info: { id: sessionID } } } });
  assert.deepEqual(await transform(hooks, messages), expected);
});

const NEEDS_PACKAGE = !HAS_PLUGIN_PACKAGE && "needs `npm install` of @opencode-ai/plugin into .cache/opencode (done by .ci/run)";

test("the tools are the ones the engine's hello names, with its descriptions and arguments", { skip: NEEDS_PACKAGE }, async () => {
  const { hooks, project } = await startPlugin();
  const hello = await engineHello(project);
  assert.ok(hello.ok && hello.tools.length, "the engine names its tools");
  assert.deepEqual(Object.keys(hooks.tool), hello.tools.map((schema) => schema.name));
  for (const { name, description, parameters } of hello.tools) {
    const registered = hooks.tool[name];
    assert.equal(registered.description, description, name);
    assert.deepEqual(Object.keys(registered.args), Object.keys(parameters.properties), name);
    for (const [arg, schema] of Object.entries(parameters.properties)) {
      const type = registered.args[arg];
      assert.equal(type.isOptional(), !parameters.required.includes(arg), `${name}.${arg} optional`);
      assert.equal(type.description, schema.description, `${name}.${arg} description`);
      for (const value of schema.enum ?? []) assert.ok(type.safeParse(value).success, `${name}.${arg} takes ${value}`);
      if (schema.maximum !== undefined) assert.ok(!type.safeParse(schema.maximum + 1).success, `${name}.${arg} max`);
    }
  }
  assert.ok(!hooks.tool.memory_store.args.type.safeParse("opinion").success, "memory types come from the engine");
});

test("tools: deep_expand restores an original, memory tools answer", { skip: NEEDS_PACKAGE }, async () => {
  const { hooks } = await startPlugin();
  const compressed = await transform(hooks, messages);
  const originals = new Map(messages.flatMap((m) => m.parts).map((part) => [part.id, part]));
  const edited = compressed.flatMap((m) => m.parts).find((part) => part.metadata?.deepmem?.part);
  const context = { sessionID };
  const restored = await hooks.tool.deep_expand.execute({ key: `ccr:${edited.metadata.deepmem.part}` }, context);
  assert.deepEqual(JSON.parse(restored), originals.get(edited.id));
  const firstLine = await hooks.tool.deep_expand.execute({ key: edited.metadata.deepmem.part, lines: "1-1" }, context);
  assert.equal(firstLine, restored.split("\n")[0] + (restored.includes("\n") ? "\n" : ""));
  const missing = await hooks.tool.deep_expand.execute({ key: "0".repeat(32) }, context);
  assert.match(missing, /^deepmem: deep_expand failed: unknown CCR key/);
  const stored = await hooks.tool.memory_store.execute({ text: "Releases are cut from the main branch only.", type: "constraint" }, context);
  assert.ok(typeof stored === "string" && stored.length > 0);
  const found = await hooks.tool.memory_search.execute({ query: "releases main branch" }, context);
  if (!/not available yet/.test(stored)) assert.match(found, /main branch/);
});

// One step whose answer misses its deadline (a second, past the default 300 ms; short of
// the 30 s after which an engine counts as unresponsive).
async function lateStep(hooks, clock, history) {
  const step = transform(hooks, history);
  await clock.advance(1000);
  return step;
}

test("a late answer is used at the next step", async () => {
  const { hooks, project, clock } = await startPlugin();
  const expected = cliCompressed(messages, project);
  assert.deepEqual(await lateStep(hooks, clock, messages), messages, "past its deadline the step goes out untouched");
  // A request answered after the late one: the engine answers in order, so the late reply is in.
  await hooks["experimental.chat.system.transform"]({ sessionID, model: {} }, { system: ["You are opencode"] });
  assert.deepEqual(await lateStep(hooks, clock, messages), expected, "the late answer's edits, without waiting");
});

test("a killed engine: steps go through untouched or compressed, then it restarts after a backoff", async () => {
  const { hooks, project, clock } = await startPlugin();
  const expected = cliCompressed(messages, project);
  assert.deepEqual(await transform(hooks, messages), expected);
  const first = enginePid(project);
  process.kill(first, "SIGKILL");
  // The request in flight ends when the plugin sees the exit; then the backoff holds restarts.
  assert.deepEqual(await transform(hooks, messages), expected, "cached edits, never a partial edit");
  assert.deepEqual(await transform(hooks, messages), expected, "within the backoff: cached edits, no engine");
  assert.equal(enginePid(project), null, "no restart within the backoff");
  await clock.advance(500);
  assert.deepEqual(await transform(hooks, messages), expected, "a new engine compresses again");
  const second = enginePid(project);
  assert.ok(second && second !== first, "restarted");
});

function fakeEngine(project, script) {
  const path = join(project, "fake-engine.sh");
  writeFileSync(path, `#!/bin/sh\n${script}\n`);
  chmodSync(path, 0o755);
  return path;
}

async function capturingErrors(run) {
  const errors = [];
  const original = console.error;
  console.error = (...args) => errors.push(args.join(" "));
  try {
    return { result: await run(), errors };
  } finally {
    console.error = original;
  }
}

test("an engine that cannot start is reported once and the plugin registers nothing", async () => {
  const { result, errors } = await capturingErrors(() => startPlugin({}, { python: "/nonexistent/python" }));
  assert.deepEqual(result.hooks, {});
  assert.equal(errors.length, 1);
  assert.match(errors[0], /did not start.*deepmem doctor/);
});

test("an engine too slow to answer its handshake: reported once, registers nothing, is stopped", async () => {
  const { project } = makeProject();
  const python = fakeEngine(project, `cat > /dev/null`);
  const clock = fakeClock();
  const { result, errors } = await capturingErrors(async () => {
    const starting = startPlugin({}, { python, clock });
    await clock.advance(10000);
    return starting;
  });
  assert.deepEqual(result.hooks, {});
  assert.equal(errors.length, 1);
  assert.match(errors[0], /did not answer within 10000 ms.*deepmem doctor/);
  assert.equal(enginePid(project), null, "the slow engine was stopped");
});

test("a version mismatch is reported once and the plugin stays out of the way", async () => {
  const { project } = makeProject();
  const reply = JSON.stringify({ id: 1, error: { code: "version_mismatch", message: "plugin 0.1.0 ≠ engine 9.9.9" } });
  const python = fakeEngine(project, `echo "$0 $*" >> "${project}/starts"\nread line\necho '${reply}'\ncat > /dev/null`);
  const { result, errors } = await capturingErrors(() => startPlugin({}, { python }));
  assert.deepEqual(result.hooks, {});
  assert.equal(errors.length, 1);
  assert.match(errors[0], /9\.9\.9/);
  assert.equal(readFileSync(join(project, "starts"), "utf8").trim().split("\n").length, 1, "never restarted");
});

test("an engine that stops answering is restarted", async () => {
  const { project: scripts } = makeProject();
  // Answers the handshake (with the request's id and the rules a real engine gives), then nothing ever again.
  const rules = `{"trailing_prefix":"msg_deepmem_","trailing_info":["time","agent","model"],"compaction_suffix":"#compaction"}`;
  const hello = `{"id":%s,"ok":true,"version":"0.1.0","protocol":2,"tools":[],"commands":[],"rules":${rules}}\\n`;
  const python = fakeEngine(
    scripts,
    `echo start >> "${scripts}/starts"\nread line\nprintf '${hello}' "$(echo "$line" | sed 's/.*"id":\\([0-9]*\\)}$/\\1/')"\ncat > /dev/null`,
  );
  const { hooks, clock, module, project } = await startPlugin({ DEEPMEM_DEADLINE_MS: "50", DEEPMEM_UNRESPONSIVE_MS: "100" }, { python });
  const starts = () => readFileSync(join(scripts, "starts"), "utf8").trim().split("\n").length;
  assert.deepEqual(await lateStep(hooks, clock, messages), messages, "no answer: untouched");
  assert.equal(starts(), 1);
  assert.deepEqual(await transform(hooks, messages), messages, "unresponsive: stopped, restart held by the backoff");
  assert.deepEqual(await transform(hooks, messages), messages, "still within the backoff");
  assert.equal(starts(), 1);
  await clock.advance(500);
  // OpenCode may run a plugin's init again; past the backoff it starts a new engine and waits for it.
  const again = await module.DeepmemPlugin({ directory: project }, { clock });
  assert.ok(again["experimental.chat.messages.transform"], "the new engine answered its handshake");
  assert.equal(starts(), 2, "the unresponsive engine was replaced");
});
