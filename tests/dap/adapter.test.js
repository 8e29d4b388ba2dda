// `hindsight dap` driven by Microsoft's own client for adapter tests
// (@vscode/debugadapter-testsupport), as an editor drives it. Run by the Rust test
// crates/hindsight/tests/dap.rs, which compiles the program and sets:
//   HINDSIGHT_BIN     the hindsight binary
//   DAP_PROGRAM       tests/programs/dap.c, compiled with -g
//   DAP_PROGRAM_ELSEWHERE  the same, compiled from tests/dap as ../programs/dap.c
//   DAP_SOURCE        that source file (lines are found by their `// @name` markers)
//   DAP_CPP_PROGRAM   tests/programs/cpp_values.cpp, compiled with -g (C++ containers)
//   DAP_CPP_SOURCE    that source file
//   HINDSIGHT_DIR     where recordings go
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const HINDSIGHT = process.env.HINDSIGHT_BIN;
const PROGRAM = process.env.DAP_PROGRAM;
const SOURCE = process.env.DAP_SOURCE;
if (!HINDSIGHT || !PROGRAM || !SOURCE) {
  throw new Error('HINDSIGHT_BIN, DAP_PROGRAM and DAP_SOURCE must be set (cargo test runs this)');
}

const sourceLines = fs.readFileSync(SOURCE, 'utf8').split('\n');
/** The 1-based line carrying `// @name`. */
function line(name) {
  const i = sourceLines.findIndex((l) => l.includes(`// @${name}`));
  assert.ok(i >= 0, `no line marked @${name}`);
  return i + 1;
}

/** A started adapter whose output events are collected. */
async function adapter() {
  const dc = new DebugClient(HINDSIGHT, 'dap', 'hindsight', { env: process.env });
  // Recording and replaying take longer than the client's 5 s default on a busy machine.
  dc.defaultTimeout = 90000;
  dc.outputs = [];
  dc.on('output', (e) => dc.outputs.push(e.body));
  await dc.start();
  return dc;
}

/** initialize + launch; resolves once the adapter asks for the configuration. */
async function launch(dc, args) {
  const init = await dc.initializeRequest();
  assert.equal(init.body.supportsStepBack, true, 'supportsStepBack');
  assert.equal(init.body.supportsConfigurationDoneRequest, true);
  const initialized = dc.waitForEvent('initialized');
  await dc.launchRequest(args);
  await initialized;
}

/** Runs `request` and returns the `stopped` event it leads to. */
async function stopAfter(dc, request) {
  const stopped = dc.waitForEvent('stopped');
  await request();
  return (await stopped).body;
}

/** The innermost frame of the thread that stopped. */
async function topFrame(dc, stopped) {
  const st = await dc.stackTraceRequest({ threadId: stopped.threadId });
  return st.body.stackFrames[0];
}

/** name -> variable of a scope (`Locals`, `Arguments`) of a frame. */
async function scope(dc, frameId, name) {
  const scopes = await dc.scopesRequest({ frameId });
  const s = scopes.body.scopes.find((x) => x.name === name);
  assert.ok(s, `no ${name} scope`);
  return children(dc, s.variablesReference);
}

async function children(dc, variablesReference) {
  const v = await dc.variablesRequest({ variablesReference });
  return Object.fromEntries(v.body.variables.map((x) => [x.name, x]));
}

async function repl(dc, expression, frameId) {
  return (await dc.evaluateRequest({ expression, context: 'repl', frameId })).body.result;
}

/** Records the program (with `args`) and replays it, stopped at a source breakpoint. */
async function replayAt(dc, marker, args = []) {
  await launch(dc, { mode: 'record', program: PROGRAM, args });
  const bp = await dc.setBreakpointsRequest({
    source: { path: SOURCE },
    breakpoints: [{ line: line(marker) }],
  });
  assert.equal(bp.body.breakpoints[0].verified, true, JSON.stringify(bp.body));
  assert.equal(bp.body.breakpoints[0].line, line(marker));
  return stopAfter(dc, () => dc.configurationDoneRequest());
}

test('a recording stops at a source breakpoint with its stack and expandable variables', async () => {
  const dc = await adapter();
  try {
    const stopped = await replayAt(dc, 'area-loop');
    assert.equal(stopped.reason, 'breakpoint');
    const st = await dc.stackTraceRequest({ threadId: stopped.threadId });
    const frames = st.body.stackFrames;
    assert.deepEqual(
      frames.map((f) => [f.name, f.line]),
      [['area', line('area-loop')], ['main', line('call-area')]],
    );
    assert.equal(frames[0].source.path, SOURCE);

    const locals = await scope(dc, frames[0].id, 'Locals');
    assert.equal(locals.a.value, '0');
    assert.equal(locals.i.value, '0');
    assert.equal(locals.a.type, 'int');
    const args = await scope(dc, frames[0].id, 'Arguments');
    assert.equal(args.s.type, 'struct shape *');
    assert.ok(args.s.variablesReference > 0, 'a pointer to a struct expands');
    const s = await children(dc, args.s.variablesReference);
    assert.equal(s.sides.value, '3');
    assert.match(s.name.value, /"triangle"$/);
    const corners = await children(dc, s.corners.variablesReference);
    assert.deepEqual(Object.keys(corners), ['[0]', '[1]', '[2]']);
    assert.equal(s.corners.indexedVariables, 3);
    const named = await dc.variablesRequest({ variablesReference: s.corners.variablesReference, filter: 'named' });
    assert.deepEqual(named.body.variables, []);
    const page = await dc.variablesRequest({ variablesReference: s.corners.variablesReference, filter: 'indexed', start: 1, count: 1 });
    assert.deepEqual(page.body.variables.map((v) => [v.name, v.value]), [['[1]', '{x = 3, y = 4}']]);
    // In the console, a variable named like a command (`s` is `step`) is the variable.
    assert.match(await repl(dc, 's', frames[0].id), /^0x[0-9a-f]+$/);
    const c1 = await children(dc, corners['[1]'].variablesReference);
    assert.equal(c1.x.value, '3');
    assert.equal(c1.y.value, '4');
    assert.equal(c1.y.evaluateName, '((s->corners)[1]).y');
    const again1 = await dc.evaluateRequest({ expression: c1.y.evaluateName, frameId: frames[0].id, context: 'watch' });
    assert.equal(again1.body.result, '4');

    // The caller's frame has its own variables.
    const mainLocals = await scope(dc, frames[1].id, 'Locals');
    assert.equal(mainLocals.total.value, '0');
    const tri = await children(dc, mainLocals.tri.variablesReference);
    assert.equal(tri.sides.value, '3');

    // Watch and hover expressions.
    const w = await dc.evaluateRequest({ expression: 's->corners[2].x * 10', frameId: frames[0].id, context: 'watch' });
    assert.equal(w.body.result, '50');
    await assert.rejects(
      dc.evaluateRequest({ expression: 'no_such_name', frameId: frames[0].id, context: 'hover' }),
      /No symbol "no_such_name" in current context/,
    );

    // Second iteration of the loop: the breakpoint again, with i = 1.
    const again = await stopAfter(dc, () => dc.continueRequest({ threadId: stopped.threadId }));
    assert.equal(again.reason, 'breakpoint');
    const f = await topFrame(dc, again);
    assert.equal((await scope(dc, f.id, 'Locals')).i.value, '1');
    assert.equal((await scope(dc, f.id, 'Locals')).a.value, '2');
  } finally {
    await dc.stop();
  }
});

test('the debug console runs hindsight commands: when, goto, bookmark, info events', async () => {
  const dc = await adapter();
  try {
    const stopped = await replayAt(dc, 'bump3');
    const frame = await topFrame(dc, stopped);
    const when = await repl(dc, 'when', frame.id);
    const m = when.match(/^Current event: (\d+)\nCurrent position: (\d+:\d+:0x[0-9a-f]+:\d+)\n$/);
    assert.ok(m, `when said: ${JSON.stringify(when)}`);
    const position = m[2];
    assert.match(await repl(dc, 'bookmark here'), /^Bookmark here at \d+:\d+:0x[0-9a-f]+:\d+\.\n$/);
    assert.match(await repl(dc, 'info events'), /bookmark here/);
    // An expression that is not a command is evaluated.
    assert.equal(await repl(dc, 'counter', frame.id), '3');
    assert.match(await repl(dc, 'print counter * 2', frame.id), /^\$\d+ = 6\n$/);

    // Move on, then travel back with `goto` typed in the console: the client hears the stop.
    const on = await stopAfter(dc, () => dc.nextRequest({ threadId: stopped.threadId }));
    assert.equal((await topFrame(dc, on)).line, line('print'));
    const back = await stopAfter(dc, () => repl(dc, `goto ${position}`));
    assert.equal((await topFrame(dc, back)).line, line('bump3'));
    assert.equal(await repl(dc, 'counter'), '3');

    // The same through the custom requests.
    const w = await dc.customRequest('hindsight/when');
    assert.equal(w.body.position, position);
    const next = await stopAfter(dc, () => dc.nextRequest({ threadId: stopped.threadId }));
    assert.equal((await topFrame(dc, next)).line, line('print'));
    const goto = await stopAfter(dc, () => dc.customRequest('hindsight/goto', { bookmark: 'here' }));
    assert.equal(goto.reason, 'goto');
    assert.equal((await topFrame(dc, goto)).line, line('bump3'));
    const list = await dc.customRequest('hindsight/bookmarks');
    assert.deepEqual(list.body.bookmarks, [{ name: 'here', position }]);
    await assert.rejects(dc.customRequest('hindsight/goto', { event: 999999 }), /There is no event 999999 in the recording \(it has \d+ events\)/);
  } finally {
    await dc.stop();
  }
});

test('a data breakpoint stops at writes, and reverseContinue lands on the last write', async () => {
  const dc = await adapter();
  try {
    const stopped = await replayAt(dc, 'print');
    const frame = await topFrame(dc, stopped);
    const info = await dc.dataBreakpointInfoRequest({ name: 'counter', frameId: frame.id });
    assert.ok(info.body.dataId, JSON.stringify(info.body));
    assert.ok(info.body.accessTypes.includes('write'));
    const set = await dc.setDataBreakpointsRequest({
      breakpoints: [{ dataId: info.body.dataId, accessType: 'write' }],
    });
    assert.equal(set.body.breakpoints[0].verified, true, JSON.stringify(set.body));

    // Backward: the instruction that last wrote `counter` (bump(3)), before it runs.
    const back = await stopAfter(dc, () => dc.reverseContinueRequest({ threadId: stopped.threadId }));
    assert.equal(back.reason, 'data breakpoint');
    assert.match(back.description, /counter: 6 -> 3/);
    const w = await topFrame(dc, back);
    assert.equal(w.name, 'bump');
    assert.equal(w.line, line('bump'));
    assert.equal((await scope(dc, w.id, 'Arguments')).by.value, '3');
    assert.equal(await repl(dc, 'counter', w.id), '3');

    // Forward again: that same write, then the next one (bump(4)).
    await dc.setBreakpointsRequest({ source: { path: SOURCE }, breakpoints: [] });
    const fwd = await stopAfter(dc, () => dc.continueRequest({ threadId: back.threadId }));
    assert.equal(fwd.reason, 'data breakpoint');
    assert.match(fwd.description, /counter: 3 -> 6/);
    const next = await stopAfter(dc, () => dc.continueRequest({ threadId: fwd.threadId }));
    assert.match(next.description, /counter: 6 -> 10/);
    const f = await topFrame(dc, next);
    assert.equal((await scope(dc, f.id, 'Arguments')).by.value, '4');
  } finally {
    await dc.stop();
  }
});

test('stepBack goes to the previous line, and stepping back into a call', async () => {
  const dc = await adapter();
  try {
    const stopped = await replayAt(dc, 'bump3');
    const tid = stopped.threadId;
    // (A breakpoint met on the way back stops a reverse step, as in gdb: this one goes.)
    await dc.setBreakpointsRequest({ source: { path: SOURCE }, breakpoints: [] });
    const next = await stopAfter(dc, () => dc.nextRequest({ threadId: tid }));
    assert.equal(next.reason, 'step');
    assert.equal((await topFrame(dc, next)).line, line('print'));
    const back = await stopAfter(dc, () => dc.stepBackRequest({ threadId: tid }));
    assert.equal(back.reason, 'step');
    assert.equal((await topFrame(dc, back)).line, line('bump3'));
    const back2 = await stopAfter(dc, () => dc.stepBackRequest({ threadId: tid }));
    const f = await topFrame(dc, back2);
    assert.deepEqual([f.name, f.line], ['main', line('call-area')]);
    assert.equal((await scope(dc, f.id, 'Locals')).total.value, '0');
    // Into the function, then out of it.
    const into = await stopAfter(dc, () => dc.stepInRequest({ threadId: tid }));
    assert.equal((await topFrame(dc, into)).name, 'area');
    const out = await stopAfter(dc, () => dc.stepOutRequest({ threadId: tid }));
    const o = await topFrame(dc, out);
    assert.equal(o.name, 'main');
    // Instruction granularity goes back one instruction.
    const before = o.instructionPointerReference;
    const bi = await stopAfter(dc, () => dc.stepBackRequest({ threadId: tid, granularity: 'instruction' }));
    assert.notEqual((await topFrame(dc, bi)).instructionPointerReference, before);
  } finally {
    await dc.stop();
  }
});

test('conditional, hit-count, function breakpoints and logpoints', async () => {
  const dc = await adapter();
  try {
    await launch(dc, { mode: 'record', program: PROGRAM });
    const bps = await dc.setBreakpointsRequest({
      source: { path: SOURCE },
      breakpoints: [
        { line: line('bump'), logMessage: 'bump by {by}, counter {counter}' },
        { line: line('area-loop'), condition: 'i == 2' },
        { line: line('bump4'), condition: 'no_such_variable +' },
      ],
    });
    const [log, cond, bad] = bps.body.breakpoints;
    assert.equal(log.verified, true);
    assert.equal(cond.verified, true);
    assert.equal(bad.verified, false);
    assert.match(bad.message, /.+/);
    const fbp = await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'bump', hitCondition: '3' }] });
    assert.equal(fbp.body.breakpoints[0].verified, true);
    const bad2 = await dc.setFunctionBreakpointsRequest({
      breakpoints: [{ name: 'bump', hitCondition: '3' }, { name: 'no_such_function' }],
    });
    assert.equal(bad2.body.breakpoints[1].verified, false);
    assert.match(bad2.body.breakpoints[1].message, /Function "no_such_function" not defined/);

    const first = await stopAfter(dc, () => dc.configurationDoneRequest());
    const f = await topFrame(dc, first);
    assert.equal(f.name, 'area');
    assert.equal((await scope(dc, f.id, 'Locals')).i.value, '2');
    const second = await stopAfter(dc, () => dc.continueRequest({ threadId: first.threadId }));
    const g = await topFrame(dc, second);
    assert.equal(g.name, 'bump');
    assert.equal((await scope(dc, g.id, 'Arguments')).by.value, '3', 'the third call of bump');
    const logged = dc.outputs.filter((o) => o.category === 'console' && o.output.startsWith('bump by'));
    assert.deepEqual(logged.map((o) => o.output), [
      'bump by 1, counter 0\n',
      'bump by 2, counter 1\n',
      'bump by 3, counter 3\n',
    ]);
  } finally {
    await dc.stop();
  }
});

test('the program output comes as output events, and the end of the replay is its exit', async () => {
  const dc = await adapter();
  try {
    await launch(dc, { mode: 'record', program: PROGRAM });
    const seen = dc.outputs.length;
    const end = await stopAfter(dc, () => dc.configurationDoneRequest());
    assert.equal(end.reason, 'step');
    assert.match(end.description, /No more reverse-execution history \(the program exits here\)/);
    const replayed = dc.outputs.slice(seen).filter((o) => o.category === 'stdout').map((o) => o.output).join('');
    assert.equal(replayed, 'total 44 counter 6\ndone 10\n');
    // From the end, back in time, then out through the exit.
    const bp = await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'area' }] });
    assert.equal(bp.body.breakpoints[0].verified, true);
    const back = await stopAfter(dc, () => dc.reverseContinueRequest({ threadId: end.threadId }));
    assert.equal(back.reason, 'breakpoint');
    assert.equal((await topFrame(dc, back)).name, 'area');
    await dc.setFunctionBreakpointsRequest({ breakpoints: [] });
    const again = await stopAfter(dc, () => dc.continueRequest({ threadId: back.threadId }));
    assert.match(again.description, /the program exits here/);
    const exited = dc.waitForEvent('exited');
    const terminated = dc.waitForEvent('terminated');
    await dc.continueRequest({ threadId: again.threadId });
    assert.equal((await exited).body.exitCode, 0);
    await terminated;
  } finally {
    await dc.stop();
  }
});

test('a signal is a stop with its name', async () => {
  const dc = await adapter();
  try {
    await launch(dc, { mode: 'record', program: PROGRAM, args: ['crash'] });
    const stopped = await stopAfter(dc, () => dc.configurationDoneRequest());
    assert.equal(stopped.reason, 'exception');
    assert.equal(stopped.text, 'SIGSEGV');
    assert.match(stopped.description, /SIGSEGV, Segmentation fault/);
    assert.equal((await topFrame(dc, stopped)).line, line('crash'));
  } finally {
    await dc.stop();
  }
});

test('setVariable is refused in a replay, restart starts the replay again', async () => {
  const dc = await adapter();
  try {
    const stopped = await replayAt(dc, 'area-loop');
    const f = await topFrame(dc, stopped);
    const scopes = await dc.scopesRequest({ frameId: f.id });
    const locals = scopes.body.scopes.find((s) => s.name === 'Locals');
    await assert.rejects(
      dc.setVariableRequest({ variablesReference: locals.variablesReference, name: 'a', value: '5' }),
      /A replay cannot change the program: its past is recorded/,
    );
    await assert.rejects(
      dc.evaluateRequest({ expression: 'a = 5', frameId: f.id, context: 'watch' }),
      /A replay cannot change the program/,
    );
    const cont = await stopAfter(dc, () => dc.continueRequest({ threadId: stopped.threadId }));
    assert.equal((await scope(dc, (await topFrame(dc, cont)).id, 'Locals')).i.value, '1');
    const restarted = await stopAfter(dc, () => dc.restartRequest({}));
    const r = await topFrame(dc, restarted);
    assert.equal(r.line, line('area-loop'));
    assert.equal((await scope(dc, r.id, 'Locals')).i.value, '0');
  } finally {
    await dc.stop();
  }
});

test('pause interrupts a long continue and a long reverseContinue', async () => {
  const dc = await adapter();
  try {
    // The long phase is a CPU loop with a syscall every millisecond (about 3 s).
    const stopped = await replayAt(dc, 'print', ['long']);
    const bp = await dc.setBreakpointsRequest({
      source: { path: SOURCE },
      breakpoints: [{ line: line('print') }, { line: line('bump4') }],
    });
    assert.equal(bp.body.breakpoints[1].verified, true);
    const paused = dc.waitForEvent('stopped');
    await dc.continueRequest({ threadId: stopped.threadId });
    await new Promise((r) => setTimeout(r, 600));
    await dc.pauseRequest({ threadId: stopped.threadId });
    const p = (await paused).body;
    assert.equal(p.reason, 'pause');
    const f = await topFrame(dc, p);
    assert.notEqual(f.line, line('bump4'), 'paused before the breakpoint after the loop');
    // Going on reaches the breakpoint the pause kept us from.
    const at = await stopAfter(dc, () => dc.continueRequest({ threadId: p.threadId }));
    assert.equal(at.reason, 'breakpoint');
    assert.equal((await topFrame(dc, at)).line, line('bump4'));
    // Backward through the whole loop, interrupted too.
    const rpaused = dc.waitForEvent('stopped');
    await dc.reverseContinueRequest({ threadId: at.threadId });
    await new Promise((r) => setTimeout(r, 600));
    await dc.pauseRequest({ threadId: at.threadId });
    const rp = (await rpaused).body;
    assert.equal(rp.reason, 'pause');
    const rf = await topFrame(dc, rp);
    assert.notEqual(rf.line, line('print'), 'paused before reaching the breakpoint before the loop');
  } finally {
    await dc.stop();
  }
});

test('live debugging: breakpoints, setVariable, pause and the exit', async () => {
  const dc = await adapter();
  try {
    await launch(dc, { mode: 'live', program: PROGRAM, args: ['spin'] });
    await dc.setBreakpointsRequest({ source: { path: SOURCE }, breakpoints: [{ line: line('area-loop') }] });
    const stopped = await stopAfter(dc, () => dc.configurationDoneRequest());
    assert.equal(stopped.reason, 'breakpoint');
    const f = await topFrame(dc, stopped);
    const scopes = await dc.scopesRequest({ frameId: f.id });
    const locals = scopes.body.scopes.find((s) => s.name === 'Locals');
    const set = await dc.setVariableRequest({ variablesReference: locals.variablesReference, name: 'a', value: '40' });
    assert.equal(set.body.value, '40');
    // Reverse needs a recording.
    await assert.rejects(dc.stepBackRequest({ threadId: stopped.threadId }), /reverse execution needs a recording/);
    await dc.setBreakpointsRequest({ source: { path: SOURCE }, breakpoints: [] });
    // The program spins for minutes: pause stops it.
    const paused = dc.waitForEvent('stopped');
    await dc.continueRequest({ threadId: stopped.threadId });
    await new Promise((r) => setTimeout(r, 500));
    await dc.pauseRequest({ threadId: stopped.threadId });
    const p = (await paused).body;
    assert.equal(p.reason, 'pause');
    const st = await dc.stackTraceRequest({ threadId: p.threadId });
    assert.ok(st.body.stackFrames.some((x) => x.name === 'spin'), JSON.stringify(st.body.stackFrames));
    // The set value took effect: total = 40 + 1*2 + 3*4 + 5*6.
    const main = st.body.stackFrames.find((x) => x.name === 'main');
    assert.equal((await scope(dc, main.id, 'Locals')).total.value, '84');
    const out = dc.outputs.filter((o) => o.category === 'stdout').map((o) => o.output).join('');
    assert.equal(out, 'total 84 counter 6\n');
  } finally {
    await dc.stop();
  }
});

test('live debugging to the end: exited and terminated; disconnect ends the adapter', async () => {
  const dc = await adapter();
  await launch(dc, { mode: 'live', program: PROGRAM });
  const exited = dc.waitForEvent('exited');
  const terminated = dc.waitForEvent('terminated');
  await dc.configurationDoneRequest();
  assert.equal((await exited).body.exitCode, 0);
  await terminated;
  const gone = new Promise((resolve) => dc._adapterProcess.on('exit', (code) => resolve(code)));
  await dc.disconnectRequest();
  assert.equal(await gone, 0, 'the adapter exits after disconnect');
});

test('threads: a stop in each worker, their stacks, the same thread ids after going back', async () => {
  const dc = await adapter();
  try {
    const started = [];
    dc.on('thread', (e) => started.push(e.body));
    await launch(dc, { mode: 'record', program: PROGRAM, args: ['threads'] });
    await dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'work' }] });
    const first = await stopAfter(dc, () => dc.configurationDoneRequest());
    assert.equal(first.reason, 'breakpoint');
    const threads = (await dc.threadsRequest()).body.threads;
    assert.equal(threads.length, 2, JSON.stringify(threads));
    const [main, worker] = threads;
    assert.match(main.name, /^Thread 1 /);
    assert.equal(first.threadId, worker.id, 'the worker stopped, not main');
    assert.ok(started.some((t) => t.reason === 'started' && t.threadId === worker.id), JSON.stringify(started));
    const st = await dc.stackTraceRequest({ threadId: first.threadId });
    assert.deepEqual(st.body.stackFrames.slice(0, 2).map((f) => f.name), ['work', 'worker']);
    assert.equal(st.body.stackFrames[0].line, line('work'));
    assert.equal((await scope(dc, st.body.stackFrames[0].id, 'Arguments')).id.value, '0');
    const mainStack = await dc.stackTraceRequest({ threadId: main.id });
    assert.ok(mainStack.body.stackFrames.some((f) => f.name === 'main'), JSON.stringify(mainStack.body));
    // The second worker: another thread.
    const second = await stopAfter(dc, () => dc.continueRequest({ threadId: first.threadId }));
    assert.notEqual(second.threadId, first.threadId);
    const s2 = await dc.stackTraceRequest({ threadId: second.threadId });
    assert.equal((await scope(dc, s2.body.stackFrames[0].id, 'Arguments')).id.value, '1');
    // Back to the first hit: the same thread, by the same id (its recorded tid).
    const back = await stopAfter(dc, () => dc.reverseContinueRequest({ threadId: second.threadId }));
    assert.equal(back.reason, 'breakpoint');
    assert.equal(back.threadId, first.threadId);
    const b = await dc.stackTraceRequest({ threadId: back.threadId });
    assert.equal((await scope(dc, b.body.stackFrames[0].id, 'Arguments')).id.value, '0');
  } finally {
    await dc.stop();
  }
});

test('hindsight dap --port serves clients over TCP, one after the other', async () => {
  const server = spawn(HINDSIGHT, ['dap', '--port', '0'], { env: process.env, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    const port = await new Promise((resolve, reject) => {
      let text = '';
      server.stderr.on('data', (d) => {
        text += d;
        const m = text.match(/Debug Adapter Protocol on 127\.0\.0\.1:(\d+)/);
        if (m) resolve(Number(m[1]));
      });
      server.on('exit', (code) => reject(new Error(`the server ended (${code}): ${text}`)));
    });
    for (const round of [1, 2]) {
      const dc = new DebugClient(HINDSIGHT, 'dap', 'hindsight');
      dc.outputs = [];
      dc.on('output', (e) => dc.outputs.push(e.body));
      await dc.start(port);
      try {
        const stopped = await replayAt(dc, 'bump3');
        assert.equal(stopped.reason, 'breakpoint', `client ${round}`);
        const f = await topFrame(dc, stopped);
        assert.equal(await repl(dc, 'counter', f.id), '3');
      } finally {
        await dc.stop();
      }
    }
    // An editor stops a server with SIGTERM (the clients above recorded: the recorder's own
    // SIGTERM handler must not outlive their recordings).
    const exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve(signal || code)));
    server.kill('SIGTERM');
    const how = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 10000))]);
    assert.equal(how, 'SIGTERM');
  } finally {
    server.kill('SIGKILL');
  }
});

test('a program compiled from another directory: breakpoints by the path the editor has', async () => {
  const dc = await adapter();
  try {
    await launch(dc, { mode: 'live', program: process.env.DAP_PROGRAM_ELSEWHERE });
    const bp = await dc.setBreakpointsRequest({ source: { path: SOURCE }, breakpoints: [{ line: line('bump3') }] });
    assert.equal(bp.body.breakpoints[0].verified, true, JSON.stringify(bp.body));
    const stopped = await stopAfter(dc, () => dc.configurationDoneRequest());
    const f = await topFrame(dc, stopped);
    assert.equal(f.source.path, SOURCE);
    assert.equal(f.line, line('bump3'));
  } finally {
    await dc.stop();
  }
});

test('C++ containers expand into their elements and entries, as the formatters show them', async () => {
  const cppSource = process.env.DAP_CPP_SOURCE;
  const stopLine = fs.readFileSync(cppSource, 'utf8').split('\n').findIndex((l) => l.includes('// stop')) + 1;
  assert.ok(stopLine > 0, 'no // stop line');
  const dc = await adapter();
  try {
    await launch(dc, { mode: 'record', program: process.env.DAP_CPP_PROGRAM });
    await dc.setBreakpointsRequest({ source: { path: cppSource }, breakpoints: [{ line: stopLine }] });
    const stopped = await stopAfter(dc, () => dc.configurationDoneRequest());
    const frame = await topFrame(dc, stopped);
    const locals = await scope(dc, frame.id, 'Locals');

    assert.equal(locals.v.value, 'std::vector of length 5, capacity 5 = {0, 7, 14, 21, 28}');
    const v = await children(dc, locals.v.variablesReference);
    assert.deepEqual(Object.entries(v).map(([n, x]) => [n, x.value]), [
      ['[0]', '0'], ['[1]', '7'], ['[2]', '14'], ['[3]', '21'], ['[4]', '28'],
    ]);
    // An element is a variable of its own: typed, named by an expression the console takes.
    assert.equal(v['[3]'].type, 'int');
    assert.equal((await repl(dc, `print ${v['[3]'].evaluateName}`, frame.id)).trim(), '$1 = 21');

    // Every one of a thousand elements, not the 200 of `print`.
    const big = await children(dc, locals.big.variablesReference);
    assert.equal(Object.keys(big).length, 1000);
    assert.equal(big['[999]'].value, '6993');

    // Elements that are containers themselves expand in turn.
    const words = await children(dc, locals.words.variablesReference);
    assert.equal(words['[1]'].value, '"beta"');

    // A map's entries are named by their keys.
    const m = await children(dc, locals.m.variablesReference);
    assert.deepEqual(Object.entries(m).map(([n, x]) => [n, x.value]), [['["one"]', '1'], ['["two"]', '2']]);
    const lst = await children(dc, locals.lst.variablesReference);
    assert.deepEqual(Object.values(lst).map((x) => x.value), ['7', '8']);
  } finally {
    await dc.stop();
  }
});
