// An ES module: imports, re-exports, classes and every kind of member.
import defaultLogger, { format, createLogger as makeLogger } from './logger.js';
import * as metrics from '../metrics/index.js';
import EventEmitter from 'node:events';
import { default as retry } from 'p-retry';
import './register-globals.js';
export { Queue, Scheduler as TaskScheduler } from './queue.js';
export * from './errors.js';
export * as codecs from './codecs/index.js';
export { default } from './defaults.js';

const logger = makeLogger({ level: 'info' });

export class Subscription {
  #handler;
  static count = 0;
  onError = (err) => {
    logger.error(format(err));
  };

  constructor(topic, handler) {
    this.topic = topic;
    this.#handler = handler;
    Subscription.count++;
  }

  get active() {
    return this.#handler != null;
  }

  set active(value) {
    if (!value) this.#handler = null;
  }

  #invoke(payload) {
    return this.#handler?.(payload);
  }

  deliver(payload) {
    try {
      return this.#invoke(payload);
    } catch (err) {
      this.onError(err);
    }
  }
}

export class EventBus extends EventEmitter {
  static #instance = null;

  static get instance() {
    EventBus.#instance ??= new EventBus();
    return EventBus.#instance;
  }

  constructor() {
    super({ captureRejections: true });
    this.subscriptions = new Map();
  }

  subscribe(topic, handler) {
    const sub = new Subscription(topic, handler);
    this.subscriptions.get(topic)?.push(sub) ?? this.subscriptions.set(topic, [sub]);
    metrics.counter('bus.subscribe').inc();
    return sub;
  }

  async publish(topic, payload) {
    const subs = this.subscriptions.get(topic) ?? [];
    await retry(() => Promise.all(subs.map((s) => s.deliver(payload))), { retries: 3 });
    defaultLogger.debug(`published ${topic}`);
  }

  *[Symbol.iterator]() {
    yield* this.subscriptions.values();
  }

  async *stream(topic) {
    for (const sub of this.subscriptions.get(topic)) {
      yield sub;
    }
  }

  'legacy-publish'(topic) {
    return this.publish(topic, null);
  }

  static create() {
    return new EventBus();
  }

  create() {
    return EventBus.create();
  }
}

// Class expressions bound to a name, and mixins.
const Serializable = (Base) =>
  class extends Base {
    serialize() {
      return JSON.stringify(this);
    }
  };

export const PersistentBus = class extends Serializable(EventBus) {
  async persist(store) {
    await store.save(this.serialize());
  }
};

const NamedExpr = class Inner extends metrics.Reporter {
  report() {
    super.report();
  }
};

export async function connect(url, { timeout = defaultTimeout() } = {}) {
  const { Client } = await import('./transport/client.js');
  const client = new Client(url, timeout);
  await client.open();
  return client;
}

export function* ids(start = 0) {
  let i = start;
  while (true) yield i++;
}

function defaultTimeout() {
  return Number(process.env.BUS_TIMEOUT ?? 5000);
}

export const once = (bus, topic) =>
  new Promise((resolve) => {
    const sub = bus.subscribe(topic, (payload) => {
      sub.active = false;
      resolve(payload);
    });
  });

export let onIdle = function () {},
  onBusy = async function busy() {
    await onIdle();
  };

export default function () {
  return EventBus.instance;
}
