// A host of loopback A2A test agents built on @a2a-js/sdk's own server (its express handlers, request
// handler, in-memory task store and push sender), for the pytest fixtures in tests/support/js_agents.py.
//
// One process, one port on 127.0.0.1 (printed as the only line on stdout). Agents are made and dropped
// over a small control API, each served under its own path prefix `/<id>/` with its own card, task store
// and recordings, so one process serves every test of a session:
//
//   POST   /_control/agents          {key, bearerOnly, streaming, push, extended, messageOnly, binding, name,
//                                     interfaceUrl, interfaceBase, decoyInterface, cancelAnswer, safePushUrls,
//                                     listTasks}
//                                    -> {id, url}
//   GET    /_control/agents/<id>     -> {received, requests, methods, finished}
//   POST   /_control/agents/<id>/release/<gate>
//   POST   /_control/agents/<id>/cancel-answer {answer}   ('' cancels, 'working' answers the task as it is, 'refuse')
//   POST   /_control/agents/<id>/restart         (every task forgotten, as by a restart with an in-memory store)
//   DELETE /_control/agents/<id>     (releases its gates, ends its running work, drops it)
//
// The command language is the Python test agent's (tests/support/agents.py): `hello ...` echoes,
// `slow N`, `hold <gate>`, `steps <n> <gate> <end>`, `ask`, `auth`, `file`, `bigfile N`, `fail`, `message` (an answer `hold <gate>`
// to a question is worked on silently until released: the task still shows the question), `data` (a data part artifact)
// and `form` (a question with a form data part; an answer with a data part completes echoing it), their JSON shared
// with the Python agent (tests/support/data_parts.json). It exits when
// stdin closes or on SIGTERM/SIGINT, so a killed test run leaves no node process behind.

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

import express from 'express';
import { AgentEvent, DefaultPushNotificationSender, DefaultRequestHandler, InMemoryPushNotificationStore,
  InMemoryTaskStore, UnauthenticatedUser } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { A2A_PROTOCOL_VERSION, AgentCard, Part, Role, TaskState } from '@a2a-js/sdk';

const PDF_BYTES = Buffer.concat([Buffer.from('%PDF-1.4\n% a2aconsole test file\n'), Buffer.alloc(64, 'x')]);
const CARD_PATH = '/.well-known/agent-card.json';
const INTERRUPTED = new Set([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED]);

const PARTS = JSON.parse(readFileSync(new URL('../support/data_parts.json', import.meta.url), 'utf8'));
const dataPart = (value) => ({ content: { $case: 'data', value }, mediaType: '', filename: '', metadata: undefined });
/** JSON with sorted keys and no spaces, as the Python agent writes it. */
const sortedJson = (value) => JSON.stringify(value, Object.keys(value).sort());
const textPart = (value) => ({ content: { $case: 'text', value }, mediaType: 'text/plain', filename: '',
  metadata: undefined });

function agentMessage(text, taskId, contextId) {
  return { messageId: randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts: [textPart(text)],
    metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/** Publishes one task's events, as the Python SDK's TaskUpdater does. */
class Updater {
  constructor(bus, taskId, contextId) {
    Object.assign(this, { bus, taskId, contextId });
  }

  status(state, text, more = []) {
    const message = text === undefined ? undefined : agentMessage(text, this.taskId, this.contextId);
    if (message) message.parts.push(...more);
    this.bus.publish(AgentEvent.statusUpdate({ taskId: this.taskId, contextId: this.contextId,
      status: { state, message, timestamp: new Date().toISOString() }, metadata: undefined }));
  }

  artifact(name, parts) {
    this.bus.publish(AgentEvent.artifactUpdate({ taskId: this.taskId, contextId: this.contextId,
      artifact: { artifactId: randomUUID(), name, description: '', parts, metadata: undefined, extensions: [] },
      append: false, lastChunk: true, metadata: undefined }));
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

const REST_METHODS = [
  ['POST', /^\/message:send$/, 'SendMessage'],
  ['POST', /^\/message:stream$/, 'SendStreamingMessage'],
  ['GET', /^\/tasks\/[^/]+:subscribe$/, 'SubscribeToTask'],
  ['POST', /^\/tasks\/[^/]+:subscribe$/, 'SubscribeToTask'],
  ['POST', /^\/tasks\/[^/]+:cancel$/, 'CancelTask'],
  ['GET', /^\/tasks\/[^/:]+$/, 'GetTask'],
  ['GET', /^\/tasks$/, 'ListTasks'],
  ['POST', /^\/tasks\/[^/]+\/pushNotificationConfigs$/, 'CreateTaskPushNotificationConfig'],
  ['GET', /^\/tasks\/[^/]+\/pushNotificationConfigs$/, 'ListTaskPushNotificationConfigs'],
  ['GET', /^\/tasks\/[^/]+\/pushNotificationConfigs\/[^/]+$/, 'GetTaskPushNotificationConfig'],
  ['DELETE', /^\/tasks\/[^/]+\/pushNotificationConfigs\/[^/]+$/, 'DeleteTaskPushNotificationConfig'],
  ['GET', /^\/extendedAgentCard$/, 'GetExtendedAgentCard'],
];

/** The A2A method a REST call stands for (recorded like a JSON-RPC method), or `REST <verb> <path>`. */
function restMethod(verb, path) {
  const hit = REST_METHODS.find(([v, re]) => v === verb && re.test(path));
  return hit ? hit[2] : `REST ${verb} ${path}`;
}

class TestAgent {
  constructor(id, base, options) {
    this.id = id;
    this.options = options;
    this.received = [];
    this.requests = [];
    this.methods = [];
    // ids of `hold` and `steps` tasks that completed: told once the task store holds the task completed, so a GetTask from
    // then on returns the result (the bus reaches the store after the executor's next line)
    this.finished = [];
    this.finishing = new Set();
    this.gates = new Map(); // name -> {promise, resolve}
    this.work = new Map(); // taskId -> AbortController of its running execute()
    this.url = `${base}/${id}/`;
    this.card = this.makeCard();
    const executor = { execute: (ctx, bus) => this.execute(ctx, bus), cancelTask: (id, bus) => this.cancel(id, bus) };
    const pushStore = options.push ? new InMemoryPushNotificationStore() : undefined;
    const extended = options.extended
      ? { ...this.card, description: `${this.card.description} (extended)`,
        skills: [...this.card.skills, { id: 'secret', name: 'Secret', description: 'Only for key holders',
          tags: ['test'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }] }
      : undefined;
    this.cancelAnswer = options.cancelAnswer || ''; // '' cancels; 'working' answers the task as it is; 'refuse'
    this.makeHandler = () => this.notListing(this.guardingPush(this.cancelAnswering(new DefaultRequestHandler(this.card, this.makeStore(), executor,
      undefined, pushStore, pushStore ? new DefaultPushNotificationSender(pushStore, { timeout: 5000 }) : undefined,
      extended))));
    this.handler = this.makeHandler();
    this.app = this.makeApp();
  }

  makeStore() {
    const store = new InMemoryTaskStore();
    const save = store.save.bind(store);
    store.save = async (task, ...rest) => {
      await save(task, ...rest);
      if (task.status?.state === TaskState.TASK_STATE_COMPLETED && this.finishing.delete(task.id)) {
        this.finished.push(task.id);
      }
    };
    return store;
  }

  /** CancelTask as `cancelAnswer` says: the SDK's own cancel, the task as it is (a cancel only requested), or the
   * SDK's own refusal: this SDK exports no error classes, so its refusal of a finished task (a probe saved for
   * the purpose) gives the error to throw. */
  cancelAnswering(handler) {
    const cancel = handler.cancelTask.bind(handler);
    handler.cancelTask = async (params, context) => {
      if (this.cancelAnswer === 'working') return handler.getTask({ id: params.id, tenant: params.tenant ?? '' }, context);
      if (this.cancelAnswer !== 'refuse') return cancel(params, context);
      await handler.getTask({ id: params.id, tenant: params.tenant ?? '' }, context); // an unknown task: not found
      const probe = `refusal-${randomUUID()}`;
      await handler.taskStore.save({ id: probe, contextId: probe, artifacts: [], history: [], metadata: undefined,
        status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() } },
      context);
      try {
        await cancel({ ...params, id: probe }, context);
      } catch (e) {
        throw new e.constructor('this agent cannot cancel the task now');
      }
      throw new Error('the SDK canceled a completed task');
    };
    return handler;
  }

  /** With `listTasks: false`, ListTasks is refused as unsupported, as an agent without it answers. */
  notListing(handler) {
    if (this.options.listTasks !== false) return handler;
    handler.listTasks = async () => {
      throw new UnsupportedOperationError('this agent does not offer ListTasks');
    };
    return handler;
  }

  /** With `safePushUrls`, CreateTaskPushNotificationConfig refuses a URL on a loopback or private address, as the
   * SSRF guards agents' SDKs now carry do (@a2a-js/sdk 1.3 has none of its own). */
  guardingPush(handler) {
    if (!this.options.safePushUrls) return handler;
    const create = handler.createTaskPushNotificationConfig.bind(handler);
    handler.createTaskPushNotificationConfig = async (params, context) => {
      const host = new URL(params.url || 'http://invalid').hostname.replace(/^\[|\]$/g, '');
      if (/^(localhost$|127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|::1$|0\.)/.test(host)) {
        throw new RequestMalformedError(`push URL refused: ${host} is a loopback or private address`);
      }
      return create(params, context);
    };
    return handler;
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
      name: o.name || 'Loopback test agent', description: o.description || 'A scripted agent for tests',
      supportedInterfaces: [{ url: o.interfaceUrl || (o.interfaceBase ? `${o.interfaceBase}/${this.id}/` : '') ||
        (rest ? `${this.url}rest` : this.url),
        protocolBinding: rest ? 'HTTP+JSON' : 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION }],
      version: '1.0.0',
      capabilities: { streaming: o.streaming !== false, pushNotifications: o.push !== false, extensions: [],
        extendedAgentCard: Boolean(o.extended) },
      securitySchemes: {}, securityRequirements: [],
      defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'],
      skills: [
        { id: 'echo', name: 'Echo', description: 'Repeats what it is told', tags: ['test'],
          examples: ['hello there', 'hello again'], inputModes: [], outputModes: [], securityRequirements: [] },
        { id: 'files', name: 'Files', description: 'Returns a PDF report', tags: ['test'], examples: ['file'],
          inputModes: [], outputModes: [], securityRequirements: [] },
      ],
      documentationUrl: '', signatures: [],
    };
    if (o.key) {
      const [name, scheme] = o.bearerOnly
        ? ['bearer', { $case: 'httpAuthSecurityScheme', value: { scheme: 'bearer', description: '', bearerFormat: '' } }]
        : ['apikey', { $case: 'apiKeySecurityScheme', value: { location: 'header', name: 'X-API-Key', description: '' } }];
      card.securitySchemes[name] = { scheme };
      card.securityRequirements.push({ schemes: { [name]: { list: [] } } });
    }
    if (o.decoyInterface) {
      card.supportedInterfaces.unshift({ ...card.supportedInterfaces[0], url: o.decoyInterface });
    }
    return card;
  }

  makeApp() {
    const app = express.Router();
    app.use((req, res, next) => this.guard(req, res, next));
    // The card handler sends JSON.stringify(card) of the SDK's in-memory card, whose oneofs (security
    // schemes) are {$case, value} objects: give it the card in its proto JSON form instead.
    const card = async () => AgentCard.toJSON(await this.handler.getAgentCard());
    app.use(CARD_PATH, agentCardHandler({ agentCardProvider: card, cache: { maxAge: 0 } }));
    const userBuilder = async (req) => this.user(req);
    app.use('/rest', restHandler({ requestHandler: this.handler, userBuilder }));
    app.use(jsonRpcHandler({ requestHandler: this.handler, userBuilder }));
    return app;
  }

  keyOk(req) {
    const key = this.options.key;
    const h = req.headers;
    return this.options.bearerOnly ? h.authorization === `Bearer ${key}` : h['x-api-key'] === key;
  }

  /** A key holder is an authenticated user: this SDK gives the extended card only to one. */
  user(req) {
    if (!this.options.key || !this.keyOk(req)) return new UnauthenticatedUser();
    return { isAuthenticated: true, userName: 'key-holder' };
  }

  /** Records every request (and a JSON-RPC call's method), and refuses calls without the key (401). */
  guard(req, res, next) {
    this.requests.push([req.method, req.path, { ...req.headers }]);
    if (this.options.key && req.path !== CARD_PATH && !this.keyOk(req)) {
      return res.status(401).json({ error: 'unauthorized' });
    }
    if (req.path.startsWith('/rest/')) {
      this.methods.push(restMethod(req.method, req.path.slice(5)));
      return next();
    }
    if (req.method !== 'POST') return next();
    // read the JSON-RPC body here (the SDK's own parser then finds it read) to record its method
    return express.json()(req, res, (err) => {
      this.methods.push(typeof req.body?.method === 'string' ? req.body.method : '');
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
    const text = msg.parts.filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('\n');
    this.received.push({ text, parts: msg.parts.map((p) => Part.toJSON(p)), metadata: msg.metadata ?? {},
      headers: { ...(ctx.context.state.get('headers') ?? {}) }, taskId: ctx.taskId, contextId: ctx.contextId });
    if (this.options.messageOnly || text.startsWith('message')) {
      const reply = agentMessage(`echo: ${text}`, '', ctx.contextId);
      bus.publish(AgentEvent.message(reply));
      return;
    }
    const existing = ctx.task;
    // this SDK wants a task (or message) as every call's first event, follow-ups included
    bus.publish(AgentEvent.task(existing ?? {
      id: ctx.taskId, contextId: ctx.contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() },
      artifacts: [], history: [msg], metadata: undefined,
    }));
    const up = new Updater(bus, ctx.taskId, ctx.contextId);
    const [word, ...restWords] = text.trim().split(' ');
    const rest = restWords.join(' ');
    const abort = new AbortController();
    this.work.set(ctx.taskId, abort);
    try {
      if (existing && INTERRUPTED.has(existing.status?.state)) {
        // an answer `hold <gate>` is worked on silently (the task still shows the question) until released
        if (word === 'hold') await waitOrAbort(abort.signal, undefined, this.gate(rest).promise);
        const answered = msg.parts.filter((p) => p.content?.$case === 'data').map((p) => p.content.value);
        if (answered.length) { // a filled form: its values echoed, as text and as data
          up.artifact('form answer', [dataPart({ received: answered[0] })]);
          up.status(TaskState.TASK_STATE_COMPLETED, `got form: ${sortedJson(answered[0])}`);
          return;
        }
        up.artifact('answer', [textPart(`got answer: ${text}`)]);
        up.status(TaskState.TASK_STATE_COMPLETED, `got answer: ${text}`);
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
    const S = TaskState;
    if (word === 'slow') {
      up.status(S.TASK_STATE_WORKING, 'working...');
      await waitOrAbort(signal, Number(rest || '1') * 1000);
      up.artifact('result', [textPart('slow result')]);
      up.status(S.TASK_STATE_COMPLETED, 'slow result');
    } else if (word === 'hold') {
      up.status(S.TASK_STATE_WORKING, `holding ${rest}`);
      await waitOrAbort(signal, undefined, this.gate(rest).promise);
      up.artifact('result', [textPart(`released ${rest}`)]);
      this.finishing.add(ctx.taskId);
      up.status(S.TASK_STATE_COMPLETED, `released ${rest}`);
    } else if (word === 'steps') {
      // `steps <n> <gate> <end>`: after <gate>, n status messages "working i/n" (state working), then <end>
      const [n, gate, end] = rest.split(' ');
      up.status(S.TASK_STATE_WORKING, `ready for ${n} steps`);
      await waitOrAbort(signal, undefined, this.gate(gate).promise);
      for (let i = 1; i <= Number(n); i++) up.status(S.TASK_STATE_WORKING, `working ${i}/${n}`);
      await waitOrAbort(signal, undefined, this.gate(end).promise);
      this.finishing.add(ctx.taskId);
      up.status(S.TASK_STATE_COMPLETED, `${n} steps done`);
    } else if (word === 'ask') {
      up.status(S.TASK_STATE_INPUT_REQUIRED, 'Which colour?');
    } else if (word === 'data') {
      up.artifact('order', [dataPart(PARTS.data)]);
      up.status(S.TASK_STATE_COMPLETED, 'here is the order');
    } else if (word === 'form') {
      up.status(S.TASK_STATE_INPUT_REQUIRED, 'Please fill in the expense form', [dataPart(PARTS.form)]);
    } else if (word === 'auth') {
      up.status(S.TASK_STATE_AUTH_REQUIRED, 'Please sign in at the agent');
    } else if (word === 'file') {
      up.artifact('report', [
        { content: { $case: 'raw', value: PDF_BYTES }, mediaType: 'application/pdf', filename: 'report.pdf',
          metadata: undefined },
        { content: { $case: 'url', value: 'https://files.example/r.pdf' }, mediaType: 'application/pdf',
          filename: 'r.pdf', metadata: undefined },
      ]);
      up.status(S.TASK_STATE_COMPLETED, 'here is the report');
    } else if (word === 'bigfile') {
      const size = Number(rest || '1000');
      up.artifact('big', [{ content: { $case: 'raw', value: Buffer.alloc(size, 'b') },
        mediaType: 'application/octet-stream', filename: 'big.bin', metadata: undefined }]);
      up.status(S.TASK_STATE_COMPLETED, 'big file attached');
    } else if (word === 'fail') {
      up.status(S.TASK_STATE_FAILED, 'boom: cannot do that');
    } else {
      up.artifact('result', [textPart(`echo: ${text}`)]);
      up.status(S.TASK_STATE_COMPLETED, `echo: ${text}`);
    }
  }

  async cancel(taskId, bus) {
    this.work.get(taskId)?.abort();
    const task = await this.handler.getTask({ id: taskId, tenant: '' }, undefined).catch(() => undefined);
    new Updater(bus, taskId, task?.contextId ?? '').status(TaskState.TASK_STATE_CANCELED, 'cancelled by request');
  }

  stop() {
    for (const g of this.gates.values()) g.resolve();
    for (const abort of this.work.values()) abort.abort();
  }

  snapshot() {
    return { received: this.received, requests: this.requests, methods: this.methods, finished: this.finished };
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
  control.post('/agents/:id/cancel-answer', (req, res) => {
    const agent = known(req, res);
    if (agent) { agent.cancelAnswer = req.body?.answer ?? ''; res.json({ ok: true }); }
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
