// A host of loopback A2A test agents on @a2a-js/sdk 0.3 (protocol 0.3: a card without supportedInterfaces,
// `kind`-tagged JSON, the 0.3 JSON-RPC method names), built as that SDK's samples build an agent: its express
// handlers, request handler, in-memory task store and push sender. The 1.3 agent's twin (tests/js/agent.js), for
// the same pytest fixtures (tests/support/js_agents.py): the same control API and command language.
//
// One process, one port on 127.0.0.1 (printed as the only line on stdout). Agents are made and dropped over the
// control API, each under its own path prefix `/<id>/` with its own card, task store and recordings:
//
//   POST   /_control/agents          {id, key, bearerOnly, streaming, push, messageOnly, binding, name, description}
//                                    -> {id, url}
//   GET    /_control/agents/<id>     -> {received, requests, methods, wire, finished}
//   POST   /_control/agents/<id>/release/<gate>
//   POST   /_control/agents/<id>/restart         (every task forgotten, as by a restart with an in-memory store)
//   DELETE /_control/agents/<id>     (releases its gates, ends its running work, drops it)
//
// `methods` names each call by its A2A 1.0 method (`tasks/get` is GetTask), as the 1.3 agent records them, so
// a test counts calls alike on both; `wire` has the 0.3 names as sent (an unknown method as it came). Commands:
// `hello ...` echoes, `slow N`, `hold <gate>`, `steps <n> <gate> <end>`, `ask`, `auth`, `file`, `bigfile N`,
// `fail`, `message` (an answer `hold <gate>` to a question is worked on silently until released), and this agent's
// own `later <gate> <n>` (an n-byte file artifact once <gate> is released). It exits when
// stdin closes or on SIGTERM/SIGINT, so a killed test run leaves no node process behind.

import { randomUUID } from 'node:crypto';

import express from 'express';
import { DefaultPushNotificationSender, DefaultRequestHandler, InMemoryPushNotificationStore, InMemoryTaskStore,
  UnauthenticatedUser } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';

const PDF_BYTES = Buffer.concat([Buffer.from('%PDF-1.4\n% a2aconsole test file\n'), Buffer.alloc(64, 'x')]);
const CARD_PATH = '/.well-known/agent-card.json';
const INTERRUPTED = new Set(['input-required', 'auth-required']);
const FINAL = new Set(['completed', 'failed', 'canceled', 'rejected', ...INTERRUPTED]);

// the 0.3 JSON-RPC methods and REST routes by their A2A 1.0 names
const METHODS = {
  'message/send': 'SendMessage',
  'message/stream': 'SendStreamingMessage',
  'tasks/get': 'GetTask',
  'tasks/cancel': 'CancelTask',
  'tasks/resubscribe': 'SubscribeToTask',
  'tasks/pushNotificationConfig/set': 'CreateTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/get': 'GetTaskPushNotificationConfig',
  'tasks/pushNotificationConfig/list': 'ListTaskPushNotificationConfigs',
  'tasks/pushNotificationConfig/delete': 'DeleteTaskPushNotificationConfig',
  'agent/getAuthenticatedExtendedCard': 'GetExtendedAgentCard',
};
const REST_METHODS = [
  ['POST', /^\/v1\/message:send$/, 'SendMessage'],
  ['POST', /^\/v1\/message:stream$/, 'SendStreamingMessage'],
  ['GET', /^\/v1\/tasks\/[^/]+:subscribe$/, 'SubscribeToTask'],
  ['POST', /^\/v1\/tasks\/[^/]+:subscribe$/, 'SubscribeToTask'],
  ['POST', /^\/v1\/tasks\/[^/]+:cancel$/, 'CancelTask'],
  ['GET', /^\/v1\/tasks\/[^/:]+$/, 'GetTask'],
  ['POST', /^\/v1\/tasks\/[^/]+\/pushNotificationConfigs$/, 'CreateTaskPushNotificationConfig'],
  ['GET', /^\/v1\/tasks\/[^/]+\/pushNotificationConfigs$/, 'ListTaskPushNotificationConfigs'],
  ['GET', /^\/v1\/tasks\/[^/]+\/pushNotificationConfigs\/[^/]+$/, 'GetTaskPushNotificationConfig'],
  ['DELETE', /^\/v1\/tasks\/[^/]+\/pushNotificationConfigs\/[^/]+$/, 'DeleteTaskPushNotificationConfig'],
  ['GET', /^\/v1\/card$/, 'GetExtendedAgentCard'],
];

const textPart = (text) => ({ kind: 'text', text });

function agentMessage(text, taskId, contextId) {
  return { kind: 'message', messageId: randomUUID(), role: 'agent', parts: [textPart(text)], taskId, contextId };
}

/** Publishes one task's events, as the SDK's samples do: a terminal or interrupted status is `final`. */
class Updater {
  constructor(bus, taskId, contextId) {
    Object.assign(this, { bus, taskId, contextId });
  }

  status(state, text) {
    const message = text === undefined ? undefined : agentMessage(text, this.taskId, this.contextId);
    this.bus.publish({ kind: 'status-update', taskId: this.taskId, contextId: this.contextId,
      status: { state, message, timestamp: new Date().toISOString() }, final: FINAL.has(state) });
    if (FINAL.has(state)) this.bus.finished();
  }

  artifact(name, parts) {
    this.bus.publish({ kind: 'artifact-update', taskId: this.taskId, contextId: this.contextId,
      artifact: { artifactId: randomUUID(), name, parts }, append: false, lastChunk: true });
  }
}

/** Resolves after `ms`, or rejects with 'aborted' when the task's work is ended (cancel, agent dropped). */
function waitOrAbort(signal, ms, gate) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('aborted'));
    const timer = ms === undefined ? undefined : setTimeout(resolve, ms);
    const onAbort = () => { clearTimeout(timer); reject(new Error('aborted')); };
    signal.addEventListener('abort', onAbort, { once: true });
    gate?.then(() => { signal.removeEventListener('abort', onAbort); resolve(); });
  });
}

class TestAgent {
  constructor(id, base, options) {
    this.id = id;
    this.options = options;
    this.received = [];
    this.requests = [];
    this.methods = [];
    this.wire = [];
    // ids of `hold` and `steps` tasks told once the task store holds them completed (a GetTask from then on
    // returns the result)
    this.finished = [];
    this.finishing = new Set();
    this.gates = new Map(); // name -> {promise, resolve}
    this.work = new Map(); // taskId -> AbortController of its running execute()
    this.url = `${base}/${id}/`;
    this.card = this.makeCard();
    const executor = { execute: (ctx, bus) => this.execute(ctx, bus), cancelTask: (id, bus) => this.cancel(id, bus) };
    this.makeHandler = () => {
      const pushStore = this.options.push === false ? undefined : new InMemoryPushNotificationStore();
      return new DefaultRequestHandler(this.card, this.makeStore(), executor, undefined, pushStore,
        pushStore ? new DefaultPushNotificationSender(pushStore, { timeout: 5000 }) : undefined);
    };
    this.handler = this.makeHandler();
    this.app = this.makeApp();
  }

  makeStore() {
    const store = new InMemoryTaskStore();
    const save = store.save.bind(store);
    store.save = async (task, ...rest) => {
      await save(task, ...rest);
      if (task.status?.state === 'completed' && this.finishing.delete(task.id)) this.finished.push(task.id);
    };
    return store;
  }

  /** A restart with an in-memory store: every task forgotten (running work ends unseen). */
  restart() {
    for (const abort of this.work.values()) abort.abort();
    this.handler = this.makeHandler();
    this.app = this.makeApp();
  }

  makeCard() {
    const o = this.options;
    const rest = o.binding === 'HTTP+JSON';
    const card = {
      protocolVersion: '0.3.0',
      name: o.name || 'Loopback test agent', description: o.description || 'A scripted agent for tests',
      url: rest ? `${this.url}rest` : this.url, preferredTransport: rest ? 'HTTP+JSON' : 'JSONRPC',
      version: '1.0.0',
      capabilities: { streaming: o.streaming !== false, pushNotifications: o.push !== false },
      defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
      skills: [
        { id: 'echo', name: 'Echo', description: 'Repeats what it is told', tags: ['test'],
          examples: ['hello there', 'hello again'] },
        { id: 'files', name: 'Files', description: 'Returns a PDF report', tags: ['test'], examples: ['file'] },
      ],
    };
    if (o.key) {
      const [name, scheme] = o.bearerOnly
        ? ['bearer', { type: 'http', scheme: 'bearer' }]
        : ['apikey', { type: 'apiKey', in: 'header', name: 'X-API-Key' }];
      card.securitySchemes = { [name]: scheme };
      card.security = [{ [name]: [] }];
    }
    return card;
  }

  makeApp() {
    const app = express.Router();
    app.use((req, res, next) => this.guard(req, res, next));
    app.use(CARD_PATH, agentCardHandler({ agentCardProvider: this.handler }));
    const userBuilder = async () => new UnauthenticatedUser();
    app.use('/rest', restHandler({ requestHandler: this.handler, userBuilder }));
    app.use(jsonRpcHandler({ requestHandler: this.handler, userBuilder }));
    return app;
  }

  keyOk(req) {
    const key = this.options.key;
    const h = req.headers;
    return this.options.bearerOnly ? h.authorization === `Bearer ${key}` : h['x-api-key'] === key;
  }

  /** Records every request (and a call's method), and refuses calls without the key (401). */
  guard(req, res, next) {
    this.requests.push([req.method, req.path, { ...req.headers }]);
    if (this.options.key && req.path !== CARD_PATH && !this.keyOk(req)) {
      return res.status(401).json({ error: 'unauthorized' });
    }
    if (req.path.startsWith('/rest/')) {
      const path = req.path.slice(5);
      const hit = REST_METHODS.find(([v, re]) => v === req.method && re.test(path));
      this.wire.push(`${req.method} ${path}`);
      this.methods.push(hit ? hit[2] : `REST ${req.method} ${path}`);
      return next();
    }
    if (req.method !== 'POST') return next();
    // read the JSON-RPC body here (the SDK's own parser then finds it read) to record its method
    return express.json()(req, res, (err) => {
      const method = typeof req.body?.method === 'string' ? req.body.method : '';
      this.wire.push(method);
      this.methods.push(METHODS[method] ?? method);
      next(err);
    });
  }

  gate(name) {
    let g = this.gates.get(name);
    if (!g) {
      let resolve;
      const promise = new Promise((r) => { resolve = r; });
      g = { promise, resolve };
      this.gates.set(name, g);
    }
    return g;
  }

  async execute(ctx, bus) {
    const msg = ctx.userMessage;
    const text = msg.parts.filter((p) => p.kind === 'text').map((p) => p.text).join('\n');
    this.received.push({ text, parts: msg.parts, metadata: msg.metadata ?? {}, headers: {},
      taskId: ctx.taskId, contextId: ctx.contextId });
    if (this.options.messageOnly || text.startsWith('message')) {
      bus.publish(agentMessage(`echo: ${text}`, undefined, ctx.contextId));
      bus.finished();
      return;
    }
    const existing = ctx.task;
    // as the SDK's samples do: a new task is published first (submitted), a follow-up's task is the store's
    if (!existing) {
      bus.publish({ kind: 'task', id: ctx.taskId, contextId: ctx.contextId,
        status: { state: 'submitted', timestamp: new Date().toISOString() }, history: [msg], artifacts: [] });
    }
    const up = new Updater(bus, ctx.taskId, ctx.contextId);
    const [word, ...restWords] = text.trim().split(' ');
    const rest = restWords.join(' ');
    const abort = new AbortController();
    this.work.set(ctx.taskId, abort);
    try {
      if (existing && INTERRUPTED.has(existing.status?.state)) {
        // an answer `hold <gate>` is worked on silently (the task still shows the question) until released
        if (word === 'hold') await waitOrAbort(abort.signal, undefined, this.gate(rest).promise);
        up.artifact('answer', [textPart(`got answer: ${text}`)]);
        up.status('completed', `got answer: ${text}`);
        return;
      }
      await this.run(word, rest, text, up, abort.signal, ctx);
    } catch (e) {
      if (e.message !== 'aborted') throw e;
    } finally {
      this.work.delete(ctx.taskId);
    }
  }

  async run(word, rest, text, up, signal, ctx) {
    if (word === 'slow') {
      up.status('working', 'working...');
      await waitOrAbort(signal, Number(rest || '1') * 1000);
      up.artifact('result', [textPart('slow result')]);
      up.status('completed', 'slow result');
    } else if (word === 'hold') {
      up.status('working', `holding ${rest}`);
      await waitOrAbort(signal, undefined, this.gate(rest).promise);
      up.artifact('result', [textPart(`released ${rest}`)]);
      this.finishing.add(ctx.taskId);
      up.status('completed', `released ${rest}`);
    } else if (word === 'later') {
      // `later <gate> <n>`: working until <gate>, then a file artifact of n bytes of `later\n` (no base64 text,
      // which HTTP+JSON could not tell from a2a-sdk 0.3's encoding: lenient.raw_file_bytes)
      const [gate, size] = rest.split(' ');
      up.status('working', `holding ${gate}`);
      await waitOrAbort(signal, undefined, this.gate(gate).promise);
      up.artifact('big', [{ kind: 'file', file: { bytes: Buffer.alloc(Number(size), 'later\n').toString('base64'),
        mimeType: 'application/octet-stream', name: 'big.bin' } }]);
      up.status('completed', 'big file attached');
    } else if (word === 'steps') {
      // `steps <n> <gate> <end>`: after <gate>, n status messages "working i/n" (state working), then <end>
      const [n, gate, end] = rest.split(' ');
      up.status('working', `ready for ${n} steps`);
      await waitOrAbort(signal, undefined, this.gate(gate).promise);
      for (let i = 1; i <= Number(n); i++) up.status('working', `working ${i}/${n}`);
      await waitOrAbort(signal, undefined, this.gate(end).promise);
      this.finishing.add(ctx.taskId);
      up.status('completed', `${n} steps done`);
    } else if (word === 'ask') {
      up.status('input-required', 'Which colour?');
    } else if (word === 'auth') {
      up.status('auth-required', 'Please sign in at the agent');
    } else if (word === 'file') {
      up.artifact('report', [
        { kind: 'file', file: { bytes: PDF_BYTES.toString('base64'), mimeType: 'application/pdf', name: 'report.pdf' } },
        { kind: 'file', file: { uri: 'https://files.example/r.pdf', mimeType: 'application/pdf', name: 'r.pdf' } },
      ]);
      up.status('completed', 'here is the report');
    } else if (word === 'bigfile') {
      const size = Number(rest || '1000');
      up.artifact('big', [{ kind: 'file', file: { bytes: Buffer.alloc(size, 'b').toString('base64'),
        mimeType: 'application/octet-stream', name: 'big.bin' } }]);
      up.status('completed', 'big file attached');
    } else if (word === 'fail') {
      up.status('failed', 'boom: cannot do that');
    } else {
      up.artifact('result', [textPart(`echo: ${text}`)]);
      up.status('completed', `echo: ${text}`);
    }
  }

  /** The SDK calls this only while the task's execution runs; it then requires the task canceled by the end. */
  async cancel(taskId, bus) {
    this.work.get(taskId)?.abort();
    const task = await this.handler.taskStore.load(taskId);
    new Updater(bus, taskId, task?.contextId ?? '').status('canceled', 'cancelled by request');
  }

  stop() {
    for (const g of this.gates.values()) g.resolve();
    for (const abort of this.work.values()) abort.abort();
  }

  snapshot() {
    const { received, requests, methods, wire, finished } = this;
    return { received, requests, methods, wire, finished };
  }
}

function main() {
  const agents = new Map();
  const app = express();
  let base = '';
  const control = express.Router();
  control.use(express.json());
  control.post('/agents', (req, res) => {
    // a given id (a test restarting the host on its port keeps the agent's URL), else a new one
    const id = typeof req.body?.id === 'string' && req.body.id ? req.body.id : randomUUID().slice(0, 12);
    const agent = new TestAgent(id, base, req.body ?? {});
    agents.set(id, agent);
    res.json({ id, url: agent.url });
  });
  const known = (req, res) => {
    const agent = agents.get(req.params.id);
    if (!agent) res.status(404).json({ error: `no agent ${req.params.id}` });
    return agent;
  };
  control.get('/agents/:id', (req, res) => {
    const agent = known(req, res);
    if (agent) res.json(agent.snapshot());
  });
  control.post('/agents/:id/release/:gate', (req, res) => {
    const agent = known(req, res);
    if (agent) { agent.gate(req.params.gate).resolve(); res.json({ ok: true }); }
  });
  control.post('/agents/:id/restart', (req, res) => {
    const agent = known(req, res);
    if (agent) { agent.restart(); res.json({ ok: true }); }
  });
  control.delete('/agents/:id', (req, res) => {
    const agent = known(req, res);
    if (agent) { agent.stop(); agents.delete(agent.id); res.json({ ok: true }); }
  });
  app.use('/_control', control);
  app.use('/:id', (req, res, next) => {
    const agent = agents.get(req.params.id);
    if (!agent) return res.status(404).json({ error: 'no such agent' });
    return agent.app(req, res, next);
  });

  const server = app.listen(Number(process.env.A2A_TEST_PORT || 0), '127.0.0.1', () => {
    const { port } = server.address();
    base = `http://127.0.0.1:${port}`;
    process.stdout.write(`${port}\n`);
  });
  const stop = () => {
    for (const agent of agents.values()) agent.stop();
    server.closeAllConnections();
    server.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.resume();
}

main();
